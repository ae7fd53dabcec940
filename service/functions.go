package service

import "github.com/lakehold/catalog/service/functions"

// Functions is the function room (functions.Functions, whose methods say
// what they return when). Listing is the tables room's.
func (s *Service) Functions() *functions.Functions { return s.fns }

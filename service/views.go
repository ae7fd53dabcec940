package service

import (
	"github.com/lakehold/catalog/service/views"
)

// Views are created, loaded, replaced and dropped by views.Views, which
// callers reach through Service.Views. Listing and renaming are shared
// with tables: the tables room's List and Rename (Service.Tables).

// Views is the view room (views.Views, whose methods say what they
// return when).
func (s *Service) Views() *views.Views { return s.views }

// CreateViewInput is a createView request (views.CreateInput).
type CreateViewInput = views.CreateInput

// ViewResult is what view routes return (views.Result).
type ViewResult = views.Result

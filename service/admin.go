package service

import (
	"github.com/lakehold/catalog/service/access"
)

// Roles, grants, built-in principals and their tokens are managed by
// access.Admin, which callers reach through Service.Admin.

// Access management types (package access).
type (
	Role          = access.Role
	Grant         = access.Grant
	TokenIssuer   = access.TokenIssuer
	PrincipalInfo = access.PrincipalInfo
	IssuedToken   = access.IssuedToken
)

// Limits and names of access management (package access).
const (
	DefaultMaxSessionAge = access.DefaultMaxSessionAge
	BootstrapRole        = access.BootstrapRole
)

// ErrSessionExpired is wrapped by the RefreshToken error of a session older
// than Options.MaxSessionAge.
var ErrSessionExpired = access.ErrSessionExpired

// Admin manages roles, grants, built-in principals and their tokens
// (access.Admin, whose methods say what they return when).
func (s *Service) Admin() *access.Admin { return s.admin }

package service

import (
	"context"
	"time"

	"github.com/lakehold/catalog/service/access"
)

// Roles, grants, built-in principals and their tokens are managed by
// access.Admin; these names and methods keep the service's API whole.

// Access management types (package access).
type (
	Role                 = access.Role
	Grant                = access.Grant
	TokenIssuer          = access.TokenIssuer
	PrincipalInfo        = access.PrincipalInfo
	PrincipalCredentials = access.PrincipalCredentials
	IssuedToken          = access.IssuedToken
)

// Limits and names of access management (package access).
const (
	MaxPrincipalNameBytes = access.MaxPrincipalNameBytes
	DefaultMaxSessionAge  = access.DefaultMaxSessionAge
	BootstrapRole         = access.BootstrapRole
)

// ErrSessionExpired is wrapped by the RefreshToken error of a session older
// than Options.MaxSessionAge.
var ErrSessionExpired = access.ErrSessionExpired

// CreatePrincipal creates a built-in service principal (access.Admin.CreatePrincipal).
func (s *Service) CreatePrincipal(ctx context.Context, name string) (*PrincipalCredentials, error) {
	return s.admin.CreatePrincipal(ctx, name)
}

// ListPrincipals returns one page of principals (access.Admin.ListPrincipals).
func (s *Service) ListPrincipals(ctx context.Context, page Page) ([]PrincipalInfo, string, error) {
	return s.admin.ListPrincipals(ctx, page.store())
}

// GetPrincipal describes one principal (access.Admin.GetPrincipal).
func (s *Service) GetPrincipal(ctx context.Context, name string) (*PrincipalInfo, error) {
	return s.admin.GetPrincipal(ctx, name)
}

// RotatePrincipalSecret replaces a principal's secret (access.Admin.RotatePrincipalSecret).
func (s *Service) RotatePrincipalSecret(ctx context.Context, name string) (*PrincipalCredentials, error) {
	return s.admin.RotatePrincipalSecret(ctx, name)
}

// DeletePrincipal removes a principal (access.Admin.DeletePrincipal).
func (s *Service) DeletePrincipal(ctx context.Context, name string) error {
	return s.admin.DeletePrincipal(ctx, name)
}

// PrincipalGeneration returns a principal's id and secret generation for the token check (access.Admin.PrincipalGeneration).
func (s *Service) PrincipalGeneration(ctx context.Context, name string) (string, int64, error) {
	return s.admin.PrincipalGeneration(ctx, name)
}

// IssueToken checks client credentials and issues a token (access.Admin.IssueToken).
func (s *Service) IssueToken(ctx context.Context, clientID, clientSecret string) (*IssuedToken, error) {
	return s.admin.IssueToken(ctx, clientID, clientSecret)
}

// RefreshToken issues a fresh token in the same session (access.Admin.RefreshToken).
func (s *Service) RefreshToken(ctx context.Context, name string, authTime time.Time) (*IssuedToken, error) {
	return s.admin.RefreshToken(ctx, name, authTime)
}

// CreateRole creates a role (access.Admin.CreateRole).
func (s *Service) CreateRole(ctx context.Context, name, description string) (*Role, error) {
	return s.admin.CreateRole(ctx, name, description)
}

// GetRole returns a role (access.Admin.GetRole).
func (s *Service) GetRole(ctx context.Context, name string) (*Role, error) {
	return s.admin.GetRole(ctx, name)
}

// ListRoles returns every role (access.Admin.ListRoles).
func (s *Service) ListRoles(ctx context.Context) ([]*Role, error) {
	return s.admin.ListRoles(ctx)
}

// DeleteRole removes a role with its grants and assignments (access.Admin.DeleteRole).
func (s *Service) DeleteRole(ctx context.Context, name string) error {
	return s.admin.DeleteRole(ctx, name)
}

// GrantPrivilege grants a privilege to a role (access.Admin.GrantPrivilege).
func (s *Service) GrantPrivilege(ctx context.Context, role string, g Grant) error {
	return s.admin.GrantPrivilege(ctx, role, g)
}

// RevokePrivilege revokes a grant (access.Admin.RevokePrivilege).
func (s *Service) RevokePrivilege(ctx context.Context, role string, g Grant) error {
	return s.admin.RevokePrivilege(ctx, role, g)
}

// ListGrants returns a role's grants (access.Admin.ListGrants).
func (s *Service) ListGrants(ctx context.Context, role string) ([]Grant, error) {
	return s.admin.ListGrants(ctx, role)
}

// AssignRole assigns a role (access.Admin.AssignRole).
func (s *Service) AssignRole(ctx context.Context, role string, a Assignee) error {
	return s.admin.AssignRole(ctx, role, a)
}

// UnassignRole removes an assignment (access.Admin.UnassignRole).
func (s *Service) UnassignRole(ctx context.Context, role string, a Assignee) error {
	return s.admin.UnassignRole(ctx, role, a)
}

// ListAssignments returns a role's assignees (access.Admin.ListAssignments).
func (s *Service) ListAssignments(ctx context.Context, role string) ([]Assignee, error) {
	return s.admin.ListAssignments(ctx, role)
}

// EnsureBootstrapAdmin creates the server-admin role when missing and assigns it (access.Admin.EnsureBootstrapAdmin).
func (s *Service) EnsureBootstrapAdmin(ctx context.Context, a Assignee) error {
	return s.admin.EnsureBootstrapAdmin(ctx, a)
}

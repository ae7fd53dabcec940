package store

import (
	"context"
	"fmt"
	"time"
)

// ErrNoSuchRole is returned when the named role does not exist.
var ErrNoSuchRole = fmt.Errorf("%w: role", ErrNotFound)

// Assignee is who a role is assigned to: Kind "builtin" (a built-in
// service principal's name), "oidc" (an OIDC subject) or "group" (an OIDC
// group).
type Assignee struct {
	Kind string
	Name string
}

// Role is a named set of grants.
type Role struct {
	ID          string
	Name        string
	Description string
	CreatedAt   time.Time
}

// Securable names what a grant is on. Kind is "server", "warehouse",
// "namespace", "table" or "view"; fields a kind does not use are empty.
type Securable struct {
	Kind      string
	Warehouse string
	Namespace []string
	Name      string
}

// Grant is one privilege a role holds on a securable.
type Grant struct {
	Privilege string
	On        Securable
}

// AccessQuery asks which of a set of privileges the assignees hold on a
// securable, directly or through a container of it.
type AccessQuery struct {
	Assignees  []Assignee
	Privileges []string
	On         Securable
}

// Access is the answer to an AccessQuery.
type Access struct {
	// Held are the asked privileges held on the securable or a container.
	Held []string
	// Visible is set when the assignees hold any privilege on the
	// securable, on a container of it, or on anything below it.
	Visible bool
}

// Visibility restricts a listing to what the assignees may see: a
// namespace when they hold a privilege on it, on a container of it or on
// anything below it; a table or view when they hold one on it or on a
// container.
type Visibility struct {
	Assignees []Assignee
}

// RBACStore keeps roles, their grants and their assignments.
type RBACStore interface {
	// RoleCreate inserts a role (ID and CreatedAt are filled in);
	// *AlreadyExistsError when the name is taken.
	RoleCreate(ctx context.Context, r *Role) error
	// RoleGet returns a role or ErrNoSuchRole.
	RoleGet(ctx context.Context, name string) (*Role, error)
	// RoleList returns every role ordered by name.
	RoleList(ctx context.Context) ([]*Role, error)
	// RoleDelete removes a role with its grants and assignments;
	// ErrNoSuchRole when missing.
	RoleDelete(ctx context.Context, name string) error
	// GrantAdd adds a grant to a role (a grant it holds already is a
	// no-op); ErrNoSuchRole when the role is missing.
	GrantAdd(ctx context.Context, role string, g Grant) error
	// GrantRevoke removes a grant; ErrNoSuchRole when the role is missing,
	// ErrNotFound when the role does not hold the grant.
	GrantRevoke(ctx context.Context, role string, g Grant) error
	// GrantList returns a role's grants; ErrNoSuchRole when it is missing.
	GrantList(ctx context.Context, role string) ([]Grant, error)
	// AssignmentAdd assigns a role (assigning twice is a no-op);
	// ErrNoSuchRole when the role is missing.
	AssignmentAdd(ctx context.Context, role string, a Assignee) error
	// AssignmentRemove removes an assignment; ErrNoSuchRole when the role
	// is missing, ErrNotFound when it is not assigned to a.
	AssignmentRemove(ctx context.Context, role string, a Assignee) error
	// AssignmentList returns a role's assignees; ErrNoSuchRole when it is
	// missing.
	AssignmentList(ctx context.Context, role string) ([]Assignee, error)
	// CheckAccess answers q with one query.
	CheckAccess(ctx context.Context, q AccessQuery) (Access, error)
}

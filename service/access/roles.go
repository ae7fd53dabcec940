package access

import (
	"context"
	"errors"
	"time"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/store"
)

// Role is a named set of grants.
type Role struct {
	Name        string
	Description string
	CreatedAt   time.Time
}

// Grant is a privilege on a securable.
type Grant struct {
	Privilege Privilege
	On        Resource
}

var serverResource = Resource{Kind: ResourceServer}

// roleErr maps the store errors of role operations.
func roleErr(err error, role string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNoSuchRole):
		return fault.Wrap(fault.NotFound, err, "Role does not exist: %s", role)
	case errors.Is(err, store.ErrAlreadyExists):
		return fault.Wrap(fault.AlreadyExists, err, "Role already exists: %s", role)
	}
	return storefault.Of(err, "")
}

// checkRoleName refuses empty or oversized role names (400).
func checkRoleName(name string) error {
	if name == "" || len(name) > 255 || ident.ValidateNamespace([]string{name}) != nil {
		return fault.New(fault.BadRequest, "Invalid role name: 1 to 255 printable characters")
	}
	return nil
}

// CreateRole creates a role: 403/404 without manage-grants on the server,
// 400 for a bad name, 409 when it exists.
func (m *Admin) CreateRole(ctx context.Context, name, description string) (*Role, error) {
	if err := m.authorize(ctx, PrivManageGrants, serverResource); err != nil {
		return nil, err
	}
	if err := checkRoleName(name); err != nil {
		return nil, err
	}
	r := &store.Role{Name: name, Description: description}
	if err := m.store.RoleCreate(ctx, r); err != nil {
		return nil, roleErr(err, name)
	}
	return &Role{Name: r.Name, Description: r.Description, CreatedAt: r.CreatedAt}, nil
}

// GetRole returns a role: 404 when missing, 403 without manage-grants.
func (m *Admin) GetRole(ctx context.Context, name string) (*Role, error) {
	if err := m.authorize(ctx, PrivManageGrants, serverResource); err != nil {
		return nil, err
	}
	r, err := m.store.RoleGet(ctx, name)
	if err != nil {
		return nil, roleErr(err, name)
	}
	return &Role{Name: r.Name, Description: r.Description, CreatedAt: r.CreatedAt}, nil
}

// ListRoles returns every role by name; 403 without manage-grants.
func (m *Admin) ListRoles(ctx context.Context) ([]*Role, error) {
	if err := m.authorize(ctx, PrivManageGrants, serverResource); err != nil {
		return nil, err
	}
	rs, err := m.store.RoleList(ctx)
	if err != nil {
		return nil, storefault.Of(err, "")
	}
	out := make([]*Role, len(rs))
	for i, r := range rs {
		out[i] = &Role{Name: r.Name, Description: r.Description, CreatedAt: r.CreatedAt}
	}
	return out, nil
}

// DeleteRole removes a role with its grants and assignments: 404 when
// missing, 403 without manage-grants.
func (m *Admin) DeleteRole(ctx context.Context, name string) error {
	if err := m.authorize(ctx, PrivManageGrants, serverResource); err != nil {
		return err
	}
	return roleErr(m.store.RoleDelete(ctx, name), name)
}

// GrantPrivilege adds a grant to a role: 400 for an invalid grant (see
// CheckGrant), 404 for a missing role, 403 without manage-grants. Granting
// twice is not an error. The securable need not exist yet.
func (m *Admin) GrantPrivilege(ctx context.Context, role string, g Grant) error {
	if err := m.authorize(ctx, PrivManageGrants, serverResource); err != nil {
		return err
	}
	if err := CheckGrant(g.Privilege, g.On); err != nil {
		return err
	}
	return roleErr(m.store.GrantAdd(ctx, role, storeGrant(g)), role)
}

// RevokePrivilege removes a grant: 400 for an invalid grant, 404 for a
// missing role or a grant the role does not hold, 403 without
// manage-grants.
func (m *Admin) RevokePrivilege(ctx context.Context, role string, g Grant) error {
	if err := m.authorize(ctx, PrivManageGrants, serverResource); err != nil {
		return err
	}
	if err := CheckGrant(g.Privilege, g.On); err != nil {
		return err
	}
	err := m.store.GrantRevoke(ctx, role, storeGrant(g))
	if err != nil && !errors.Is(err, store.ErrNoSuchRole) && errors.Is(err, store.ErrNotFound) {
		return fault.Wrap(fault.NotFound, err, "Role %s does not hold %s on %s", role, g.Privilege, g.On)
	}
	return roleErr(err, role)
}

// ListGrants returns a role's grants: 404 for a missing role, 403 without
// manage-grants.
func (m *Admin) ListGrants(ctx context.Context, role string) ([]Grant, error) {
	if err := m.authorize(ctx, PrivManageGrants, serverResource); err != nil {
		return nil, err
	}
	gs, err := m.store.GrantList(ctx, role)
	if err != nil {
		return nil, roleErr(err, role)
	}
	out := make([]Grant, len(gs))
	for i, g := range gs {
		out[i] = Grant{Privilege: Privilege(g.Privilege), On: Resource{
			Kind: ResourceKind(g.On.Kind), Warehouse: g.On.Warehouse, Namespace: g.On.Namespace, Name: g.On.Name}}
	}
	return out, nil
}

// AssignRole assigns a role: 400 for an invalid assignee, 404 for a
// missing role, 403 without manage-grants. Assigning twice is not an error.
func (m *Admin) AssignRole(ctx context.Context, role string, a Assignee) error {
	if err := m.authorize(ctx, PrivManageGrants, serverResource); err != nil {
		return err
	}
	if err := CheckAssignee(a); err != nil {
		return err
	}
	return roleErr(m.store.AssignmentAdd(ctx, role, store.Assignee(a)), role)
}

// UnassignRole removes an assignment: 400 for an invalid assignee, 404 for
// a missing role or assignment, 403 without manage-grants.
func (m *Admin) UnassignRole(ctx context.Context, role string, a Assignee) error {
	if err := m.authorize(ctx, PrivManageGrants, serverResource); err != nil {
		return err
	}
	if err := CheckAssignee(a); err != nil {
		return err
	}
	err := m.store.AssignmentRemove(ctx, role, store.Assignee(a))
	if err != nil && !errors.Is(err, store.ErrNoSuchRole) && errors.Is(err, store.ErrNotFound) {
		return fault.Wrap(fault.NotFound, err, "Role %s is not assigned to %s:%s", role, a.Kind, a.Name)
	}
	return roleErr(err, role)
}

// ListAssignments returns who a role is assigned to: 404 for a missing
// role, 403 without manage-grants.
func (m *Admin) ListAssignments(ctx context.Context, role string) ([]Assignee, error) {
	if err := m.authorize(ctx, PrivManageGrants, serverResource); err != nil {
		return nil, err
	}
	as, err := m.store.AssignmentList(ctx, role)
	if err != nil {
		return nil, roleErr(err, role)
	}
	out := make([]Assignee, len(as))
	for i, a := range as {
		out[i] = Assignee(a)
	}
	return out, nil
}

func storeGrant(g Grant) store.Grant {
	return store.Grant{Privilege: string(g.Privilege), On: SecurableOf(g.On)}
}

// BootstrapRole is the role EnsureBootstrapAdmin creates.
const BootstrapRole = "server-admin"

// EnsureBootstrapAdmin creates role server-admin holding every privilege
// on the server, when missing, and assigns it to a. It is idempotent and
// safe to run from several replicas at once. It is the operator's path (no
// authorization); 400 for an invalid assignee, 503 when the database is
// unavailable.
func (m *Admin) EnsureBootstrapAdmin(ctx context.Context, a Assignee) error {
	if err := CheckAssignee(a); err != nil {
		return err
	}
	r := &store.Role{Name: BootstrapRole, Description: "every privilege on the server (bootstrap)"}
	if err := m.store.RoleCreate(ctx, r); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
		return storefault.Of(err, "")
	}
	for _, p := range AllPrivileges() {
		if err := m.store.GrantAdd(ctx, BootstrapRole, store.Grant{Privilege: string(p), On: store.Securable{Kind: string(ResourceServer)}}); err != nil {
			return storefault.Of(err, "")
		}
	}
	if err := m.store.AssignmentAdd(ctx, BootstrapRole, store.Assignee(a)); err != nil {
		return storefault.Of(err, "")
	}
	return nil
}

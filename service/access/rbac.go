package access

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/store"
)

// RBAC is the role-based Authorizer: principals hold the privileges that
// the roles assigned to them grant, on a securable or on any container of
// it. Every decision is one indexed query against the catalog database;
// without a decision cache a grant or revoke is seen by every replica at
// once.
type RBAC struct {
	store store.RBACStore
	cache *expirable.LRU[string, store.Access]
}

// NewRBAC returns the RBAC authorizer over st, without a decision cache.
func NewRBAC(st store.RBACStore) *RBAC { return &RBAC{store: st} }

// WithDecisionCache keeps each answer of the database for ttl in this
// process (at most 8192 of them), so that a client loading the same table
// over and over costs one query per ttl. Grants and revokes then take up
// to ttl to apply on every replica: keep ttl at a second or two. ttl <= 0
// leaves the cache off.
func (a *RBAC) WithDecisionCache(ttl time.Duration) *RBAC {
	if ttl > 0 {
		a.cache = expirable.NewLRU[string, store.Access](8192, nil, ttl)
	}
	return a
}

// checkAccess asks the store, through the decision cache when there is one.
func (a *RBAC) checkAccess(ctx context.Context, q store.AccessQuery) (store.Access, error) {
	if a.cache == nil {
		return a.store.CheckAccess(ctx, q)
	}
	var b strings.Builder
	for _, x := range q.Assignees {
		b.WriteString(x.Kind + "\x00" + x.Name + "\x00")
	}
	b.WriteString("\x01" + strings.Join(q.Privileges, "\x00") + "\x01" + q.On.Kind + "\x00" + q.On.Warehouse +
		"\x00" + strings.Join(q.On.Namespace, "\x1f") + "\x00" + q.On.Name)
	key := b.String()
	if acc, ok := a.cache.Get(key); ok {
		return acc, nil
	}
	acc, err := a.store.CheckAccess(ctx, q)
	if err == nil {
		a.cache.Add(key, acc)
	}
	return acc, err
}

// ListFilter is implemented by authorizers that can restrict listings to
// what a principal may see; the service passes the filter to the store so
// that one query answers a filtered page.
type ListFilter interface {
	// Visibility returns the store filter for p's listings, or nil when p
	// sees everything.
	Visibility(p identity.Principal) *store.Visibility
}

// Assignee kinds: who a role can be assigned to.
const (
	AssigneeBuiltin = "builtin" // a built-in service principal, by name
	AssigneeOIDC    = "oidc"    // an OIDC subject
	AssigneeGroup   = "group"   // an OIDC group
)

// assigneesOf lists what p is known as to role assignments: nothing for an
// anonymous caller.
func assigneesOf(p identity.Principal) []store.Assignee {
	switch p.Source {
	case identity.SourceBuiltin:
		return []store.Assignee{{Kind: AssigneeBuiltin, Name: p.Subject}}
	case identity.SourceOIDC:
		out := []store.Assignee{{Kind: AssigneeOIDC, Name: p.Subject}}
		for _, g := range p.Groups {
			out = append(out, store.Assignee{Kind: AssigneeGroup, Name: g})
		}
		return out
	}
	return nil
}

// Visibility implements ListFilter: the CLI operator sees everything.
func (a *RBAC) Visibility(p identity.Principal) *store.Visibility {
	if p.Source == identity.SourceLocal {
		return nil
	}
	return &store.Visibility{Assignees: assigneesOf(p)}
}

// Authorize implements Authorizer. It fails with the resource's not-found
// error when p holds nothing on r, a container of it or anything below it,
// with fault.Forbidden when p may see r but lacks priv, and with 503 when
// the database cannot answer.
func (a *RBAC) Authorize(ctx context.Context, p identity.Principal, priv Privilege, r Resource) error {
	if p.Source == identity.SourceLocal {
		return nil
	}
	r = normalizeResource(r)
	acc, err := a.checkAccess(ctx, store.AccessQuery{
		Assignees: assigneesOf(p), Privileges: []string{string(priv)}, On: SecurableOf(r),
	})
	if err != nil {
		return storefault.Of(err, r.Warehouse)
	}
	if len(acc.Held) > 0 {
		return nil
	}
	if !acc.Visible {
		return hiddenErr(r)
	}
	return fault.New(fault.Forbidden, "Forbidden: %s lacks privilege %s on %s", p, priv, r)
}

// TableAccess implements Authorizer: read-write with table-write-data,
// read with table-read-data; fault.Forbidden when p may see the table but
// holds neither, its not-found error when p may not see it.
func (a *RBAC) TableAccess(ctx context.Context, p identity.Principal, table Resource) (credentials.AccessLevel, error) {
	if p.Source == identity.SourceLocal {
		return credentials.AccessReadWrite, nil
	}
	acc, err := a.checkAccess(ctx, store.AccessQuery{
		Assignees:  assigneesOf(p),
		Privileges: []string{string(PrivTableWriteData), string(PrivTableReadData)},
		On:         SecurableOf(table),
	})
	switch {
	case err != nil:
		return "", storefault.Of(err, table.Warehouse)
	case slices.Contains(acc.Held, string(PrivTableWriteData)):
		return credentials.AccessReadWrite, nil
	case slices.Contains(acc.Held, string(PrivTableReadData)):
		return credentials.AccessRead, nil
	case !acc.Visible:
		return "", hiddenErr(table)
	}
	return "", fault.New(fault.Forbidden, "Forbidden: %s lacks privilege %s or %s on %s", p, PrivTableReadData, PrivTableWriteData, table)
}

// Held implements Authorizer with one store query for every privilege
// asked; the CLI operator holds them all. 503 when the database cannot
// answer.
func (a *RBAC) Held(ctx context.Context, p identity.Principal, r Resource, asked []Privilege) ([]Privilege, error) {
	if p.Source == identity.SourceLocal {
		return slices.Clone(asked), nil
	}
	r = normalizeResource(r)
	names := make([]string, len(asked))
	for i, pr := range asked {
		names[i] = string(pr)
	}
	acc, err := a.checkAccess(ctx, store.AccessQuery{Assignees: assigneesOf(p), Privileges: names, On: SecurableOf(r)})
	if err != nil {
		return nil, storefault.Of(err, r.Warehouse)
	}
	out := []Privilege{}
	for _, pr := range asked {
		if slices.Contains(acc.Held, string(pr)) {
			out = append(out, pr)
		}
	}
	return out, nil
}

// normalizeResource turns a namespace resource without levels (the parent
// of a top-level namespace) into its warehouse.
func normalizeResource(r Resource) Resource {
	if r.Kind == ResourceNamespace && len(r.Namespace) == 0 {
		return Resource{Kind: ResourceWarehouse, Warehouse: r.Warehouse}
	}
	return r
}

// SecurableOf is r as the store names securables.
func SecurableOf(r Resource) store.Securable {
	return store.Securable{Kind: string(r.Kind), Warehouse: r.Warehouse, Namespace: r.Namespace, Name: r.Name}
}

// hiddenErr is the error a caller who may not see r gets: exactly what the
// operation answers when r does not exist, so that names do not leak.
func hiddenErr(r Resource) error {
	id := ident.Ident{Namespace: r.Namespace, Name: r.Name}
	switch r.Kind {
	case ResourceTable:
		return ident.TableNotFound(nil, id)
	case ResourceView:
		return ident.ViewNotFound(nil, id)
	case ResourceNamespace:
		return ident.NamespaceNotFound(nil, r.Namespace)
	case ResourceWarehouse:
		return ident.WarehouseNotFound(nil, r.Warehouse)
	}
	return fault.New(fault.Forbidden, "Forbidden")
}

// grantable says on which securable kinds each privilege may be granted:
// its own object kind and every container of it.
var grantable = map[Privilege][]ResourceKind{
	PrivManageWarehouses:    {ResourceServer, ResourceWarehouse},
	PrivManageGrants:        {ResourceServer},
	PrivNamespaceCreate:     {ResourceServer, ResourceWarehouse, ResourceNamespace},
	PrivNamespaceList:       {ResourceServer, ResourceWarehouse, ResourceNamespace},
	PrivNamespaceDrop:       {ResourceServer, ResourceWarehouse, ResourceNamespace},
	PrivNamespaceProperties: {ResourceServer, ResourceWarehouse, ResourceNamespace},
	PrivTableCreate:         {ResourceServer, ResourceWarehouse, ResourceNamespace},
	PrivTableList:           {ResourceServer, ResourceWarehouse, ResourceNamespace, ResourceTable},
	PrivTableReadMetadata:   {ResourceServer, ResourceWarehouse, ResourceNamespace, ResourceTable},
	PrivTableWriteMetadata:  {ResourceServer, ResourceWarehouse, ResourceNamespace, ResourceTable},
	PrivTableReadData:       {ResourceServer, ResourceWarehouse, ResourceNamespace, ResourceTable},
	PrivTableWriteData:      {ResourceServer, ResourceWarehouse, ResourceNamespace, ResourceTable},
	PrivTableDrop:           {ResourceServer, ResourceWarehouse, ResourceNamespace, ResourceTable},
	PrivViewCreate:          {ResourceServer, ResourceWarehouse, ResourceNamespace},
	PrivViewRead:            {ResourceServer, ResourceWarehouse, ResourceNamespace, ResourceView},
	PrivViewReplace:         {ResourceServer, ResourceWarehouse, ResourceNamespace, ResourceView},
	PrivViewDrop:            {ResourceServer, ResourceWarehouse, ResourceNamespace, ResourceView},
	PrivDeletedList:         {ResourceServer, ResourceWarehouse},
	PrivDeletedUndrop:       {ResourceServer, ResourceWarehouse},
}

// AllPrivileges lists every privilege, in a stable order.
func AllPrivileges() []Privilege {
	out := make([]Privilege, 0, len(grantable))
	for p := range grantable {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// CheckGrant validates a grant: 400 for an unknown privilege or resource
// kind, a resource missing or carrying names its kind does not have, or a
// privilege that cannot be granted on that kind.
func CheckGrant(priv Privilege, r Resource) error {
	kinds, ok := grantable[priv]
	if !ok {
		return fault.New(fault.BadRequest, "Unknown privilege %q (known: %s)", priv, joinPrivileges())
	}
	if err := CheckResource(r); err != nil {
		return err
	}
	if !slices.Contains(kinds, r.Kind) {
		return fault.New(fault.BadRequest, "Privilege %s cannot be granted on a %s", priv, r.Kind)
	}
	return nil
}

// CheckResource refuses (400) an unknown resource kind or a resource
// missing, or carrying, names its kind does not have.
func CheckResource(r Resource) error {
	bad := func(format string, args ...any) error { return fault.New(fault.BadRequest, format, args...) }
	switch r.Kind {
	case ResourceServer:
		if r.Warehouse != "" || len(r.Namespace) > 0 || r.Name != "" {
			return bad("Invalid resource: a server resource names no warehouse, namespace or name")
		}
	case ResourceWarehouse:
		if r.Warehouse == "" || len(r.Namespace) > 0 || r.Name != "" {
			return bad("Invalid resource: a warehouse resource names a warehouse and nothing else")
		}
	case ResourceNamespace:
		if r.Warehouse == "" || r.Name != "" || ident.ValidateNamespace(r.Namespace) != nil {
			return bad("Invalid resource: a namespace resource names a warehouse and one or more namespace levels")
		}
	case ResourceTable, ResourceView:
		if r.Warehouse == "" || ident.ValidateIdent(ident.Ident{Namespace: r.Namespace, Name: r.Name}) != nil {
			return bad("Invalid resource: a %s resource names a warehouse, namespace levels and a name", r.Kind)
		}
	default:
		return bad("Unknown resource kind %q (known: server, warehouse, namespace, table, view)", r.Kind)
	}
	return nil
}

func joinPrivileges() string {
	ps := AllPrivileges()
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

// Assignee is who a role is assigned to: Kind is AssigneeBuiltin,
// AssigneeOIDC or AssigneeGroup.
type Assignee struct {
	Kind string
	Name string
}

// ParseAssignee parses "KIND:NAME" (builtin:admin, oidc:<sub>,
// group:admins); 400 for another kind or an empty name.
func ParseAssignee(s string) (Assignee, error) {
	kind, name, _ := strings.Cut(s, ":")
	a := Assignee{Kind: kind, Name: name}
	return a, CheckAssignee(a)
}

// CheckAssignee refuses (400) an unknown assignee kind or an empty name.
func CheckAssignee(a Assignee) error {
	switch a.Kind {
	case AssigneeBuiltin, AssigneeOIDC, AssigneeGroup:
	default:
		return fault.New(fault.BadRequest, "Unknown assignee kind %q (known: builtin, oidc, group)", a.Kind)
	}
	if a.Name == "" {
		return fault.New(fault.BadRequest, "Invalid assignee: empty name")
	}
	return nil
}

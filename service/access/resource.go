package access

import (
	"context"
	"slices"
	"strings"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/identity"
)

// Privilege is a right held on a securable. A privilege granted on a
// warehouse or namespace is inherited by every namespace, table and view
// below it; one granted on the server applies everywhere.
type Privilege string

// Privileges. The prefix names the kind of object the privilege is about;
// it may be granted on that object or on any container of it.
const (
	PrivManageWarehouses Privilege = "manage-warehouses" // create/drop warehouses, storage profiles
	PrivManageGrants     Privilege = "manage-grants"     // principals, roles, grants, assignments, audit

	PrivNamespaceCreate     Privilege = "namespace-create" // create a child namespace
	PrivNamespaceList       Privilege = "namespace-list"   // see and load the namespace
	PrivNamespaceDrop       Privilege = "namespace-drop"
	PrivNamespaceProperties Privilege = "namespace-properties" // update properties

	PrivTableCreate        Privilege = "table-create" // create/register a table in the namespace
	PrivTableList          Privilege = "table-list"   // see the table in lists and HEAD
	PrivTableReadMetadata  Privilege = "table-read-metadata"
	PrivTableWriteMetadata Privilege = "table-write-metadata" // commits, rename
	PrivTableReadData      Privilege = "table-read-data"      // read-only vended credentials, plan
	PrivTableWriteData     Privilege = "table-write-data"     // read-write credentials, /files, /column-files
	PrivTableDrop          Privilege = "table-drop"

	PrivViewCreate  Privilege = "view-create"
	PrivViewRead    Privilege = "view-read" // see, list and load the view
	PrivViewReplace Privilege = "view-replace"
	PrivViewDrop    Privilege = "view-drop"

	PrivDeletedList   Privilege = "deleted-list"   // list a warehouse's soft-deleted tables and views
	PrivDeletedUndrop Privilege = "deleted-undrop" // undrop one (with table-create or view-create where it lands)
)

// ResourceKind is the kind of a securable.
type ResourceKind string

// Securable kinds, outermost first.
const (
	ResourceServer    ResourceKind = "server"
	ResourceWarehouse ResourceKind = "warehouse"
	ResourceNamespace ResourceKind = "namespace"
	ResourceTable     ResourceKind = "table"
	ResourceView      ResourceKind = "view"
)

// TableResource names a table securable.
func TableResource(warehouse string, namespace []string, name string) Resource {
	return Resource{Kind: ResourceTable, Warehouse: warehouse, Namespace: namespace, Name: name}
}

// ViewResource names a view securable.
func ViewResource(warehouse string, namespace []string, name string) Resource {
	return Resource{Kind: ResourceView, Warehouse: warehouse, Namespace: namespace, Name: name}
}

// WarehouseResource names a warehouse securable.
func WarehouseResource(name string) Resource {
	return Resource{Kind: ResourceWarehouse, Warehouse: name}
}

// NamespaceResource names a namespace securable.
func NamespaceResource(warehouse string, levels []string) Resource {
	return Resource{Kind: ResourceNamespace, Warehouse: warehouse, Namespace: levels}
}

// Resource names one securable. Namespace is empty for the server and
// warehouses; Name is set only for tables and views.
type Resource struct {
	Kind      ResourceKind
	Warehouse string
	Namespace []string
	Name      string
}

// String renders the resource as "kind:warehouse/ns.ns/name" for logs and
// audit rows.
func (r Resource) String() string {
	var b strings.Builder
	b.WriteString(string(r.Kind))
	b.WriteByte(':')
	b.WriteString(r.Warehouse)
	if len(r.Namespace) > 0 {
		b.WriteByte('/')
		b.WriteString(strings.Join(r.Namespace, "."))
	}
	if r.Name != "" {
		b.WriteByte('/')
		b.WriteString(r.Name)
	}
	return b.String()
}

// Authorizer decides whether a principal may act on a securable.
type Authorizer interface {
	// Authorize returns nil when p holds priv on r, directly or inherited.
	// When it does not, it returns a *fault.Error of fault.Forbidden, or of the
	// not-found kind for r when p holds no privilege at all on r (so that
	// names the caller may not see do not leak).
	Authorize(ctx context.Context, p identity.Principal, priv Privilege, r Resource) error
	// TableAccess returns the storage access level for a table's files:
	// read-write with table-write-data, read with table-read-data. It
	// returns a fault.Forbidden *fault.Error when p holds neither.
	TableAccess(ctx context.Context, p identity.Principal, table Resource) (credentials.AccessLevel, error)
	// Held returns the privileges among asked that p holds on r, directly
	// or inherited, in the order asked, answering in one decision. It
	// checks no existence and hides nothing (it only tells p about p's
	// own grants); it fails only when the grants cannot be read (503).
	Held(ctx context.Context, p identity.Principal, r Resource, asked []Privilege) ([]Privilege, error)
}

// AllowAll permits everything and grants read-write storage access; it is
// the authorizer when authentication is off.
type AllowAll struct{}

// Authorize implements Authorizer; it never fails.
func (AllowAll) Authorize(context.Context, identity.Principal, Privilege, Resource) error { return nil }

// TableAccess implements Authorizer; it always grants read-write.
func (AllowAll) TableAccess(context.Context, identity.Principal, Resource) (credentials.AccessLevel, error) {
	return credentials.AccessReadWrite, nil
}

// Held implements Authorizer; p holds every privilege asked.
func (AllowAll) Held(_ context.Context, _ identity.Principal, _ Resource, asked []Privilege) ([]Privilege, error) {
	return slices.Clone(asked), nil
}

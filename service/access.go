package service

import (
	"context"

	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/store"
)

// Access control lives in package access; these names keep the service's
// API whole for its callers (server, cmd/catalog).

// Access types (package access).
type (
	Privilege       = access.Privilege
	ResourceKind    = access.ResourceKind
	Resource        = access.Resource
	Authorizer      = access.Authorizer
	AllowAll        = access.AllowAll
	RBAC            = access.RBAC
	ListFilter      = access.ListFilter
	Assignee        = access.Assignee
	AuditLog        = access.AuditLog
	AuditLogOptions = access.AuditLogOptions
)

// Privileges, securable kinds and assignee kinds (package access).
const (
	PrivManageWarehouses    = access.PrivManageWarehouses
	PrivManageGrants        = access.PrivManageGrants
	PrivNamespaceCreate     = access.PrivNamespaceCreate
	PrivNamespaceList       = access.PrivNamespaceList
	PrivNamespaceDrop       = access.PrivNamespaceDrop
	PrivNamespaceProperties = access.PrivNamespaceProperties
	PrivTableCreate         = access.PrivTableCreate
	PrivTableList           = access.PrivTableList
	PrivTableReadMetadata   = access.PrivTableReadMetadata
	PrivTableWriteMetadata  = access.PrivTableWriteMetadata
	PrivTableReadData       = access.PrivTableReadData
	PrivTableWriteData      = access.PrivTableWriteData
	PrivTableDrop           = access.PrivTableDrop
	PrivViewCreate          = access.PrivViewCreate
	PrivViewRead            = access.PrivViewRead
	PrivViewReplace         = access.PrivViewReplace
	PrivViewDrop            = access.PrivViewDrop
	PrivDeletedList         = access.PrivDeletedList
	PrivDeletedUndrop       = access.PrivDeletedUndrop
	ResourceServer          = access.ResourceServer
	ResourceWarehouse       = access.ResourceWarehouse
	ResourceNamespace       = access.ResourceNamespace
	ResourceTable           = access.ResourceTable
	ResourceView            = access.ResourceView
	AssigneeBuiltin         = access.AssigneeBuiltin
	AssigneeOIDC            = access.AssigneeOIDC
	AssigneeGroup           = access.AssigneeGroup
)

// NewRBAC returns the RBAC authorizer over st (access.NewRBAC).
func NewRBAC(st store.RBACStore) *RBAC { return access.NewRBAC(st) }

// NewAuditLog starts an audit writer over st (access.NewAuditLog).
func NewAuditLog(st store.AuditStore, opts AuditLogOptions) *AuditLog {
	return access.NewAuditLog(st, opts)
}

// AllPrivileges lists every privilege, in a stable order.
func AllPrivileges() []Privilege { return access.AllPrivileges() }

// PrivilegesOn lists the privileges that can be held on a securable of
// kind k (access.PrivilegesOn).
func PrivilegesOn(k ResourceKind) []Privilege { return access.PrivilegesOn(k) }

// CheckGrant validates a grant (access.CheckGrant): 400 for an unknown
// privilege or resource kind, an ill-formed resource, or a privilege that
// cannot be granted on that kind.
func CheckGrant(priv Privilege, r Resource) error { return access.CheckGrant(priv, r) }

// ParseAssignee parses "KIND:NAME" (access.ParseAssignee); 400 for another
// kind or an empty name.
func ParseAssignee(s string) (Assignee, error) { return access.ParseAssignee(s) }

// WithRequestID returns ctx carrying the request id audit events record.
func WithRequestID(ctx context.Context, id string) context.Context {
	return access.WithRequestID(ctx, id)
}

// RequestIDFrom returns the request id in ctx, or "".
func RequestIDFrom(ctx context.Context) string { return access.RequestIDFrom(ctx) }

package service

import (
	"github.com/lakehold/catalog/service/access"
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
	ResourceServer          = access.ResourceServer
	ResourceWarehouse       = access.ResourceWarehouse
	ResourceNamespace       = access.ResourceNamespace
	ResourceTable           = access.ResourceTable
	ResourceView            = access.ResourceView
	AssigneeOIDC            = access.AssigneeOIDC
	AssigneeGroup           = access.AssigneeGroup
)

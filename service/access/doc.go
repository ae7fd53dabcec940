// Package access decides who may do what: the privileges, the securables
// they are held on and the Authorizer interface; the role-based authorizer
// over the catalog database (RBAC) and allow-all for a catalog without
// authentication; and the audit trail's writer (AuditLog). It knows the
// store only through its RBAC and audit interfaces and nothing of HTTP or
// of the catalog's orchestration, which calls it (package service).
package access

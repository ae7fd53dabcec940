package service

import "context"

// Principal is who makes a request. Authentication middleware puts it in
// the context; until authentication lands every request is anonymous.
type Principal struct {
	Subject string
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal in ctx, or the anonymous one.
func PrincipalFrom(ctx context.Context) Principal {
	if p, ok := ctx.Value(principalKey{}).(Principal); ok {
		return p
	}
	return Principal{Subject: "anonymous"}
}

// Action is an operation subject to authorization.
type Action string

// Actions checked by the service.
const (
	ActionRead  Action = "read"
	ActionWrite Action = "write"
)

// AccessLevel is what a principal may do with a table's files.
type AccessLevel string

// Access levels for vended storage credentials.
const (
	AccessRead      AccessLevel = "read"
	AccessReadWrite AccessLevel = "read-write"
)

// Authorizer decides whether a principal may act on a resource (a
// warehouse, namespace, table or view, named by its dotted path).
type Authorizer interface {
	// Authorize returns a *Error of KindForbidden when the action is denied.
	Authorize(ctx context.Context, p Principal, action Action, warehouse, resource string) error
	// TableAccess returns the storage access level for a table's files.
	TableAccess(ctx context.Context, p Principal, warehouse, table string) (AccessLevel, error)
}

// AllowAll permits everything and grants read-write storage access.
type AllowAll struct{}

// Authorize implements Authorizer; it never fails.
func (AllowAll) Authorize(context.Context, Principal, Action, string, string) error { return nil }

// TableAccess implements Authorizer; it always grants read-write.
func (AllowAll) TableAccess(context.Context, Principal, string, string) (AccessLevel, error) {
	return AccessReadWrite, nil
}

// StorageCredential is one credential scoped to a location prefix.
type StorageCredential struct {
	Prefix string
	Config map[string]string
}

// CredentialVendor hands out storage credentials scoped to one table.
type CredentialVendor interface {
	// Vend returns FileIO properties for LoadTableResult.config and scoped
	// credentials for storage-credentials. It fails when the storage
	// profile cannot mint credentials (e.g. STS refused).
	Vend(ctx context.Context, warehouse WarehouseInfo, tableLocation string, level AccessLevel) (map[string]string, []StorageCredential, error)
}

// WarehouseInfo is what a CredentialVendor needs to know of a warehouse.
type WarehouseInfo struct {
	Name       string
	Location   string
	Properties map[string]string
	// StorageProfile is the warehouse's storage profile JSON (secrets sealed).
	StorageProfile string
}

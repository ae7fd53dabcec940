package store

import (
	"context"
	"time"
)

// AuditEvent is one row of the audit trail: who did what to which object,
// whether it was allowed, and the HTTP status it ended with. It never holds
// request headers, bodies, tokens or secrets.
type AuditEvent struct {
	ID        string // filled in by AppendAudit when empty
	At        time.Time
	RequestID string
	Principal string // identity.Principal.String(): "source:subject"
	Action    string // "METHOD /route/pattern", "issue-token", "vend-credentials"
	Resource  string // service.Resource.String() or the route's object
	Decision  string // "allowed", "denied" or "failed"
	Status    int
	Detail    string // short; e.g. "access=read" for a vend
}

// AuditFilter selects audit events; zero fields select everything.
// Since is inclusive and Until exclusive.
type AuditFilter struct {
	Principal      string // exact match
	ResourcePrefix string // byte prefix of Resource
	Action         string // exact match
	Since, Until   time.Time
}

// AuditStore persists the audit trail.
type AuditStore interface {
	// AppendAudit inserts events in one statement: all or none. Events
	// whose ID is already stored are skipped, so appending the same batch
	// again is harmless. It fails like any write (ErrUnavailable when the
	// database is out of reach, ErrOutcomeUnknown when the answer was lost,
	// ErrDatabase otherwise); events with an empty ID get a new one.
	AppendAudit(ctx context.Context, events []AuditEvent) error
	// ListAudit returns the events matching f, newest first (ties broken by
	// ID), and the token of the next page ("" when none follows).
	// ErrInvalidPageToken for a token not issued by the store.
	ListAudit(ctx context.Context, f AuditFilter, page Page) ([]AuditEvent, string, error)
}

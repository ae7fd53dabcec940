package service

import (
	"context"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/store"
)

// AuditEvent is one audit record (see store.AuditEvent for the fields).
type AuditEvent = store.AuditEvent

// AuditFilter selects audit events for ListAudit.
type AuditFilter = store.AuditFilter

// RecordAudit records e: one structured log line (msg "audit") and, when
// Options.Audit is set, one row of the audit trail. Empty Principal and
// RequestID are taken from ctx, a zero At is now, an empty Decision follows
// Status. It waits only when the audit queue is full.
func (s *Service) RecordAudit(ctx context.Context, e AuditEvent) {
	if e.Principal == "" {
		p := identity.From(ctx)
		if p.Source == "" {
			p.Source = identity.SourceAnonymous
		}
		e.Principal = p.String()
	}
	if e.RequestID == "" {
		e.RequestID = access.RequestIDFrom(ctx)
	}
	if e.At.IsZero() {
		e.At = s.opts.Clock()
	}
	if e.Decision == "" {
		e.Decision = fault.Decision(e.Status)
	}
	for _, f := range []*string{&e.RequestID, &e.Principal, &e.Action, &e.Resource, &e.Detail} {
		*f = access.AuditText(*f)
	}
	attrs := []any{"principal", e.Principal, "action", e.Action, "resource", e.Resource,
		"decision", e.Decision, "status", e.Status, "request_id", e.RequestID}
	if e.Detail != "" {
		attrs = append(attrs, "detail", e.Detail)
	}
	s.log.InfoContext(ctx, "audit", attrs...)
	if s.opts.Audit != nil {
		s.opts.Audit.Record(e)
	}
}

// Default and largest page of ListAudit.
const (
	DefaultAuditPageSize = 100
	MaxAuditPageSize     = 1000
)

// ListAudit returns the audit events matching f, newest first, and the
// token of the next page. It requires manage-grants on the server (403
// otherwise); 400 for a page size over MaxAuditPageSize, Since after Until
// or a bad page token; 503 when the database is unavailable.
func (s *Service) ListAudit(ctx context.Context, f AuditFilter, page Page) ([]AuditEvent, string, error) {
	if err := s.ta.Authorize(ctx, PrivManageGrants, Resource{Kind: ResourceServer}); err != nil {
		return nil, "", err
	}
	if page.Size <= 0 {
		page.Size = DefaultAuditPageSize
	}
	if page.Size > MaxAuditPageSize {
		return nil, "", fault.New(fault.BadRequest, "pageSize must be at most %d", MaxAuditPageSize)
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && f.Since.After(f.Until) {
		return nil, "", fault.New(fault.BadRequest, "since must not be after until")
	}
	evs, next, err := s.store.ListAudit(ctx, f, page.store())
	if err != nil {
		return nil, "", storefault.Of(err, "")
	}
	return evs, next, nil
}

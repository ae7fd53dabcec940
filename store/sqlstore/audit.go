package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/lakehold/catalog/store"
)

// auditCols are the columns of audit_events in insert and select order.
const auditCols = `id, at, request_id, principal, action, resource, decision, status, detail`

// auditColCount is the number of columns in auditCols.
const auditColCount = 9

// AppendAudit implements store.AuditStore with one multi-row INSERT. It does
// not run under the Idempotency-Key fence: an audit row is not a catalog
// change, and it must land even when the request's change did not. Rows
// whose id is already stored are skipped, so a retry of a batch whose first
// insert landed (its answer lost) succeeds and adds nothing.
func (s *Store) AppendAudit(ctx context.Context, events []store.AuditEvent) error {
	if len(events) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(`INSERT INTO audit_events (` + auditCols + `) VALUES `)
	args := make([]any, 0, len(events)*auditColCount)
	for i := range events {
		e := &events[i]
		if e.ID == "" {
			e.ID = newAuditID()
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := 0; c < auditColCount; c++ {
			if c > 0 {
				b.WriteString(", ")
			}
			b.WriteString("$" + strconv.Itoa(len(args)+c+1))
		}
		b.WriteByte(')')
		args = append(args, e.ID, e.At.UnixMilli(), e.RequestID, e.Principal, e.Action, e.Resource, e.Decision, e.Status, e.Detail)
	}
	b.WriteString(` ON CONFLICT (id) DO NOTHING`)
	_, err := s.db.Exec(ctx, b.String(), args...)
	return s.wrap(err, "append audit events")
}

// newAuditID returns a time-ordered id (UUIDv7), falling back to a random
// one if the clock source fails.
func newAuditID() string {
	if id, err := uuid.NewV7(); err == nil {
		return id.String()
	}
	return uuid.NewString()
}

// ListAudit implements store.AuditStore: newest first, keyset-paged on
// (at, id) so that rows appended while a client pages never shift a page.
func (s *Store) ListAudit(ctx context.Context, f store.AuditFilter, page store.Page) ([]store.AuditEvent, string, error) {
	where, args, err := auditWhere(f, page.Token)
	if err != nil {
		return nil, "", err
	}
	args = append(args, probeLimit(page.Size))
	q := `SELECT ` + auditCols + ` FROM audit_events` + where +
		` ORDER BY at DESC, id DESC LIMIT $` + strconv.Itoa(len(args))
	out, err := s.auditRows(ctx, q, args)
	if err != nil {
		return nil, "", s.wrap(err, "list audit events")
	}
	if page.Size <= 0 || len(out) <= page.Size {
		return out, "", nil
	}
	out = out[:page.Size]
	last := out[page.Size-1]
	return out, encodeToken(strconv.FormatInt(last.At.UnixMilli(), 10) + ":" + last.ID), nil
}

// auditWhere builds the WHERE clause of a listing and its arguments.
func auditWhere(f store.AuditFilter, token string) (string, []any, error) {
	var conds []string
	var args []any
	add := func(cond string, vals ...any) {
		for _, v := range vals {
			cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(args)+1), 1)
			args = append(args, v)
		}
		conds = append(conds, cond)
	}
	if f.Principal != "" {
		add("principal = ?", f.Principal)
	}
	if f.Action != "" {
		add("action = ?", f.Action)
	}
	if f.ResourcePrefix != "" {
		// substr counts characters in both databases; LIKE would need
		// escaping and is case-insensitive in SQLite.
		add("substr(resource, 1, ?) = ?", utf8.RuneCountInString(f.ResourcePrefix), f.ResourcePrefix)
	}
	if !f.Since.IsZero() {
		add("at >= ?", f.Since.UnixMilli())
	}
	if !f.Until.IsZero() {
		add("at < ?", f.Until.UnixMilli())
	}
	if token != "" {
		at, id, err := decodeAuditToken(token)
		if err != nil {
			return "", nil, err
		}
		add("(at < ? OR (at = ? AND id < ?))", at, at, id)
	}
	if len(conds) == 0 {
		return "", args, nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args, nil
}

// decodeAuditToken returns the (at, id) of the last row of the previous
// page.
func decodeAuditToken(tok string) (int64, string, error) {
	raw, err := decodeToken(tok)
	if err != nil {
		return 0, "", err
	}
	ms, id, ok := strings.Cut(raw, ":")
	at, perr := strconv.ParseInt(ms, 10, 64)
	if !ok || perr != nil || id == "" {
		return 0, "", fmt.Errorf("%w: invalid page token", store.ErrInvalidPageToken)
	}
	return at, id, nil
}

func (s *Store) auditRows(ctx context.Context, q string, args []any) ([]store.AuditEvent, error) {
	rows, err := s.db.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []store.AuditEvent{}
	for rows.Next() {
		var e store.AuditEvent
		var at int64
		var status int64
		if err := rows.Scan(&e.ID, &at, &e.RequestID, &e.Principal, &e.Action, &e.Resource, &e.Decision, &status, &e.Detail); err != nil {
			return nil, err
		}
		e.At, e.Status = time.UnixMilli(at), int(status)
		out = append(out, e)
	}
	return out, rows.Err()
}

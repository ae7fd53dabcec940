package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

// withEvents makes fn also write the events store.WithEvents put on ctx to
// the outbox, after fn's own statements and in its transaction: a change
// that rolls back (a lost swap, a refused check) leaves no event.
func (s *Store) withEvents(ctx context.Context, fn func(q sqldb.Querier) error) func(q sqldb.Querier) error {
	events := store.EventsOf(ctx)
	if len(events) == 0 {
		return fn
	}
	return func(q sqldb.Querier) error {
		if err := fn(q); err != nil {
			return err
		}
		return s.insertEvents(ctx, q, events)
	}
}

const eventCols = `id, at, warehouse, namespace_key, name, object_type, object_uuid, operation, request_id, actor, body, request_events`

// insertEvents writes events with one multi-row INSERT. Every event of one
// transaction is stamped with the same time, the database's as this
// process estimates it.
func (s *Store) insertEvents(ctx context.Context, q sqldb.Querier, events []store.Event) error {
	now := s.clock.Now()
	var b strings.Builder
	b.WriteString(`INSERT INTO catalog_events (` + eventCols + `) VALUES `)
	args := make([]any, 0, 12*len(events))
	for i := range events {
		e := &events[i]
		if e.ID == "" {
			e.ID = uuid.NewString()
		}
		e.At, e.RequestEvents = now, len(events)
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := 1; c <= 12; c++ {
			if c > 1 {
				b.WriteString(", ")
			}
			b.WriteString("$" + strconv.Itoa(len(args)+c))
		}
		b.WriteByte(')')
		body := e.Body
		if len(body) == 0 {
			body = json.RawMessage("{}")
		}
		args = append(args, e.ID, now.UnixMilli(), e.Warehouse, nsKey(e.Namespace), e.Name, e.ObjectType,
			e.ObjectUUID, e.Operation, e.RequestID, e.Actor, string(body), len(events))
	}
	_, err := q.Exec(ctx, b.String(), args...)
	return err
}

// settled is the condition under which an outbox row may be listed. On
// Postgres a row's seq is taken at insert and its transaction may commit
// after a later one's, so only rows of transactions older than every one
// still running are final; SQLite commits one writer at a time.
func (s *Store) settled() string {
	if _, isPG := s.db.(*sqldb.Postgres); isPG {
		return `txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint`
	}
	return `1 = 1`
}

// ListEvents implements store.Events.
func (s *Store) ListEvents(ctx context.Context, f store.EventFilter, limit int) ([]*store.Event, error) {
	if max(len(f.Operations), len(f.ObjectTypes), len(f.Objects), len(f.ObjectUUIDs)) > store.MaxEventFilterValues {
		return nil, fmt.Errorf("%w: an event filter list of more than %d values", store.ErrInvalidValue, store.MaxEventFilterValues)
	}
	where := []string{s.settled(), `(txid, seq) > ($1, $2)`}
	args := []any{f.After.TxID, f.After.Seq}
	arg := func(v any) string { args = append(args, v); return "$" + strconv.Itoa(len(args)) }
	if f.Warehouse != "" {
		where = append(where, `warehouse = `+arg(f.Warehouse))
	}
	if !f.Since.IsZero() {
		where = append(where, `at >= `+arg(f.Since.UnixMilli()))
	}
	if len(f.Operations) > 0 {
		where = append(where, inArgs("operation", f.Operations, arg))
	}
	if len(f.ObjectTypes) > 0 {
		where = append(where, inArgs("object_type", f.ObjectTypes, arg))
	}
	ors := objectsWhere(f.Objects, arg)
	if len(f.ObjectUUIDs) > 0 {
		ors = append(ors, inArgs("object_uuid", f.ObjectUUIDs, arg))
	}
	if len(ors) > 0 {
		where = append(where, `(`+strings.Join(ors, " OR ")+`)`)
	}
	limit = max(1, min(limit, 1000))
	rows, err := s.db.Query(ctx, `SELECT txid, seq, `+eventCols+` FROM catalog_events WHERE `+
		strings.Join(where, " AND ")+` ORDER BY txid, seq LIMIT `+strconv.Itoa(limit), args...)
	if err != nil {
		return nil, s.wrap(err, "list events")
	}
	defer rows.Close()
	var out []*store.Event
	for rows.Next() {
		e := &store.Event{}
		var at int64
		var ns, body string
		if err := rows.Scan(&e.Pos.TxID, &e.Pos.Seq, &e.ID, &at, &e.Warehouse, &ns, &e.Name, &e.ObjectType,
			&e.ObjectUUID, &e.Operation, &e.RequestID, &e.Actor, &body, &e.RequestEvents); err != nil {
			return nil, s.wrap(err, "list events")
		}
		e.At = time.UnixMilli(at).UTC()
		e.Namespace = nsLevels(ns)
		e.Body = json.RawMessage(body)
		out = append(out, e)
	}
	return out, s.wrap(rows.Err(), "list events")
}

// objectsWhere is the condition of each kind of EventFilter.Objects (to
// be OR-ed): the objects named as one VALUES list, the namespaces (each
// matching itself and its children by key prefix) as another. One
// condition per object would nest as deep as the list is long, past
// SQLite's expression depth limit (1000).
func objectsWhere(objects []store.EventObject, arg func(any) string) []string {
	var named, spaces []string
	for _, o := range objects {
		key := nsKey(o.Namespace)
		if o.Name != "" {
			named = append(named, `(`+arg(key)+`, `+arg(o.Name)+`)`)
			continue
		}
		spaces = append(spaces, `(`+arg(key)+`, `+arg(key+levelSep)+`)`)
	}
	var ors []string
	if len(named) > 0 {
		ors = append(ors, `(namespace_key, name) IN (VALUES `+strings.Join(named, ", ")+`)`)
	}
	if len(spaces) > 0 {
		// VALUES columns are column1, column2 on both databases; length
		// and substr count characters on both.
		ors = append(ors, `EXISTS (SELECT 1 FROM (VALUES `+strings.Join(spaces, ", ")+`) v
			WHERE namespace_key = v.column1 OR substr(namespace_key, 1, length(v.column2)) = v.column2)`)
	}
	return ors
}

// inArgs is "col IN (...)" over vals, each added with arg.
func inArgs(col string, vals []string, arg func(any) string) string {
	ph := make([]string, len(vals))
	for i, v := range vals {
		ph[i] = arg(v)
	}
	return col + ` IN (` + strings.Join(ph, ", ") + `)`
}

// EventCursor implements store.Events.
func (s *Store) EventCursor(ctx context.Context, sink string) (store.EventPos, error) {
	var p store.EventPos
	err := s.db.QueryRow(ctx, `SELECT txid, seq FROM event_cursors WHERE sink = $1`, sink).Scan(&p.TxID, &p.Seq)
	if err != nil && s.db.Classify(err) == sqldb.ClassNoRows {
		return store.EventPos{}, nil
	}
	return p, s.wrap(err, "read event cursor")
}

// SetEventCursor implements store.Events. It is not fenced by an
// Idempotency-Key: delivery is not a catalog change.
func (s *Store) SetEventCursor(ctx context.Context, sink string, pos store.EventPos) error {
	_, err := s.db.Exec(ctx, `INSERT INTO event_cursors (sink, txid, seq, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (sink) DO UPDATE SET txid = excluded.txid, seq = excluded.seq, updated_at = excluded.updated_at`,
		sink, pos.TxID, pos.Seq, s.clock.Now().UnixMilli())
	return s.wrap(err, "record event cursor")
}

// PruneEvents implements store.Events: the rows and the PrunedCursor move
// in one transaction.
func (s *Store) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.inTxUnfenced(ctx, func(q sqldb.Querier) error {
		var last store.EventPos
		err := q.QueryRow(ctx, `SELECT txid, seq FROM catalog_events WHERE at < $1 ORDER BY txid DESC, seq DESC LIMIT 1`,
			before.UnixMilli()).Scan(&last.TxID, &last.Seq)
		if err != nil {
			if s.db.Classify(err) == sqldb.ClassNoRows {
				return nil
			}
			return err
		}
		if n, err = q.Exec(ctx, `DELETE FROM catalog_events WHERE at < $1`, before.UnixMilli()); err != nil {
			return err
		}
		_, err = q.Exec(ctx, `INSERT INTO event_cursors (sink, txid, seq, updated_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (sink) DO UPDATE SET txid = excluded.txid, seq = excluded.seq, updated_at = excluded.updated_at
			WHERE (event_cursors.txid, event_cursors.seq) < (excluded.txid, excluded.seq)`,
			store.PrunedCursor, last.TxID, last.Seq, s.clock.Now().UnixMilli())
		return err
	})
	return n, s.wrap(err, "prune events")
}

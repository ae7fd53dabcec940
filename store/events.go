package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Event is one committed change to the catalog (a table commit, a create,
// a drop, a rename, a namespace change), written to the outbox in the
// same transaction as the change (WithEvents): an event exists if and only
// if its change committed.
type Event struct {
	// ID is unique per event (a UUID); consumers de-duplicate by it.
	ID string
	// Pos is the event's place in the outbox, set when it is read.
	Pos EventPos
	// At is when the change was made (the database's clock).
	At time.Time
	// Warehouse, Namespace and Name address the changed object; Name is
	// empty for a namespace's own events.
	Warehouse string
	Namespace []string
	Name      string
	// ObjectType is "table", "view", "function" or "namespace".
	ObjectType string
	// ObjectUUID is the table's or view's UUID from its metadata ("" for
	// namespaces).
	ObjectUUID string
	// Operation is the change's operation type (create-table,
	// update-table, ...), as in the REST events proposal.
	Operation string
	// RequestID and Actor say which request made the change and who.
	RequestID string
	Actor     string
	// RequestEvents is how many events the change wrote (a multi-table
	// transaction writes one per table), set when written.
	RequestEvents int
	// Body is the operation object as JSON. It must hold no secret, token
	// or path outside the object's own location.
	Body json.RawMessage
}

// EventPos orders the outbox. Events are read in (TxID, Seq) order, and
// only once every transaction that could still add an earlier position
// has ended, so the order never changes under a reader that pages by it.
type EventPos struct {
	TxID int64 `json:"t"`
	Seq  int64 `json:"s"`
}

// Less reports whether p comes before o.
func (p EventPos) Less(o EventPos) bool {
	return p.TxID < o.TxID || (p.TxID == o.TxID && p.Seq < o.Seq)
}

// IsZero reports whether p is the position before every event.
func (p EventPos) IsZero() bool { return p == EventPos{} }

// Token is p as an opaque continuation token.
func (p EventPos) Token() string {
	return base64.RawURLEncoding.EncodeToString([]byte("ev1:" + strconv.FormatInt(p.TxID, 10) + ":" + strconv.FormatInt(p.Seq, 10)))
}

// ParseEventToken reads a token made by EventPos.Token:
// ErrInvalidPageToken for anything else.
func ParseEventToken(tok string) (EventPos, error) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	parts := strings.Split(string(raw), ":")
	if err != nil || len(parts) != 3 || parts[0] != "ev1" {
		return EventPos{}, fmt.Errorf("%w: events", ErrInvalidPageToken)
	}
	t, err1 := strconv.ParseInt(parts[1], 10, 64)
	s, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || t < 0 || s < 0 {
		return EventPos{}, fmt.Errorf("%w: events", ErrInvalidPageToken)
	}
	return EventPos{TxID: t, Seq: s}, nil
}

// PrunedCursor is the cursor name (EventCursor) under which PruneEvents
// records the last position it removed: a reader behind it has missed
// events. It is not a sink's name.
const PrunedCursor = "~pruned"

// EventFilter narrows ListEvents; zero fields match everything.
type EventFilter struct {
	// After lists only events past this position.
	After EventPos
	// Warehouse is the warehouse name ("" for every warehouse).
	Warehouse string
	// Since lists only events at or after this time.
	Since time.Time
	// Operations keeps the listed operation types.
	Operations []string
	// ObjectTypes keeps "table", "view" or "namespace" events.
	ObjectTypes []string
	// Objects keeps events of these objects: a Name matches that table or
	// view; an empty Name matches the namespace and everything in it (and
	// in its children).
	Objects []EventObject
	// ObjectUUIDs keeps events of tables and views with these UUIDs.
	ObjectUUIDs []string
}

// MaxEventFilterValues bounds each list of an EventFilter (Operations,
// ObjectTypes, Objects, ObjectUUIDs): each value is a statement parameter,
// and the databases bound those (SQLite to 32766). ListEvents answers
// ErrInvalidValue for a longer list; callers refuse long lists first.
const MaxEventFilterValues = 2000

// EventObject names an object for EventFilter.Objects.
type EventObject struct {
	Namespace []string
	Name      string
}

// Events is the outbox of committed changes. Errors are ErrUnavailable
// when the database is out of reach, ErrDatabase otherwise.
type Events interface {
	// ListEvents returns up to limit events matching f in outbox order;
	// ErrInvalidValue when a list of f is longer than MaxEventFilterValues.
	// An event whose transaction may still be running, or one that began
	// before such a transaction, is not listed yet.
	ListEvents(ctx context.Context, f EventFilter, limit int) ([]*Event, error)
	// EventCursor returns how far sink has delivered (the zero position
	// when it never has).
	EventCursor(ctx context.Context, sink string) (EventPos, error)
	// SetEventCursor records that sink delivered every event up to pos.
	SetEventCursor(ctx context.Context, sink string, pos EventPos) error
	// PruneEvents removes events older than before and returns how many;
	// the last position removed becomes the PrunedCursor.
	PruneEvents(ctx context.Context, before time.Time) (int64, error)
}

type eventsKey struct{}

// WithEvents returns a context under which the next change (any store
// method that changes a warehouse's namespaces, tables or views) also
// writes events to the outbox, in its own transaction. Pass the returned
// context to that one call only.
func WithEvents(ctx context.Context, events ...Event) context.Context {
	if len(events) == 0 {
		return ctx
	}
	return context.WithValue(ctx, eventsKey{}, events)
}

// EventsOf returns the events WithEvents attached to ctx.
func EventsOf(ctx context.Context) []Event {
	e, _ := ctx.Value(eventsKey{}).([]Event)
	return e
}

// Package changefeed reads the catalog's change events back out of the
// outbox the commit path writes them to (store.WithEvents): the pull feed
// of POST /v1/{prefix}/events (paged, filtered, each event shown only to a
// caller who may read its object), the hourly prune past the retention,
// and one delivery job per sink (NATS, webhook). It knows the store and
// the access types, nothing of HTTP or of the orchestration, which hands
// it an authorizer and a warehouse check.
package changefeed

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/eventsink"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
)

// Options configure change events: every committed change is written
// to the outbox in its own transaction (store.WithEvents), read back by
// POST /v1/{prefix}/events and delivered to Sinks by background jobs.
type Options struct {
	// Retention is how long events stay in the outbox; 0 turns events off
	// (nothing is recorded, the pull endpoint answers 404).
	Retention time.Duration
	// Sinks are the destinations events are pushed to (NATS, webhook).
	// Each has a deliver-events job; any replica that has the sink
	// configured and runs workers may run it, one at a time.
	Sinks []eventsink.Sink
	// Source is the CloudEvents source attribute (default "/lakehold").
	Source string
	// OnDelivery is told each delivery round's outcome for a sink; may be
	// nil.
	OnDelivery func(sink string, delivered int, err error)
}

// Job kinds of events.
const (
	// JobPruneEvents removes events past their retention, hourly.
	JobPruneEvents = "prune-events"
	// jobDeliverPrefix starts a sink's delivery job kind.
	jobDeliverPrefix = "deliver-events-"
)

// Feed serves and ships one catalog's change events.
type Feed struct {
	store  store.Store
	opts   Options
	log    *slog.Logger
	tables *tableaccess.Access // the clock, authorize and the warehouse lookup
}

// New returns the feed of st's outbox under opts; ta gives the clock
// (the prune's cut-off), authorize and the warehouse lookup.
func New(st store.Store, opts Options, ta *tableaccess.Access) *Feed {
	return &Feed{store: st, opts: opts, log: ta.Logger(), tables: ta}
}

// On reports whether changes record events (a retention is set).
func (f *Feed) On() bool { return f.opts.Retention > 0 }

// Query is a POST /v1/{prefix}/events request (the REST events
// proposal's QueryEventsRequest).
type Query struct {
	ContinuationToken string
	PageSize          int
	SinceMillis       int64
	OperationTypes    []string
	ObjectsByName     [][]string
	ObjectsByUUID     []string
	ObjectTypes       []string
}

// Page is one page of events and the token to continue from, which
// is returned even when no event is left so that the caller can ask again
// later for newer ones.
type Page struct {
	ContinuationToken string
	Events            []changeevents.RESTEvent
}

// One page of events: 100 unless asked, 1 to 1000.
const (
	defaultEventsPage = 100
	maxEventsPage     = 1000
	// MaxFilterValues bounds each filter list of a query
	// (operation-types, object-types, catalog-objects-by-name,
	// catalog-objects-by-uuid): more is a 400, not a database error.
	MaxFilterValues = 1000
)

// Query lists a warehouse's events in commit order (in order per
// table) after the query's continuation token. The caller sees only events
// of objects it may read (table-read-metadata, view-read, namespace-list):
// a page may hold fewer events than asked while the token still moves on.
// Errors: 404 when events are off or the warehouse is missing, 400 for a
// bad token, page size or object name, 503 when the database is away.
func (f *Feed) Query(ctx context.Context, warehouse string, q Query) (*Page, error) {
	if !f.On() {
		return nil, fault.New(fault.NotFound, "Change events are not enabled on this catalog (--events-retention 0)")
	}
	if _, err := f.tables.Warehouse(ctx, warehouse); err != nil {
		return nil, err
	}
	filter, err := eventFilter(warehouse, q)
	if err != nil {
		return nil, err
	}
	if err := f.checkNotPruned(ctx, filter.After); err != nil {
		return nil, err
	}
	size := q.PageSize
	if size == 0 {
		size = defaultEventsPage
	}
	events, err := f.store.ListEvents(ctx, filter, size)
	if err != nil {
		return nil, storefault.Of(err, warehouse)
	}
	page := &Page{ContinuationToken: filter.After.Token()}
	if len(events) > 0 {
		page.ContinuationToken = events[len(events)-1].Pos.Token()
	}
	visible, err := f.visibleEvents(ctx, events)
	if err != nil {
		return nil, err
	}
	page.Events = changeevents.REST(visible)
	return page, nil
}

// checkNotPruned answers 410 Gone when events past pos were pruned before
// the caller read them: its continuation-token would silently skip them.
func (f *Feed) checkNotPruned(ctx context.Context, pos store.EventPos) error {
	if pos.IsZero() {
		return nil // from the start: whatever is left
	}
	pruned, err := f.store.EventCursor(ctx, store.PrunedCursor)
	if err != nil {
		return storefault.Of(err, "events")
	}
	if pos.Less(pruned) {
		return fault.New(fault.Gone, "Events after this continuation-token are past their retention (%s) and were removed; "+
			"start again without a token, or with since-timestamp-ms", f.opts.Retention)
	}
	return nil
}

// checkBounds answers 400 for a page size outside 1 to 1000 (0 is "not
// given") and for a filter list longer than MaxFilterValues.
func checkBounds(q Query) error {
	if q.PageSize < 0 || q.PageSize > maxEventsPage {
		return fault.New(fault.BadRequest, "Invalid page-size: %d (1 to %d)", q.PageSize, maxEventsPage)
	}
	for _, l := range []struct {
		field string
		n     int
	}{{"operation-types", len(q.OperationTypes)}, {"object-types", len(q.ObjectTypes)},
		{"catalog-objects-by-name", len(q.ObjectsByName)}, {"catalog-objects-by-uuid", len(q.ObjectsByUUID)}} {
		if l.n > MaxFilterValues {
			return fault.New(fault.BadRequest, "Invalid %s: %d values, at most %d per list", l.field, l.n, MaxFilterValues)
		}
	}
	return nil
}

// eventFilter turns a query into the store's filter: 400 for a token not
// issued here, a page size or filter list out of bounds, an unknown
// object type or an empty object name.
func eventFilter(warehouse string, q Query) (store.EventFilter, error) {
	f := store.EventFilter{Warehouse: warehouse, Operations: q.OperationTypes, ObjectTypes: q.ObjectTypes, ObjectUUIDs: q.ObjectsByUUID}
	if err := checkBounds(q); err != nil {
		return f, err
	}
	if q.ContinuationToken != "" {
		pos, err := store.ParseEventToken(q.ContinuationToken)
		if err != nil {
			return f, fault.Wrap(fault.BadRequest, err, "Invalid continuation-token: not issued by this catalog")
		}
		f.After = pos
	} else if q.SinceMillis > 0 {
		f.Since = time.UnixMilli(q.SinceMillis)
	}
	for _, t := range q.ObjectTypes {
		if t != "table" && t != "view" && t != "namespace" {
			return f, fault.New(fault.BadRequest, "Invalid object-types: %q is not namespace, table or view", t)
		}
	}
	for _, o := range q.ObjectsByName {
		if len(o) == 0 || slices.Contains(o, "") {
			return f, fault.New(fault.BadRequest, "Invalid catalog-objects-by-name: an identifier needs at least one non-empty level")
		}
		// An identifier names a namespace or, by its last level, a table
		// or view in the namespace before it: both are asked for.
		f.Objects = append(f.Objects, store.EventObject{Namespace: o})
		if len(o) > 1 {
			f.Objects = append(f.Objects, store.EventObject{Namespace: o[:len(o)-1], Name: o[len(o)-1]})
		}
	}
	return f, nil
}

// visibleEvents keeps the events the caller may read, asking the
// authorizer once per object, and withholds from each kept event the
// identifiers of other objects (a rename's source) the caller may not
// read: a refusal never reveals a name, and neither does an event.
func (f *Feed) visibleEvents(ctx context.Context, events []*store.Event) ([]*store.Event, error) {
	seen := map[string]bool{}
	out := events[:0:0]
	for _, e := range events {
		r, priv := eventResource(e)
		ok, err := f.mayRead(ctx, seen, r, priv)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		kept, err := f.redactForeign(ctx, seen, e)
		if err != nil {
			return nil, err
		}
		out = append(out, kept)
	}
	return out, nil
}

// mayRead reports whether the caller holds priv on r, remembering the
// answer in seen. Refused (403) or hidden (the 404 of an object the caller
// may not see) is false; anything else (503) is an error.
func (f *Feed) mayRead(ctx context.Context, seen map[string]bool, r access.Resource, priv access.Privilege) (bool, error) {
	key := string(r.Kind) + "\x00" + ident.Ident{Namespace: r.Namespace, Name: r.Name}.String()
	if ok, known := seen[key]; known {
		return ok, nil
	}
	err := f.tables.Authorize(ctx, priv, r)
	if err != nil && !fault.Refused(err) {
		return false, err
	}
	seen[key] = err == nil
	return err == nil, nil
}

// redactForeign returns e, or a copy of it whose identifiers of objects
// the caller may not read are replaced (changeevents.Redact). An
// identifier that cannot be read from the event is withheld too.
func (f *Feed) redactForeign(ctx context.Context, seen map[string]bool, e *store.Event) (*store.Event, error) {
	var hide []string
	for _, fi := range changeevents.ForeignIdents(e.Operation, e.Body) {
		if len(fi.Namespace) == 0 || fi.Name == "" {
			hide = append(hide, fi.Field)
			continue
		}
		other := &store.Event{Warehouse: e.Warehouse, Namespace: fi.Namespace, Name: fi.Name, ObjectType: e.ObjectType}
		r, priv := eventResource(other)
		ok, err := f.mayRead(ctx, seen, r, priv)
		if err != nil {
			return nil, err
		}
		if !ok {
			hide = append(hide, fi.Field)
		}
	}
	if len(hide) == 0 {
		return e, nil
	}
	c := *e
	c.Body = changeevents.Redact(e.Operation, e.Body, hide)
	return &c, nil
}

// eventResource is what reading an event's object needs.
func eventResource(e *store.Event) (access.Resource, access.Privilege) {
	switch e.ObjectType {
	case string(store.KindTable):
		return access.TableResource(e.Warehouse, e.Namespace, e.Name), access.PrivTableReadMetadata
	case string(store.KindView):
		return access.ViewResource(e.Warehouse, e.Namespace, e.Name), access.PrivViewRead
	case string(store.KindFunction): // as loadFunction: view-read on its namespace
		return access.NamespaceResource(e.Warehouse, e.Namespace), access.PrivViewRead
	}
	return access.NamespaceResource(e.Warehouse, e.Namespace), access.PrivNamespaceList
}

// Jobs are the jobs events need to exist on any replica that runs
// workers: the hourly prune and one delivery job per configured sink.
// They are unique, so enqueueing them again is a no-op.
func (f *Feed) Jobs() []store.Job {
	if !f.On() {
		return nil
	}
	jobs := []store.Job{{Kind: JobPruneEvents, Unique: true}}
	for _, sk := range f.opts.Sinks {
		jobs = append(jobs, store.Job{Kind: jobDeliverPrefix + sk.Name(), Unique: true})
	}
	return jobs
}

// Handlers adds the handlers of Jobs to h.
func (f *Feed) Handlers(h map[string]store.JobHandler) {
	if !f.On() {
		return
	}
	h[JobPruneEvents] = f.runPruneEvents
	for _, sk := range f.opts.Sinks {
		h[jobDeliverPrefix+sk.Name()] = f.deliverHandler(sk)
	}
}

// runPruneEvents removes events past the retention, then runs again in an
// hour.
func (f *Feed) runPruneEvents(ctx context.Context, _ *store.JobInfo) error {
	if _, err := f.store.PruneEvents(ctx, f.tables.Now().Add(-f.opts.Retention)); err != nil {
		return errors.New("prune-events: " + fault.ClientText(storefault.Of(err, "events")))
	}
	return &store.JobSnooze{After: time.Hour}
}

// Delivery pacing: a delivery job runs for deliverRound, sending batches
// as long as events wait and looking again every deliverPoll when none
// does, then hands its slot back (snoozed, so that it stays the sink's
// only job). A failing destination is retried with a doubling pause up to
// deliverBackoffMax; events stay in order behind the one that failed.
const (
	deliverRound      = 20 * time.Second
	deliverPoll       = 200 * time.Millisecond
	deliverBatch      = 100
	deliverBackoffMax = 10 * time.Second
)

// deliverHandler is the deliver-events job of one sink.
func (f *Feed) deliverHandler(sk eventsink.Sink) store.JobHandler {
	return func(ctx context.Context, _ *store.JobInfo) error {
		source := f.opts.Source
		if source == "" {
			source = "/lakehold"
		}
		end := time.Now().Add(deliverRound)
		pause := deliverPoll
		for time.Now().Before(end) {
			n, err := eventsink.Deliver(ctx, f.store, sk, source, deliverBatch)
			if f.opts.OnDelivery != nil {
				f.opts.OnDelivery(sk.Name(), n, err)
			}
			switch {
			case err != nil:
				f.log.WarnContext(ctx, "events: delivery failed; retrying", "sink", sk.Name(), "delivered", n, "error", err.Error())
				pause = min(2*pause, deliverBackoffMax)
			case n > 0:
				pause = deliverPoll
				continue
			default:
				pause = deliverPoll
			}
			if !sleepCtx(ctx, pause) {
				return ctx.Err()
			}
		}
		return &store.JobSnooze{After: 0}
	}
}

// sleepCtx waits d or until ctx ends; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

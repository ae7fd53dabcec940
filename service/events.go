package service

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/view"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/eventsink"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/store"
)

// EventOptions configure change events: every committed change is written
// to the outbox in its own transaction (store.WithEvents), read back by
// POST /v1/{prefix}/events and delivered to Sinks by background jobs.
type EventOptions struct {
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

// eventsOn reports whether changes record events.
func (s *Service) eventsOn() bool { return s.opts.Events.Retention > 0 }

// who names the request making a change, for its events.
func who(ctx context.Context) changeevents.Who {
	return changeevents.Who{RequestID: RequestIDFrom(ctx), Actor: identity.From(ctx).String()}
}

// withEvent returns ctx carrying the event build makes for the next store
// change. build runs only when events are on: building one sanitizes the
// change's JSON, work no commit should do for nothing.
func (s *Service) withEvent(ctx context.Context, build func() store.Event) context.Context {
	if !s.eventsOn() {
		return ctx
	}
	return store.WithEvents(ctx, build())
}

// addEvent adds the event build makes to a commit attempt, when events are
// on (withEvent).
func (s *Service) addEvent(a *attempt, build func() store.Event) {
	if s.eventsOn() {
		a.events = append(a.events, build())
	}
}

// dropOp is the drop operation of a kind of object.
func dropOp(kind store.ObjectKind) string {
	if kind == store.KindView {
		return changeevents.DropView
	}
	return changeevents.DropTable
}

// updateEvent is c's update-table event for the table as staged (meta).
// Building it sanitizes the client's updates; each attempt of the commit
// reuses it while the table's UUID and location stay what they were.
func (c *parsedChange) updateEvent(ctx context.Context, warehouse string, meta table.Metadata) store.Event {
	o := tableObject(warehouse, c.Ident, meta)
	if key := o.UUID + " " + o.Location; c.event == nil || c.eventKey != key {
		ev := changeevents.Update(o, who(ctx), c.Updates, c.Requirements)
		c.event, c.eventKey = &ev, key
	}
	return *c.event
}

// objectOf names obj for its events; its UUID is read from its metadata.
func objectOf(obj *store.Object) changeevents.Object {
	return changeevents.Object{Warehouse: obj.Warehouse, Namespace: obj.Namespace, Name: obj.Name, Kind: obj.Kind,
		UUID: metadataUUID(obj.Metadata), Location: obj.Location}
}

// metadataUUID reads table-uuid or view-uuid from a metadata document (""
// when it has neither).
func metadataUUID(doc []byte) string {
	var head struct {
		Table string `json:"table-uuid"`
		View  string `json:"view-uuid"`
	}
	_ = json.Unmarshal(doc, &head) // an object without one still has events
	if head.Table != "" {
		return head.Table
	}
	return head.View
}

// tableObject names a table by its new metadata.
func tableObject(warehouse string, id Ident, meta table.Metadata) changeevents.Object {
	return changeevents.Object{Warehouse: warehouse, Namespace: id.Namespace, Name: id.Name, Kind: store.KindTable,
		UUID: meta.TableUUID().String(), Location: meta.Location()}
}

// snapshotUpdates describes a snapshot commit the catalog built itself (a
// v4 files, column-files or compaction commit) as the updates a client
// would have sent: add-snapshot of the new head of main, set-snapshot-ref.
func snapshotUpdates(meta table.Metadata) json.RawMessage {
	snap := meta.CurrentSnapshot()
	if snap == nil {
		return json.RawMessage("[]")
	}
	raw, err := json.Marshal([]any{
		map[string]any{"action": "add-snapshot", "snapshot": snap},
		map[string]any{"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snap.SnapshotID},
	})
	if err != nil {
		return json.RawMessage("[]")
	}
	return raw
}

// EventsQuery is a POST /v1/{prefix}/events request (the REST events
// proposal's QueryEventsRequest).
type EventsQuery struct {
	ContinuationToken string
	PageSize          int
	SinceMillis       int64
	OperationTypes    []string
	ObjectsByName     [][]string
	ObjectsByUUID     []string
	ObjectTypes       []string
}

// EventsPage is one page of events and the token to continue from, which
// is returned even when no event is left so that the caller can ask again
// later for newer ones.
type EventsPage struct {
	ContinuationToken string
	Events            []changeevents.RESTEvent
}

// One page of events: 100 unless asked, at most 1000.
const (
	defaultEventsPage = 100
	maxEventsPage     = 1000
)

// QueryEvents lists a warehouse's events in commit order (in order per
// table) after the query's continuation token. The caller sees only events
// of objects it may read (table-read-metadata, view-read, namespace-list):
// a page may hold fewer events than asked while the token still moves on.
// Errors: 404 when events are off or the warehouse is missing, 400 for a
// bad token, page size or object name, 503 when the database is away.
func (s *Service) QueryEvents(ctx context.Context, warehouse string, q EventsQuery) (*EventsPage, error) {
	if !s.eventsOn() {
		return nil, fault.New(fault.NotFound, "Change events are not enabled on this catalog (--events-retention 0)")
	}
	if _, err := s.warehouse(ctx, warehouse); err != nil {
		return nil, err
	}
	f, err := eventFilter(warehouse, q)
	if err != nil {
		return nil, err
	}
	if err := s.checkNotPruned(ctx, f.After); err != nil {
		return nil, err
	}
	size := min(q.PageSize, maxEventsPage)
	if size <= 0 {
		size = defaultEventsPage
	}
	events, err := s.store.ListEvents(ctx, f, size)
	if err != nil {
		return nil, storeErr(err, warehouse)
	}
	page := &EventsPage{ContinuationToken: f.After.Token()}
	if len(events) > 0 {
		page.ContinuationToken = events[len(events)-1].Pos.Token()
	}
	visible, err := s.visibleEvents(ctx, events)
	if err != nil {
		return nil, err
	}
	page.Events = changeevents.REST(visible)
	return page, nil
}

// checkNotPruned answers 410 Gone when events past pos were pruned before
// the caller read them: its continuation-token would silently skip them.
func (s *Service) checkNotPruned(ctx context.Context, pos store.EventPos) error {
	if pos.IsZero() {
		return nil // from the start: whatever is left
	}
	pruned, err := s.store.EventCursor(ctx, store.PrunedCursor)
	if err != nil {
		return storeErr(err, "events")
	}
	if pos.Less(pruned) {
		return fault.New(fault.Gone, "Events after this continuation-token are past their retention (%s) and were removed; "+
			"start again without a token, or with since-timestamp-ms", s.opts.Events.Retention)
	}
	return nil
}

// eventFilter turns a query into the store's filter: 400 for a token not
// issued here, an unknown object type or an empty object name.
func eventFilter(warehouse string, q EventsQuery) (store.EventFilter, error) {
	f := store.EventFilter{Warehouse: warehouse, Operations: q.OperationTypes, ObjectTypes: q.ObjectTypes, ObjectUUIDs: q.ObjectsByUUID}
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
// authorizer once per object.
func (s *Service) visibleEvents(ctx context.Context, events []*store.Event) ([]*store.Event, error) {
	seen := map[string]bool{}
	out := events[:0:0]
	for _, e := range events {
		r, priv := eventResource(e)
		key := string(r.Kind) + "\x00" + Ident{Namespace: r.Namespace, Name: r.Name}.String()
		ok, known := seen[key]
		if !known {
			err := s.authorize(ctx, priv, r)
			// Refused (403) or hidden (the 404 of an object the caller may
			// not see): not listed. Anything else (503) fails the page.
			if err != nil && !fault.Refused(err) {
				return nil, err
			}
			ok = err == nil
			seen[key] = ok
		}
		if ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// eventResource is what reading an event's object needs.
func eventResource(e *store.Event) (Resource, Privilege) {
	id := Ident{Namespace: e.Namespace, Name: e.Name}
	switch e.ObjectType {
	case string(store.KindTable):
		return tableResource(e.Warehouse, id), PrivTableReadMetadata
	case string(store.KindView):
		return viewResource(e.Warehouse, id), PrivViewRead
	}
	return namespaceResource(e.Warehouse, e.Namespace), PrivNamespaceList
}

// EventJobs are the jobs events need to exist on any replica that runs
// workers: the hourly prune and one delivery job per configured sink.
// They are unique, so enqueueing them again is a no-op.
func (s *Service) EventJobs() []store.Job {
	if !s.eventsOn() {
		return nil
	}
	jobs := []store.Job{{Kind: JobPruneEvents, Unique: true}}
	for _, sk := range s.opts.Events.Sinks {
		jobs = append(jobs, store.Job{Kind: jobDeliverPrefix + sk.Name(), Unique: true})
	}
	return jobs
}

// eventHandlers are the handlers of EventJobs.
func (s *Service) eventHandlers(h map[string]store.JobHandler) {
	if !s.eventsOn() {
		return
	}
	h[JobPruneEvents] = s.runPruneEvents
	for _, sk := range s.opts.Events.Sinks {
		h[jobDeliverPrefix+sk.Name()] = s.deliverHandler(sk)
	}
}

// runPruneEvents removes events past the retention, then runs again in an
// hour.
func (s *Service) runPruneEvents(ctx context.Context, _ *store.JobInfo) error {
	if _, err := s.store.PruneEvents(ctx, s.now().Add(-s.opts.Events.Retention)); err != nil {
		return errors.New("prune-events: " + clientText(storeErr(err, "events")))
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
func (s *Service) deliverHandler(sk eventsink.Sink) store.JobHandler {
	return func(ctx context.Context, _ *store.JobInfo) error {
		source := s.opts.Events.Source
		if source == "" {
			source = "/lakehold"
		}
		end := time.Now().Add(deliverRound)
		pause := deliverPoll
		for time.Now().Before(end) {
			n, err := eventsink.Deliver(ctx, s.store, sk, source, deliverBatch)
			if s.opts.Events.OnDelivery != nil {
				s.opts.Events.OnDelivery(sk.Name(), n, err)
			}
			switch {
			case err != nil:
				s.log.WarnContext(ctx, "events: delivery failed; retrying", "sink", sk.Name(), "delivered", n, "error", err.Error())
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

// createUpdates describes a table created from a create request as the
// updates of a create transaction: the UUID, format version, schema,
// spec, sort order, location and properties it got.
func createUpdates(meta table.Metadata, version int) json.RawMessage {
	ups := table.Updates{table.NewAssignUUIDUpdate(meta.TableUUID()), table.NewUpgradeFormatVersionUpdate(version)}
	if sc := meta.CurrentSchema(); sc != nil {
		ups = append(ups, table.NewAddSchemaUpdate(sc), table.NewSetCurrentSchemaUpdate(-1))
	}
	spec := meta.PartitionSpec()
	ups = append(ups, table.NewAddPartitionSpecUpdate(&spec, true), table.NewSetDefaultSpecUpdate(-1))
	order := meta.SortOrder()
	ups = append(ups, table.NewAddSortOrderUpdate(&order), table.NewSetDefaultSortOrderUpdate(-1),
		table.NewSetLocationUpdate(meta.Location()), table.NewSetPropertiesUpdate(meta.Properties()))
	raw, err := json.Marshal(ups)
	if err != nil {
		return json.RawMessage("[]")
	}
	return raw
}

// viewObject names a view by its new metadata.
func viewObject(warehouse string, id Ident, meta view.Metadata) changeevents.Object {
	return changeevents.Object{Warehouse: warehouse, Namespace: id.Namespace, Name: id.Name, Kind: store.KindView,
		UUID: meta.ViewUUID().String(), Location: meta.Location()}
}

// docObject names a table or view by its metadata document (UUID and
// location; without a location every path is withheld from the event).
func docObject(warehouse string, id Ident, kind store.ObjectKind, doc []byte) changeevents.Object {
	var head struct {
		Location string `json:"location"`
	}
	_ = json.Unmarshal(doc, &head)
	return changeevents.Object{Warehouse: warehouse, Namespace: id.Namespace, Name: id.Name, Kind: kind,
		UUID: metadataUUID(doc), Location: head.Location}
}

// viewCreateUpdates describes a created view as the updates that build it
// (the REST events proposal's create-view needs them): its UUID, format
// version, location, properties, schemas and version.
func viewCreateUpdates(doc []byte) json.RawMessage {
	var m struct {
		UUID     string            `json:"view-uuid"`
		Format   int               `json:"format-version"`
		Location string            `json:"location"`
		Props    map[string]string `json:"properties"`
		Schemas  []json.RawMessage `json:"schemas"`
		Versions []json.RawMessage `json:"versions"`
	}
	if json.Unmarshal(doc, &m) != nil {
		return json.RawMessage("[]")
	}
	ups := []any{
		map[string]any{"action": "assign-uuid", "uuid": m.UUID},
		map[string]any{"action": "upgrade-format-version", "format-version": m.Format},
		map[string]any{"action": "set-location", "location": m.Location},
		map[string]any{"action": "set-properties", "updates": m.Props},
	}
	for _, sc := range m.Schemas {
		ups = append(ups, map[string]any{"action": "add-schema", "schema": sc})
	}
	for _, v := range m.Versions {
		ups = append(ups, map[string]any{"action": "add-view-version", "view-version": v})
	}
	ups = append(ups, map[string]any{"action": "set-current-view-version", "view-version-id": -1})
	raw, err := json.Marshal(ups)
	if err != nil {
		return json.RawMessage("[]")
	}
	return raw
}

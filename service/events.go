package service

import (
	"context"
	"encoding/json"

	"github.com/lakehold/catalog/service/commitengine"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/service/changefeed"
	"github.com/lakehold/catalog/store"
)

// Change events are read back, pruned and delivered by package changefeed;
// these names keep the service's API whole.
type (
	// EventOptions configure change events (changefeed.Options).
	EventOptions = changefeed.Options
	// EventsQuery is a POST /v1/{prefix}/events request (changefeed.Query).
	EventsQuery = changefeed.Query
	// EventsPage is one page of events (changefeed.Page).
	EventsPage = changefeed.Page
)

// JobPruneEvents is the job kind that removes events past their retention.
const JobPruneEvents = changefeed.JobPruneEvents

// QueryEvents lists a warehouse's events (changefeed.Feed.Query, which
// says what is returned when).
func (s *Service) QueryEvents(ctx context.Context, warehouse string, q EventsQuery) (*EventsPage, error) {
	return s.feed.Query(ctx, warehouse, q)
}

// EventJobs are the jobs events need on a replica that runs workers
// (changefeed.Feed.Jobs).
func (s *Service) EventJobs() []store.Job { return s.feed.Jobs() }

// eventsOn reports whether changes record events.
func (s *Service) eventsOn() bool { return s.feed.On() }

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
func (s *Service) addEvent(a *commitengine.Attempt, build func() store.Event) {
	if s.eventsOn() {
		a.Events = append(a.Events, build())
	}
}

// dropOp is the drop operation of a kind of object.
func dropOp(kind store.ObjectKind) string {
	if kind == store.KindView {
		return changeevents.DropView
	}
	return changeevents.DropTable
}

// objectOf names obj for its events; its UUID is read from its metadata.
func objectOf(obj *store.Object) changeevents.Object {
	return changeevents.Object{Warehouse: obj.Warehouse, Namespace: obj.Namespace, Name: obj.Name, Kind: obj.Kind,
		UUID: changeevents.MetadataUUID(obj.Metadata), Location: obj.Location}
}

// tableObject names a table by its new metadata.
func tableObject(warehouse string, id Ident, meta table.Metadata) changeevents.Object {
	return changeevents.Object{Warehouse: warehouse, Namespace: id.Namespace, Name: id.Name, Kind: store.KindTable,
		UUID: meta.TableUUID().String(), Location: meta.Location()}
}

// docObject names a table or view by its metadata document (UUID and
// location; without a location every path is withheld from the event).
func docObject(warehouse string, id Ident, kind store.ObjectKind, doc []byte) changeevents.Object {
	var head struct {
		Location string `json:"location"`
	}
	_ = json.Unmarshal(doc, &head)
	return changeevents.Object{Warehouse: warehouse, Namespace: id.Namespace, Name: id.Name, Kind: kind,
		UUID: changeevents.MetadataUUID(doc), Location: head.Location}
}

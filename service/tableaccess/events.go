package tableaccess

import (
	"context"
	"encoding/json"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/store"
)

// EventsOn reports whether changes record events.
func (a *Access) EventsOn() bool { return a.opts.EventsOn }

// WithEvent returns ctx carrying the event build makes for the next store
// change. build runs only when events are on: building one sanitizes the
// change's JSON, work no commit should do for nothing.
func (a *Access) WithEvent(ctx context.Context, build func() store.Event) context.Context {
	if !a.opts.EventsOn {
		return ctx
	}
	return store.WithEvents(ctx, build())
}

// AddEvent adds the event build makes to a commit attempt, when events are
// on (WithEvent).
func (a *Access) AddEvent(at *commitengine.Attempt, build func() store.Event) {
	if a.opts.EventsOn {
		at.Events = append(at.Events, build())
	}
}

// Who names the request making a change, for its events.
func Who(ctx context.Context) changeevents.Who {
	return changeevents.Who{RequestID: access.RequestIDFrom(ctx), Actor: identity.From(ctx).String()}
}

// ObjectOf names obj for its events; its UUID is read from its metadata.
func ObjectOf(obj *store.Object) changeevents.Object {
	return changeevents.Object{Warehouse: obj.Warehouse, Namespace: obj.Namespace, Name: obj.Name, Kind: obj.Kind,
		UUID: changeevents.MetadataUUID(obj.Metadata), Location: obj.Location}
}

// TableObject names a table by its new metadata.
func TableObject(warehouse string, id ident.Ident, meta table.Metadata) changeevents.Object {
	return changeevents.Object{Warehouse: warehouse, Namespace: id.Namespace, Name: id.Name, Kind: store.KindTable,
		UUID: meta.TableUUID().String(), Location: meta.Location()}
}

// DocObject names a table or view by its metadata document (UUID and
// location; without a location every path is withheld from the event).
func DocObject(warehouse string, id ident.Ident, kind store.ObjectKind, doc []byte) changeevents.Object {
	var head struct {
		Location string `json:"location"`
	}
	_ = json.Unmarshal(doc, &head)
	return changeevents.Object{Warehouse: warehouse, Namespace: id.Namespace, Name: id.Name, Kind: kind,
		UUID: changeevents.MetadataUUID(doc), Location: head.Location}
}

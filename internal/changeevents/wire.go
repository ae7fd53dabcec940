package changeevents

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/lakehold/catalog/store"
)

// RESTEvent is an Event of the REST events proposal (POST
// /v1/{prefix}/events).
type RESTEvent struct {
	EventID string `json:"event-id"`
	// RequestID is the request that made the change; RequestEventCount
	// how many events that request made.
	RequestID         string            `json:"request-id"`
	RequestEventCount int               `json:"request-event-count"`
	TimestampMS       int64             `json:"timestamp-ms"`
	Actor             map[string]string `json:"actor,omitempty"`
	Operation         json.RawMessage   `json:"operation"`
}

// REST renders events in the proposal's shape. request-event-count is how
// many events the change wrote (one per table of a multi-table
// transaction); an event whose request is unknown (a background job's
// change) names itself as its request.
func REST(events []*store.Event) []RESTEvent {
	out := make([]RESTEvent, len(events))
	for i, e := range events {
		r := RESTEvent{EventID: e.ID, RequestID: e.RequestID, RequestEventCount: max(1, e.RequestEvents),
			TimestampMS: e.At.UnixMilli(), Operation: e.Body}
		if e.RequestID == "" {
			r.RequestID = e.ID
		}
		if e.Actor != "" {
			r.Actor = map[string]string{"id": e.Actor}
		}
		out[i] = r
	}
	return out
}

// CloudEventType is the CloudEvents type of an operation:
// "io.lakehold.catalog." and the operation type without any x- prefix.
func CloudEventType(op string) string {
	return "io.lakehold.catalog." + strings.TrimPrefix(op, "x-lakehold.")
}

// CloudEvent is an event as a CloudEvents 1.0 structured-mode JSON
// document. source identifies this catalog (a URI reference, e.g. its
// public URL); the extension attributes warehouse, namespace, objecttype,
// objectuuid, operation and requestid let brokers and consumers route and
// filter without parsing data, which holds the REST Event.
func CloudEvent(e *store.Event, source string) ([]byte, error) {
	rest := REST([]*store.Event{e})[0]
	doc := map[string]any{
		"specversion":     "1.0",
		"id":              e.ID,
		"source":          source,
		"type":            CloudEventType(e.Operation),
		"subject":         Subject(e),
		"time":            e.At.UTC().Format(time.RFC3339Nano),
		"datacontenttype": "application/json",
		"data":            rest,
		"warehouse":       e.Warehouse,
		"namespace":       strings.Join(e.Namespace, "."),
		"objecttype":      e.ObjectType,
		"operation":       e.Operation,
	}
	if e.ObjectUUID != "" {
		doc["objectuuid"] = e.ObjectUUID
	}
	if e.RequestID != "" {
		doc["requestid"] = e.RequestID
	}
	return json.Marshal(doc)
}

// Subject names the event's object as "warehouse/ns1.ns2/name" (without
// "/name" for a namespace).
func Subject(e *store.Event) string {
	s := e.Warehouse + "/" + strings.Join(e.Namespace, ".")
	if e.Name != "" {
		s += "/" + e.Name
	}
	return s
}

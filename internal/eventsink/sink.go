// Package eventsink delivers the catalog's change events from the outbox
// (store.Events) to brokers and webhooks: at least once, in outbox order
// (so in order per table), as CloudEvents 1.0 structured JSON. A sink is
// one destination; Deliver moves one batch from the outbox to it and
// advances the sink's cursor only past what the destination acknowledged.
package eventsink

import (
	"context"
	"errors"
	"fmt"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/store"
)

// Message is one event as a sink sends it.
type Message struct {
	// ID is the event id: brokers de-duplicate by it (NATS's Nats-Msg-Id,
	// the webhook-id header), and so should consumers.
	ID string
	// Operation is the event's operation type (create-table, ...).
	Operation string
	// Body is the CloudEvents structured JSON document.
	Body []byte
}

// Sink is a destination of events.
type Sink interface {
	// Name keys the sink's cursor in the outbox ("nats", "webhook"); two
	// replicas configured with the same sink share it.
	Name() string
	// Publish sends msgs in order and returns how many leading messages the
	// destination acknowledged; an error says why the next one was not.
	// The error text must name no secret (it is logged and listed with the
	// job).
	Publish(ctx context.Context, msgs []Message) (int, error)
	// Close releases connections.
	Close() error
}

// ErrNotDelivered wraps a sink's failure to deliver.
var ErrNotDelivered = errors.New("events not delivered")

// ErrMissed is returned once when events were pruned (past their
// retention) before the sink delivered them; its cursor then moves past
// the gap so that delivery goes on.
var ErrMissed = errors.New("events pruned before they were delivered")

// Deliver sends the next batch (up to limit events) past sink's cursor and
// advances the cursor past what was acknowledged. It returns how many
// events were delivered; an error means the batch stopped early (the rest
// is sent again by the next call) or the outbox could not be read.
func Deliver(ctx context.Context, st store.Events, sink Sink, source string, limit int) (int, error) {
	pos, err := st.EventCursor(ctx, sink.Name())
	if err != nil {
		return 0, err
	}
	pruned, err := st.EventCursor(ctx, store.PrunedCursor)
	if err != nil {
		return 0, err
	}
	if !pos.IsZero() && pos.Less(pruned) {
		if err := st.SetEventCursor(ctx, sink.Name(), pruned); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("%w: sink %s", ErrMissed, sink.Name())
	}
	events, err := st.ListEvents(ctx, store.EventFilter{After: pos}, limit)
	if err != nil || len(events) == 0 {
		return 0, err
	}
	msgs := make([]Message, len(events))
	for i, e := range events {
		body, err := changeevents.CloudEvent(e, source)
		if err != nil {
			return 0, fmt.Errorf("encode event %s: %w", e.ID, err)
		}
		msgs[i] = Message{ID: e.ID, Operation: e.Operation, Body: body}
	}
	n, perr := sink.Publish(ctx, msgs)
	n = max(0, min(n, len(events)))
	if n > 0 {
		if err := st.SetEventCursor(ctx, sink.Name(), events[n-1].Pos); err != nil {
			return n, err
		}
	}
	if perr != nil {
		return n, fmt.Errorf("%w to %s: %w", ErrNotDelivered, sink.Name(), perr)
	}
	return n, nil
}

package store

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/lakehold/catalog/internal/tracing"
)

// Database systems, as WithTracing's system names them in spans.
const (
	SystemPostgres = "postgresql"
	SystemSQLite   = "sqlite"
)

// traced is a Store whose calls are spans: one per call, named after the
// method, with the database system and the operation (never SQL, its
// parameters or the values passed). Calls outside a recording span
// (start-up, background flushes) pass through without one.
type traced struct {
	Store
	tracer trace.Tracer
	attrs  trace.SpanStartEventOption
}

// WithTracing returns st with a span around each call when tp is set (nil
// returns st itself). system is SystemPostgres or SystemSQLite. The
// result also answers PoolStats when st does.
func WithTracing(st Store, tp trace.TracerProvider, system string) Store {
	if tp == nil {
		return st
	}
	return &traced{Store: st, tracer: tracing.Tracer(tp), attrs: trace.WithAttributes(semconv.DBSystemNameKey.String(system))}
}

func (t *traced) start(ctx context.Context, op string) (context.Context, trace.Span) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, nil // before building the options: an unsampled request pays nothing
	}
	return tracing.Child(ctx, t.tracer, "store."+op, trace.WithSpanKind(trace.SpanKindClient), t.attrs,
		trace.WithAttributes(semconv.DBOperationName(op)))
}

// end ends span and returns err. A missing row is an answer, not a failed
// call: it is only noted (error.type); every other error fails the span
// with its class.
func (t *traced) end(span trace.Span, err error) error {
	if span == nil {
		return err
	}
	if err != nil {
		class := errorClass(err)
		span.SetAttributes(attribute.String(string(semconv.ErrorTypeKey), class))
		if !errors.Is(err, ErrNotFound) {
			tracing.Fail(span, class)
		}
	}
	span.End()
	return err
}

// errorClass names the store sentinel err carries: a fixed label for span
// status, where the error's text (which names values) must not go.
func errorClass(err error) string {
	for _, c := range []struct {
		err   error
		label string
	}{
		{ErrNotFound, "not_found"}, {ErrAlreadyExists, "already_exists"}, {ErrNotEmpty, "not_empty"},
		{ErrConflict, "conflict"}, {ErrLocationOverlap, "location_overlap"}, {ErrInvalidPageToken, "invalid_page_token"},
		{ErrOutcomeUnknown, "outcome_unknown"}, {ErrUnavailable, "unavailable"}, {ErrInvalidValue, "invalid_value"},
		{ErrNotHeld, "not_held"}, {ErrDatabase, "database"},
		{context.Canceled, "cancelled"}, {context.DeadlineExceeded, "deadline"},
	} {
		if errors.Is(err, c.err) {
			return c.label
		}
	}
	return "error"
}

// PrepareSwap is local work (compression), not a database call.
func (t *traced) PrepareSwap(sw *Swap) { t.Store.PrepareSwap(sw) }

// Close is not traced: it runs after the last request.
func (t *traced) Close() { t.Store.Close() }

// PoolStats forwards the pool statistics of stores that have a pool.
func (t *traced) PoolStats() (acquired, idle, total int32, ok bool) {
	if ps, isPool := t.Store.(interface {
		PoolStats() (int32, int32, int32, bool)
	}); isPool {
		return ps.PoolStats()
	}
	return 0, 0, 0, false
}

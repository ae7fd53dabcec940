package tracing

import (
	"context"

	"go.opentelemetry.io/otel/trace"
)

// Child starts a span named name under the span in ctx, but only when that
// one is recording: the catalog's seams (database, object storage, token
// calls) add detail to a sampled request's trace and never start traces of
// their own, so background work (audit flushes) and unsampled requests
// cost no spans. It returns ctx and a nil span otherwise; End accepts
// that. A nil tracer (tracing off) starts nothing.
func Child(ctx context.Context, tracer trace.Tracer, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if tracer == nil || !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, nil
	}
	return tracer.Start(ctx, name, opts...)
}

// End ends a span from Child (nothing for nil), failed with label when
// label is not empty (see Fail for what a label may be).
func End(span trace.Span, label string) {
	if span == nil {
		return
	}
	if label != "" {
		Fail(span, label)
	}
	span.End()
}

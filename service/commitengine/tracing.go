package commitengine

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/lakehold/catalog/internal/tracing"
)

// Attributes of a commit attempt's span.
const (
	attrAttempt = attribute.Key("catalog.commit.attempt")
	attrOutcome = attribute.Key("catalog.commit.outcome")
)

// startAttempt starts the span of commit attempt number try; the stage's
// loads and file writes and the swap are its children. nil when tracing
// is off or the request is not sampled.
func (e *Engine) startAttempt(ctx context.Context, try int) (context.Context, trace.Span) {
	return tracing.Child(ctx, e.opts.Tracer, "commit.attempt", trace.WithAttributes(attrAttempt.Int(try)))
}

// endAttempt records the attempt's outcome (a commit outcome label, or
// conflict_retry). Our failures (5xx: error, unknown, unavailable) fail
// the span with the outcome as its only description; the client's
// mistakes and lost races are outcomes, not failures of the catalog.
func endAttempt(span trace.Span, outcome string) {
	if span == nil {
		return
	}
	span.SetAttributes(attrOutcome.String(outcome))
	label := ""
	switch outcome {
	case OutcomeError, OutcomeUnknown, OutcomeUnavailable:
		label = outcome
	}
	tracing.End(span, label)
}

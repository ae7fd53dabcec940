// Package tracing is what the catalog's instrumented seams (server,
// service, store, storage, vending, authn) share: the tracer of a
// provider, child spans that exist only under a recording request span, and
// failure labels that never carry an error's text. Everywhere in the
// catalog a nil trace.TracerProvider means tracing is off, so that the
// seams skip span work entirely rather than feeding a no-op tracer. It
// depends on the OpenTelemetry API only; the exporter, with its HTTP client,
// is set up by tracing/otlpexport, which only cmd/catalog imports.
package tracing

import (
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Scope names the catalog's instrumentation in every span it exports.
const Scope = "github.com/lakehold/catalog"

// Tracer is tp's tracer for the catalog, nil when tp is (tracing off).
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return nil
	}
	return tp.Tracer(Scope)
}

// Fail marks span as failed. label must be a fixed, short classification
// (an ErrorModel type, a store or storage error class, a commit outcome):
// never an error's text, which can carry driver messages, paths or
// credentials.
func Fail(span trace.Span, label string) {
	span.SetStatus(codes.Error, label)
}

package authn

import (
	"context"
	"net/url"

	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/lakehold/catalog/internal/tracing"
)

// startFetch starts the span of a fetch from the OIDC provider: discovery
// (at start-up, the root of its own trace) or the JWKS (under the request
// whose token named an unknown key). It names the provider's host only,
// never the URL's path or query, nor a token.
func startFetch(ctx context.Context, tracer trace.Tracer, name, rawURL string, root bool) (context.Context, trace.Span) {
	if tracer == nil || !root && !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, nil
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	if u, err := url.Parse(rawURL); err == nil && u.Hostname() != "" {
		opts = append(opts, trace.WithAttributes(semconv.ServerAddress(u.Hostname())))
	}
	return tracer.Start(ctx, name, opts...)
}

// endFetch ends span; a failure is labelled "error", never with the
// error's text (which quotes URLs and response bodies).
func endFetch(span trace.Span, err error) {
	label := ""
	if err != nil {
		label = "error"
	}
	tracing.End(span, label)
}

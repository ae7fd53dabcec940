package vending

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/lakehold/catalog/internal/tracing"
)

// Option configures the vendors New returns.
type Option func(*Multi)

// WithTracerProvider makes every token service call (STS AssumeRole,
// Google STS downscoping, Azure delegation keys) a span under the request's span; nil: none.
// Cache hits are not calls and have no span.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(m *Multi) {
		t := tracing.Tracer(tp)
		if m.S3 != nil {
			m.S3.tracer = t
		}
		if m.GCS != nil {
			m.GCS.tracer = t
		}
		if m.ADLS != nil {
			m.ADLS.tracer = t
		}
	}
}

// attrAccess is the access level asked for: read or read-write.
const attrAccess = attribute.Key("catalog.vend.access")

// startCall starts the span of one token service call. Its attributes are
// the cloud and the access level only: no role, session name, policy,
// key or returned credential.
func startCall(ctx context.Context, tracer trace.Tracer, name string, cloud attribute.KeyValue, access string) (context.Context, trace.Span) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, nil
	}
	return tracing.Child(ctx, tracer, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(cloud, attrAccess.String(access)))
}

// endCall ends span; a failed call is labelled "error" only, since STS
// errors quote request details.
func endCall(span trace.Span, err error) {
	label := ""
	if err != nil {
		label = "error"
	}
	tracing.End(span, label)
}

var (
	cloudAWS   = semconv.CloudProviderAWS
	cloudGCP   = semconv.CloudProviderGCP
	cloudAzure = semconv.CloudProviderAzure
)

// Package otlpexport starts the catalog's OpenTelemetry tracing. It is off
// unless an OTLP endpoint is configured (a flag, or the standard
// OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// variables); spans then leave in batches over OTLP/HTTP. Only cmd/catalog
// imports it: the layers below see a trace.TracerProvider and nothing of
// the exporter.
package otlpexport

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// DefaultServiceName is the service.name of exported spans unless
// OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) says
// otherwise.
const DefaultServiceName = "lakehold"

// tracesPath is where an OTLP/HTTP collector takes spans.
const tracesPath = "/v1/traces"

// Config configures Start.
type Config struct {
	// Endpoint is the collector's base URL, http(s)://host:port; spans go
	// to its /v1/traces unless the URL names another path. Empty leaves
	// the choice to the OTEL_EXPORTER_OTLP_* variables.
	Endpoint string
	// ServiceVersion is exported as service.version when set.
	ServiceVersion string
}

// Enabled reports whether c or the environment asks for tracing:
// OTEL_SDK_DISABLED=true wins over both.
func (c Config) Enabled() bool {
	if v, err := strconv.ParseBool(os.Getenv("OTEL_SDK_DISABLED")); err == nil && v {
		return false
	}
	return c.Endpoint != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" ||
		os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Start returns the tracer provider exporting to the configured collector
// and its shutdown, which flushes the spans still queued (call it once the
// server stopped). When tracing is off it returns a nil provider and a
// shutdown that does nothing. It fails on an Endpoint that is not an
// absolute http or https URL; a collector that does not answer is no error
// here (exports are retried and then dropped, reported through the otel
// error handler).
func Start(ctx context.Context, c Config) (trace.TracerProvider, func(context.Context) error, error) {
	off := func(context.Context) error { return nil }
	if !c.Enabled() {
		return nil, off, nil
	}
	var opts []otlptracehttp.Option
	if c.Endpoint != "" {
		u, err := endpointURL(c.Endpoint)
		if err != nil {
			return nil, off, err
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, off, fmt.Errorf("OTLP exporter: %w", err)
	}
	res, err := newResource(ctx, c.ServiceVersion)
	if err != nil {
		return nil, off, err
	}
	// The sampler is the SDK's: OTEL_TRACES_SAMPLER when set, otherwise
	// parent-based always-on, so that a client's sampled flag decides for
	// its requests.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}

// endpointURL checks an --otlp-endpoint and appends the traces path to a
// bare base URL.
func endpointURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("--otlp-endpoint: want an http:// or https:// URL of an OTLP/HTTP collector, e.g. http://localhost:4318")
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = tracesPath
	}
	return u.String(), nil
}

// newResource describes this process: service.name (default lakehold) and
// version, then whatever OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
// set, which win.
func newResource(ctx context.Context, version string) (*resource.Resource, error) {
	kv := []attribute.KeyValue{semconv.ServiceName(DefaultServiceName)}
	if version != "" {
		kv = append(kv, semconv.ServiceVersion(version))
	}
	res, err := resource.New(ctx, resource.WithSchemaURL(semconv.SchemaURL), resource.WithAttributes(kv...),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	return res, nil
}

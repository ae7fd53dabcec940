package main

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/lakehold/catalog/internal/tracing/otlpexport"
	"github.com/lakehold/catalog/store"
)

// traceFlags choose where serve's spans go (README, Tracing).
type traceFlags struct{ endpoint string }

func registerTraceFlags(fs *flag.FlagSet) *traceFlags {
	tf := &traceFlags{}
	fs.StringVar(&tf.endpoint, "otlp-endpoint", os.Getenv("CATALOG_OTLP_ENDPOINT"), "OpenTelemetry: base URL of an OTLP/HTTP collector (http://collector:4318; spans go to its /v1/traces) receiving a span per request with child spans for the database, object storage, token services and commit attempts, continuing the caller's W3C traceparent; also on when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set; off by default [CATALOG_OTLP_ENDPOINT]")
	return tf
}

// flushTimeout bounds the export of the spans still queued at exit.
const flushTimeout = 5 * time.Second

// start starts tracing when the flag or the OTEL_* variables ask for it.
// It returns the tracer provider (nil when off) and stop, which flushes the
// queued spans and must run once the server has stopped. It fails on a
// malformed --otlp-endpoint. Export failures are logged as warnings.
func (tf *traceFlags) start(ctx context.Context, log *slog.Logger) (trace.TracerProvider, func(), error) {
	tp, shutdown, err := otlpexport.Start(ctx, otlpexport.Config{Endpoint: tf.endpoint, ServiceVersion: readVersion().Version})
	if err != nil || tp == nil {
		return nil, func() {}, err
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("tracing: spans could not be exported", "error", err)
	}))
	log.Info("tracing on: spans are exported over OTLP/HTTP")
	return tp, func() {
		fctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		defer cancel()
		if err := shutdown(fctx); err != nil {
			log.Warn("tracing: the last spans could not be exported", "error", err)
		}
	}, nil
}

// tracedStore is st with a span per call when tp is set.
func tracedStore(st store.Store, tp trace.TracerProvider, sf storageFlags) store.Store {
	system := store.SystemPostgres
	if sf.embedded() {
		system = store.SystemSQLite
	}
	return store.WithTracing(st, tp, system)
}

package pipeline

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// traceContext reads the W3C traceparent and tracestate headers: a
// request's span continues the client's trace, and the client's sampled
// flag decides (the provider's sampler is parent-based).
var traceContext = propagation.TraceContext{}

// attrRequestID is the server span's copy of the X-Request-ID.
const attrRequestID = attribute.Key("catalog.request_id")

// untraced are routes polled by probes and scrapers: a span for each would
// bury the catalog's requests.
var untraced = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true, "/favicon.ico": true}

// traceRequest starts the server span of r when tracing is on (except on
// untraced routes): it returns r's context holding the span, log with the
// span's trace_id and span_id, and the function that ends the span. The
// span is named after the method until the route is known; its attributes
// are fixed ones (method, then route, status, request id, error type),
// never the path, query, headers or body, which carry names, tokens and
// secrets.
func (p *Pipeline) traceRequest(r *http.Request, sw *statusWriter, id string, log *slog.Logger) (context.Context, *slog.Logger, func()) {
	if p.cfg.Tracer == nil || untraced[r.URL.Path] {
		return r.Context(), log, noSpan
	}
	ctx := traceContext.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	method := spanMethod(r.Method)
	ctx, span := p.cfg.Tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(semconv.HTTPRequestMethodKey.String(method)))
	sc := span.SpanContext()
	log = log.With("trace_id", sc.TraceID().String(), "span_id", sc.SpanID().String())
	return ctx, log, func() { p.endRequestSpan(span, r, sw, id) }
}

func noSpan() {}

// endRequestSpan names span after the matched route pattern
// ("GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"), records the
// outcome and ends it. A 5xx fails the span with the ErrorModel type as
// its only description; a 4xx is the client's and only noted.
func (p *Pipeline) endRequestSpan(span trace.Span, r *http.Request, sw *statusWriter, requestID string) {
	method := spanMethod(r.Method)
	if route := p.routeOf(r); route != "" {
		span.SetName(method + " " + route)
		span.SetAttributes(semconv.HTTPRoute(route))
	}
	code := sw.code()
	span.SetAttributes(semconv.HTTPResponseStatusCode(code), attrRequestID.String(requestID))
	if code >= 400 {
		typ := sw.errorType()
		if typ == "" {
			typ = http.StatusText(code)
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(typ))
		if code >= 500 {
			span.SetStatus(codes.Error, typ)
		}
	}
	span.End()
}

// routeOf is the route pattern r matched, "" for none. A request refused
// before routing (401, 403, 413) is looked up in the router: its span is
// named after the route it asked for, like every other.
func (p *Pipeline) routeOf(r *http.Request) string {
	if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
		return rc.RoutePattern()
	}
	path := r.URL.RawPath // set by escapedRouting: the router matches escaped paths
	if path == "" {
		path = r.URL.Path
	}
	return p.routes.Find(chi.NewRouteContext(), r.Method, path)
}

// spanMethod bounds the method named in spans, as methodLabel does for
// metrics ("_OTHER" is the semantic conventions' word for the rest).
func spanMethod(m string) string {
	if l := methodLabel(m); l != "other" {
		return l
	}
	return "_OTHER"
}

// errorType is the ErrorModel type (or OAuth error code) of the error
// body written, "" when there is none.
func (w *statusWriter) errorType() string {
	if a := w.errorAttrs(); len(a) >= 2 {
		if typ, ok := a[1].(string); ok {
			return typ
		}
	}
	return ""
}

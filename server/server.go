// Package server serves the Iceberg REST catalog and the management API
// over HTTP: it routes requests and its handlers only decode them, call
// package service and encode the results. Every failure leaves as an
// Iceberg ErrorModel body through package httperr; the middleware around
// the handlers lives in packages guard (who may call) and pipeline
// (everything else a request passes through).
package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/lakehold/catalog/internal/console"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/signin"
	"github.com/lakehold/catalog/internal/tracing"
	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/server/guard"
	"github.com/lakehold/catalog/server/httperr"
	"github.com/lakehold/catalog/server/pipeline"
	"github.com/lakehold/catalog/service"
)

var _ openapi.StrictServerInterface = (*Server)(nil)

// Config configures the HTTP layer.
type Config struct {
	// DefaultWarehouse answers /v1/config without ?warehouse=.
	DefaultWarehouse string
	// IdempotencyLifetime is advertised and honoured for Idempotency-Key.
	IdempotencyLifetime time.Duration
	// IdempotencyLease is how long a key stays held by a request whose
	// replica stopped renewing it (default 5s).
	IdempotencyLease time.Duration
	// IdempotencyWait bounds how long a duplicate waits for the running
	// first request before answering 503 (default 30s).
	IdempotencyWait time.Duration
	// MaxRequestBody bounds request bodies in bytes (default
	// DefaultMaxRequestBody); larger ones are answered 413.
	MaxRequestBody int64
	// Registry receives the server's metrics; nil uses a new registry.
	Registry *prometheus.Registry
	Logger   *slog.Logger
	// Auth authenticates callers (package guard); nil serves everyone
	// anonymously.
	Auth Authenticator
	// SignIn bounds the client-credentials sign-ins of POST
	// /v1/oauth/tokens, per replica (package guard): secrets verified at once
	// (a sign-in that finds no slot within SignIn.Wait is answered 503
	// temporarily_unavailable) and failures per client id and source
	// address (past the limit, 429 slow_down until the lockout ends, with
	// Retry-After). The zero value takes internal/signin's defaults.
	SignIn signin.Config
	// AllowedOrigins lists browser origins (scheme://host[:port]) accepted
	// in an Origin header besides the catalog's own, e.g. the public URL
	// of a proxy that rewrites Host (package guard). Requests with any other
	// Origin are refused with 403. No CORS headers are sent for them.
	AllowedOrigins []string
	// AllowedHosts lists Host names or addresses (any port; ".example.com"
	// for a domain and its subdomains; "*" for any) accepted besides the
	// loopback ones. With Auth nil, or when this is set, other Host values
	// are refused with 403, which defeats DNS rebinding (package guard).
	AllowedHosts []string
	// Console configures the admin console at /ui (sign-in provider);
	// the zero value serves it with no sign-in.
	Console console.Options
	// TracerProvider receives a server span per request (package pipeline),
	// continuing the client's W3C trace context; nil: no spans.
	TracerProvider trace.TracerProvider
}

// Server implements openapi.StrictServerInterface over a service.Service.
type Server struct {
	svc       *service.Service
	rooms     rooms
	cfg       Config
	pipe      *pipeline.Pipeline
	endpoints []string
	handler   http.Handler
}

// New builds the HTTP handler: routing on the escaped path, request ids and
// logs, the audit trail, the refusal of cross-site requests, authentication,
// metrics, the body size limit, the name check on paths, idempotency keys,
// then the generated routes.
func New(svc *service.Service, cfg Config) *Server {
	if cfg.IdempotencyLifetime <= 0 {
		cfg.IdempotencyLifetime = 30 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.MaxRequestBody <= 0 {
		cfg.MaxRequestBody = DefaultMaxRequestBody
	}
	r := chi.NewRouter()
	s := &Server{svc: svc, rooms: roomsOf(svc), cfg: cfg}
	s.pipe = pipeline.New(svc, pipeline.Config{Logger: cfg.Logger, Registry: cfg.Registry, MaxRequestBody: cfg.MaxRequestBody,
		IdempotencyLifetime: cfg.IdempotencyLifetime, IdempotencyLease: cfg.IdempotencyLease, IdempotencyWait: cfg.IdempotencyWait,
		Tracer: tracing.Tracer(cfg.TracerProvider)}, r)
	g := guard.New(svc, guard.Config{Auth: cfg.Auth, SignIn: cfg.SignIn, AllowedOrigins: cfg.AllowedOrigins,
		AllowedHosts: cfg.AllowedHosts}, cfg.Registry)

	p := s.pipe
	r.Use(escapedRouting, p.RequestContext, v4Readers, p.Audit, g.CrossSite, g.Authenticate, pipeline.AuditPrincipal, p.Metrics, p.LimitBody, pipeline.CheckNames, p.Idempotency)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		httperr.Write(w, r, &fault.Error{Kind: fault.BadRequest, Message: fmt.Sprintf("No route for %s %s", r.Method, r.URL.Path)})
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		httperr.WriteModel(w, httperr.Model(fault.New(fault.MethodNotAllowed, "Method %s not allowed on %s", r.Method, r.URL.Path)))
	})
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		// A person who opens the catalog's URL in a browser lands on the
		// console; the browser's icon request is answered without an error.
		r.Method(method, "/", http.RedirectHandler(console.Prefix+"/", http.StatusFound))
		r.MethodFunc(method, "/favicon.ico", noFavicon)
	}
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	r.Get("/readyz", s.ready)
	r.Handle("/metrics", p.MetricsHandler())
	r.Post(guard.TokenPath, g.Token)
	r.Mount(console.Prefix, console.Handler(cfg.Console)) // admin console (internal/console)

	strict := openapi.NewStrictHandlerWithOptions(s, nil, openapi.StrictHTTPServerOptions{
		RequestErrorHandlerFunc:  httperr.BadRequest,
		ResponseErrorHandlerFunc: httperr.Write,
	})
	openapi.HandlerWithOptions(strict, openapi.ChiServerOptions{BaseRouter: r, ErrorHandlerFunc: httperr.BadRequest})
	s.endpoints = servedEndpoints(r)
	s.handler = r
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// unadvertised are routes left out of the config endpoints list: our v4
// extensions. Scan planning is advertised: it is served for every format
// version, and clients plan on the server only when asked to (Java's
// scan-planning-mode=server catalog or table property).
var unadvertised = map[string]bool{
	"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/files":                   true,
	"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/column-files":            true,
	"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/column-files":             true,
	"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/compaction-plan":         true,
	"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/compaction":              true,
	"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/native-write-eligibility": true,
	"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/export":                  true,
}

// planIDRoute matches a plan route whatever its path parameter is named:
// clients compare endpoints as strings, with the REST spec's {plan-id}.
var planIDRoute = regexp.MustCompile(`^(/v1/\{prefix\}/namespaces/\{namespace\}/tables/\{table\}/plan/)\{[^}/]+\}$`)

// servedEndpoints lists every catalog route the router serves, in the
// "<VERB> <path template>" form of the config endpoints list, so that the
// advertisement can never drift from the routes. The scan-planning routes
// (POST .../plan, GET and DELETE .../plan/{plan-id}, POST .../tasks) are
// listed once they are routed.
func servedEndpoints(r chi.Routes) []string {
	var out []string
	_ = chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		route = planIDRoute.ReplaceAllString(route, "${1}{plan-id}")
		if strings.HasPrefix(route, "/v1/{prefix}/") && !unadvertised[method+" "+route] {
			out = append(out, method+" "+route)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// noFavicon answers /favicon.ico with 204 No Content, cached for a day:
// the catalog has no icon, and a 4xx for every page a browser opens would
// only be noise in the log.
func noFavicon(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.svc.Ping(ctx); err != nil {
		httperr.Write(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// badRequestf is httperr.BadRequestf, under the short name the handlers
// use.
func badRequestf(format string, args ...any) error { return httperr.BadRequestf(format, args...) }

// DefaultMaxRequestBody is the default request body limit: far above any
// real commit, far below what would let a few clients exhaust memory.
const DefaultMaxRequestBody = 8 << 20

// Limits bound what one client connection can hold: how long it may take
// to send its headers and body, how long a response may take, how long an
// idle keep-alive connection stays open, and how large the headers may be.
// Zero fields take the values of DefaultLimits.
type Limits struct {
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int
}

// DefaultLimits are used for zero fields: a client gets 10s for its headers
// and 60s for its whole request; a response, including the work behind it,
// may take 120s (long v4 commits included).
var DefaultLimits = Limits{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       60 * time.Second,
	WriteTimeout:      120 * time.Second,
	IdleTimeout:       120 * time.Second,
	MaxHeaderBytes:    64 << 10,
}

// HTTPServer returns an http.Server serving h within these limits.
func (l Limits) HTTPServer(h http.Handler) *http.Server {
	pick := func(v, def time.Duration) time.Duration {
		if v > 0 {
			return v
		}
		return def
	}
	maxHeader := l.MaxHeaderBytes
	if maxHeader <= 0 {
		maxHeader = DefaultLimits.MaxHeaderBytes
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: pick(l.ReadHeaderTimeout, DefaultLimits.ReadHeaderTimeout),
		ReadTimeout:       pick(l.ReadTimeout, DefaultLimits.ReadTimeout),
		WriteTimeout:      pick(l.WriteTimeout, DefaultLimits.WriteTimeout),
		IdleTimeout:       pick(l.IdleTimeout, DefaultLimits.IdleTimeout),
		MaxHeaderBytes:    maxHeader,
	}
}

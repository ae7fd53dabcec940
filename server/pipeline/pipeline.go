// Package pipeline is the middleware every catalog request passes through
// before and after its handler: request ids, the access log, panic
// recovery and the request span; the audit trail; HTTP metrics; the body
// size limit and the name check; Idempotency-Key replay. Package server
// chains these around its routes, with package guard's cross-site refusal
// and authentication in between. Nothing here decodes a catalog request or
// imports package server.
package pipeline

import (
	"log/slog"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/lakehold/catalog/service"
)

// Config holds what the pipeline is given of the server's configuration,
// defaults already applied; the fields mean what the fields of the same
// name in server.Config say.
type Config struct {
	Logger              *slog.Logger
	Registry            *prometheus.Registry
	MaxRequestBody      int64
	IdempotencyLifetime time.Duration
	IdempotencyLease    time.Duration
	IdempotencyWait     time.Duration
	// Tracer starts the request spans; nil: no spans.
	Tracer trace.Tracer
}

// Pipeline holds the middleware's shared state: the service it records
// audit events and idempotent outcomes in, the metrics, the tracer and
// the router whose route patterns name metrics, audit events and spans.
type Pipeline struct {
	svc     *service.Service
	cfg     Config
	metrics *metrics
	routes  chi.Routes
}

// New builds the pipeline of a server over svc and routes (consulted per
// request, so routes may still be added), registering the HTTP metrics
// with cfg.Registry. It panics, as prometheus does, when they are
// registered there already.
func New(svc *service.Service, cfg Config, routes chi.Routes) *Pipeline {
	return &Pipeline{svc: svc, cfg: cfg, metrics: newMetrics(cfg.Registry, svc), routes: routes}
}

package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lakehold/catalog/server/guard"
	"github.com/lakehold/catalog/server/pipeline"
	"github.com/lakehold/catalog/service"
)

// These forward to packages guard and pipeline, so that the command line
// configures the whole HTTP layer through package server alone.

// Authenticator identifies the caller from the Authorization header value
// (internal/authn implements it). Errors wrap the authn sentinels.
type Authenticator = guard.Authenticator

// ParseAllowedOrigins parses a comma-separated list of origins for
// Config.AllowedOrigins (guard.ParseAllowedOrigins); an entry that is not
// scheme://host[:port] with scheme http or https is an error naming it.
func ParseAllowedOrigins(list string) ([]string, error) { return guard.ParseAllowedOrigins(list) }

// ParseAllowedHosts parses a comma-separated list of host names or
// addresses for Config.AllowedHosts (guard.ParseAllowedHosts); an entry
// with a scheme, path, user or stray wildcard is an error naming it.
func ParseAllowedHosts(list string) ([]string, error) { return guard.ParseAllowedHosts(list) }

// JobsCollector returns the collector of the job queue's gauges, for a
// process that serves /metrics without a Server (`catalog worker`); a
// Server registers it itself (package pipeline).
func JobsCollector(svc *service.Service) prometheus.Collector { return pipeline.JobsCollector(svc) }

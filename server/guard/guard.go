// Package guard decides who may reach the catalog's handlers: it refuses
// cross-site and DNS-rebinding requests, authenticates bearer tokens, and
// serves the OAuth2 token endpoint with its sign-in gate. Package server
// puts its middleware in the request pipeline and routes the token
// endpoint to it; guard imports nothing of server.
package guard

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lakehold/catalog/internal/signin"
	"github.com/lakehold/catalog/service"
)

// Config holds what guard is given of the server's configuration; the
// fields mean what the fields of the same name in server.Config say.
type Config struct {
	// Auth authenticates callers; nil serves everyone anonymously.
	Auth Authenticator
	// SignIn bounds the client-credentials sign-ins of the token endpoint.
	SignIn signin.Config
	// AllowedOrigins and AllowedHosts widen the cross-site rules
	// (crosssite.go).
	AllowedOrigins []string
	AllowedHosts   []string
}

// Guard holds the cross-site policy, the authenticator and the sign-in
// gate of one server.
type Guard struct {
	svc    *service.Service
	auth   Authenticator
	sites  crossSitePolicy
	signin *signInGate
}

// New builds the guard of a server over svc, registering the sign-in
// metrics with reg. It panics, as prometheus does, when they are
// registered there already.
func New(svc *service.Service, cfg Config, reg *prometheus.Registry) *Guard {
	return &Guard{svc: svc, auth: cfg.Auth, sites: newCrossSitePolicy(cfg), signin: newSignInGate(cfg.SignIn, reg)}
}

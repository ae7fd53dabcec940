// Package identity says who makes a request: the Principal, how it was
// identified, and how it travels in a context. Authentication
// (internal/authn) produces principals, authorization and the audit trail
// (service) consume them; neither side imports the other for it.
package identity

import (
	"context"
	"time"
)

// Source says how a caller was identified.
type Source string

// Principal sources.
const (
	// SourceAnonymous is a caller on a catalog with authentication off.
	SourceAnonymous Source = "anonymous"
	// SourceOIDC is a caller holding a bearer JWT from the external OIDC
	// provider; Subject is its subject claim, Groups its groups claim.
	SourceOIDC Source = "oidc"
	// SourceBuiltin is a built-in service principal holding a token from
	// POST /v1/oauth/tokens; Subject is the principal's name.
	SourceBuiltin Source = "builtin"
	// SourceLocal is the operator running the catalog CLI against the
	// database directly; it holds every privilege.
	SourceLocal Source = "local"
)

// Principal is who makes a request. The authentication middleware puts it
// in the context; with authentication off every request is anonymous.
type Principal struct {
	Source  Source
	Subject string
	Groups  []string
	// AuthTime is when a built-in token's session began (its auth_time
	// claim, or its iat for tokens issued before the claim existed); zero
	// for other principals. Token exchanges carry it over (RefreshToken).
	AuthTime time.Time
}

// String names the principal for logs and audit rows ("oidc:<sub>").
func (p Principal) String() string {
	return string(p.Source) + ":" + p.Subject
}

// Anonymous is the principal of a request that carries no identity.
var Anonymous = Principal{Source: SourceAnonymous, Subject: "anonymous"}

type principalKey struct{}

// With returns ctx carrying p.
func With(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// From returns the principal in ctx, or Anonymous.
func From(ctx context.Context) Principal {
	if p, ok := ctx.Value(principalKey{}).(Principal); ok {
		return p
	}
	return Anonymous
}

package guard

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/lakehold/catalog/internal/authn"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/server/httperr"
)

// Authenticator identifies the caller from the Authorization header value
// (internal/authn implements it). Errors wrap the authn sentinels.
type Authenticator interface {
	Authenticate(ctx context.Context, authorization string) (identity.Principal, error)
}

// publicRoute reports whether a request needs no token: probes, metrics,
// the console's files (and / redirecting to it, /favicon.ico) and the
// token endpoint itself. GET /v1/config does need one (Java and PyIceberg
// fetch a token before calling it).
func publicRoute(r *http.Request) bool {
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		(r.URL.Path == "/ui" || strings.HasPrefix(r.URL.Path, "/ui/") || r.URL.Path == "/" || r.URL.Path == "/favicon.ico") {
		return true // the console's static files; its API calls carry the token
	}
	switch r.URL.Path {
	case "/healthz", "/readyz", "/metrics":
		return true
	case TokenPath:
		return r.Method == http.MethodPost
	}
	return false
}

// Authenticate puts the caller's principal in the context; with
// authentication on, a request without a valid bearer token is answered
// 401 NotAuthorizedException (503 when the token cannot be checked now).
// The token is never logged or echoed.
func (g *Guard) Authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.auth == nil {
			// The pipeline's request context already holds the anonymous
			// principal (or one a test harness wrapped around the handler).
			next.ServeHTTP(w, r)
			return
		}
		if publicRoute(r) {
			next.ServeHTTP(w, r)
			return
		}
		p, err := g.auth.Authenticate(r.Context(), r.Header.Get("Authorization"))
		if err != nil {
			authFailed(w, r, err)
			return
		}
		ctx := identity.With(r.Context(), p)
		ctx = httperr.WithLogger(ctx, httperr.Logger(ctx).With("principal", p.String()))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// authFailed answers a refused token. The log line names the reason (the
// authn errors never contain the token); the client learns only that its
// token is missing or invalid.
func authFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, authn.ErrUnavailable) {
		httperr.Write(w, r, &fault.Error{Kind: fault.Unavailable, Message: "Cannot check credentials now; retry later", Err: err})
		return
	}
	challenge := `Bearer realm="lakehold"`
	msg := "Not authorized: missing bearer token"
	if !errors.Is(err, authn.ErrMissing) {
		challenge += `, error="invalid_token"`
		msg = "Not authorized: " + authn.ClientMessage
	}
	httperr.Logger(r.Context()).DebugContext(r.Context(), "authentication failed", "reason", err.Error())
	w.Header().Set("WWW-Authenticate", challenge)
	httperr.WriteModel(w, httperr.Model(fault.New(fault.Unauthorized, "%s", msg)))
}

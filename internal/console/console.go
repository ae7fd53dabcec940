// Package console serves the admin console: a single-page app of plain
// ES modules, embedded in the binary, that runs in the browser and calls
// the same REST and management API engines use. The package only serves
// files and a small config document; it holds no catalog logic, so every
// action a person takes is authorised and validated exactly like an
// engine's request.
package console

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/lakehold/catalog/internal/fault"
)

//go:embed assets
var assets embed.FS

// Prefix is the path the console is served under.
const Prefix = "/ui"

// Options configures the console.
type Options struct {
	// OIDCIssuer is the OpenID provider the browser signs in against
	// (authorization code with PKCE). Empty means no OIDC sign-in.
	OIDCIssuer string
	// OIDCClientID is the public client the console signs in as.
	OIDCClientID string
	// OIDCScopes are requested at sign-in; empty means "openid".
	OIDCScopes string
	// BuiltinSignIn offers sign-in as a built-in service principal: the
	// person enters a client id and secret, which the browser exchanges at
	// TokenEndpoint (client-credentials grant). Set it when the catalog
	// issues built-in tokens (authentication on). With neither this nor
	// OIDCIssuer, authentication is off and the console offers no sign-in.
	BuiltinSignIn bool
}

// TokenEndpoint is the catalog's OAuth2 token endpoint, fixed by the
// Iceberg REST spec (server/oauth.go serves it). It is same-origin, so the
// CSP's connect-src 'self' covers it.
const TokenEndpoint = "/v1/oauth/tokens"

// clientConfig is /ui/config.json: what the SPA needs before its first
// API call. It carries no secret: a public PKCE client has none, and a
// built-in principal's secret is typed by the person. Auth is null when
// authentication is off; otherwise it names the sign-in methods offered:
// the OIDC fields when a provider is configured (the shape they always
// had), builtin when built-in principals may sign in, or both.
type clientConfig struct {
	Auth *authConfig `json:"auth"`
}

type authConfig struct {
	Issuer   string         `json:"issuer,omitempty"`
	ClientID string         `json:"client-id,omitempty"`
	Scopes   string         `json:"scopes,omitempty"`
	Builtin  *builtinConfig `json:"builtin,omitempty"`
}

type builtinConfig struct {
	TokenEndpoint string `json:"token-endpoint"`
}

// Handler returns the handler for every path under Prefix. It answers
// Prefix itself with a redirect to Prefix+"/", unknown files with a 404
// ErrorModel, and sets the security headers on every response.
func Handler(opts Options) http.Handler {
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.FileServerFS(static)
	cfg := configJSON(opts)
	csp := contentSecurityPolicy(opts.OIDCIssuer)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header(), csp)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeError(w, fault.MethodNotAllowed, "The console serves GET only")
			return
		}
		rest, ok := strings.CutPrefix(r.URL.Path, Prefix)
		switch {
		case !ok:
			writeError(w, fault.NotFound, "Not a console path")
		case rest == "":
			http.Redirect(w, r, Prefix+"/", http.StatusFound)
		case rest == "/config.json":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write(cfg)
		case rest == "/" || exists(static, rest):
			// no-cache: the browser revalidates (the embedded files carry no
			// dates, so a rebuilt binary serves new assets at once).
			w.Header().Set("Cache-Control", "no-cache")
			r2 := r.Clone(r.Context())
			r2.URL.Path = rest
			files.ServeHTTP(w, r2)
		default:
			writeError(w, fault.NotFound, "No console file at this path")
		}
	})
}

// exists reports whether p names a regular embedded file (directories are
// not listed).
func exists(static fs.FS, p string) bool {
	name := strings.TrimPrefix(path.Clean(p), "/")
	st, err := fs.Stat(static, name)
	return err == nil && !st.IsDir()
}

func configJSON(opts Options) []byte {
	var c clientConfig
	if opts.OIDCIssuer != "" {
		scopes := opts.OIDCScopes
		if scopes == "" {
			scopes = "openid"
		}
		c.Auth = &authConfig{Issuer: opts.OIDCIssuer, ClientID: opts.OIDCClientID, Scopes: scopes}
	}
	if opts.BuiltinSignIn {
		if c.Auth == nil {
			c.Auth = &authConfig{}
		}
		c.Auth.Builtin = &builtinConfig{TokenEndpoint: TokenEndpoint}
	}
	b, _ := json.Marshal(c) // plain strings: cannot fail
	return b
}

// contentSecurityPolicy allows only the catalog's own origin (its API and
// its token endpoint, for built-in sign-in), plus the OIDC provider's
// origin for discovery and the token exchange. No inline
// script or style: the SPA builds its DOM from modules.
func contentSecurityPolicy(issuer string) string {
	connect := "'self'"
	if u, err := url.Parse(issuer); err == nil && issuer != "" && u.Scheme != "" && u.Host != "" {
		connect += " " + u.Scheme + "://" + u.Host
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
		"connect-src " + connect + "; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
}

func securityHeaders(h http.Header, csp string) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// writeError writes an Iceberg ErrorModel body, like every other error the
// catalog returns.
func writeError(w http.ResponseWriter, kind fault.Kind, msg string) {
	code, typ := fault.Status(kind)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": code}})
}

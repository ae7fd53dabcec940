package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/authn"
	"github.com/lakehold/catalog/internal/console"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/access"
)

// tokenRequest is one POST /v1/oauth/tokens the console sent.
type tokenRequest struct {
	contentType string
	form        url.Values
}

// tokenLog records what reached the token endpoint.
type tokenLog struct {
	mu   sync.Mutex
	seen []tokenRequest
}

func (l *tokenLog) all() []tokenRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]tokenRequest(nil), l.seen...)
}

func (l *tokenLog) grants() []string {
	var out []string
	for _, r := range l.all() {
		out = append(out, r.form.Get("grant_type"))
	}
	return out
}

// throttledClient is a client id the test front answers 429 for, as the
// catalog's token-endpoint rate limit does.
const throttledClient = "throttled-client"

// builtinConsoleServer starts a catalog with authentication on and only
// built-in principals (no OIDC provider), RBAC, and the console offering
// built-in sign-in, as `catalog serve --auth on` does. Built-in tokens
// last lifetime (with a 1 ms leeway, so an expired one is refused at
// once). A front records every token request and answers 429 for
// throttledClient.
func builtinConsoleServer(t *testing.T, backend string, lifetime time.Duration) (*bundle, *service.Service, *tokenLog) {
	t.Helper()
	st := openStore(t, backend)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var svc *service.Service
	builtin, err := authn.NewBuiltin(authn.BuiltinConfig{SecretKey: bytes.Repeat([]byte{9}, 32), Lifetime: lifetime, Leeway: time.Millisecond,
		Generations: generationsFunc(func(ctx context.Context, name string) (string, int64, error) {
			return svc.Admin().PrincipalGeneration(ctx, name)
		})})
	require.NoError(t, err)
	svc = service.New(st, storage.NewProvider(), service.Options{Authorizer: access.NewRBAC(st), Tokens: builtin, Logger: quiet})
	_, err = svc.CreateWarehouse(localCtx(), "wh", "file://"+filepath.Join(t.TempDir(), "wh"), nil)
	require.NoError(t, err)
	srv := server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: quiet, Auth: authn.New(builtin, nil),
		Console: console.Options{BuiltinSignIn: true}})
	log := &tokenLog{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/oauth/tokens" {
			body, err := io.ReadAll(r.Body)
			require.NoError(t, err)
			r.Body = io.NopCloser(bytes.NewReader(body))
			form, _ := url.ParseQuery(string(body))
			log.mu.Lock()
			log.seen = append(log.seen, tokenRequest{contentType: r.Header.Get("Content-Type"), form: form})
			log.mu.Unlock()
			if form.Get("client_id") == throttledClient {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After", "7")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = io.WriteString(w, `{"error":"invalid_request","error_description":"too many token requests"}`)
				return
			}
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return &bundle{url: hs.URL, store: st, client: hs.Client()}, svc, log
}

// noStoredToken fails if the page left anything in localStorage,
// sessionStorage or document.cookie.
func noStoredToken(t *testing.T, br *browser) {
	t.Helper()
	stored := eval[string](t, br, `JSON.stringify([Object.keys(localStorage), Object.keys(sessionStorage), document.cookie])`)
	require.Equal(t, `[[],[],""]`, stored, "nothing is stored: [localStorage keys, sessionStorage keys, cookies]")
}

// TestConsoleSignInWithBuiltinPrincipal: with authentication on and only
// built-in principals, the console offers a client id + secret form; a
// wrong secret and a throttled exchange show clear errors; the right one
// signs in and the catalog is shown; the token is renewed by token
// exchange before it expires and is held in memory only (nothing in
// localStorage, sessionStorage or cookies, gone on reload); sign-out drops
// it; a rotated secret ends the session at the next renewal.
func TestConsoleSignInWithBuiltinPrincipal(t *testing.T) {
	chromiumPath(t)
	const lifetime = 20 * time.Second
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b, svc, tokens := builtinConsoleServer(t, backend, lifetime)
			ctx := localCtx()
			creds, err := svc.Admin().CreatePrincipal(ctx, "viewer")
			require.NoError(t, err)
			_, err = svc.Admin().CreateRole(ctx, "browse", "lists the warehouse")
			require.NoError(t, err)
			for _, p := range []service.Privilege{service.PrivNamespaceList, service.PrivTableList, service.PrivViewRead} {
				require.NoError(t, svc.Admin().GrantPrivilege(ctx, "browse", service.Grant{Privilege: p,
					On: service.Resource{Kind: service.ResourceWarehouse, Warehouse: "wh"}}))
			}
			require.NoError(t, svc.Admin().AssignRole(ctx, "browse", service.Assignee{Kind: "builtin", Name: "viewer"}))
			_, err = svc.CreateNamespace(ctx, "wh", []string{"lake_ns"}, nil)
			require.NoError(t, err)

			r := b.do(t, "GET", "/ui/config.json", nil)
			require.Equal(t, 200, r.status)
			require.JSONEq(t, `{"auth":{"builtin":{"token-endpoint":"/v1/oauth/tokens"}}}`, string(r.body))
			csp := r.header.Get("Content-Security-Policy")
			require.Contains(t, csp, "connect-src 'self';", "the token endpoint is same-origin: no other origin")
			require.NotContains(t, csp, "unsafe-inline")

			br := newBrowser(t, b.url, screenshotDir(t, "builtin-"+backend))
			br.open(t, "#/w/wh", "#signin-form")
			require.Contains(t, br.text(t, "h1"), "Sign in")
			require.Equal(t, 0, eval[int](t, br, `document.querySelectorAll('#signin-oidc').length`), "no OIDC provider, no OIDC button")
			require.Equal(t, []string{"password", "off", "", "off", ""}, eval[[]string](t, br, `(() => {
				const s = document.getElementById('signin-secret'), id = document.getElementById('signin-client-id');
				return [s.type, s.getAttribute('autocomplete'), s.name, id.getAttribute('autocomplete'), id.name];
			})()`), "secret: password input, no autocomplete, no form field name")
			require.Equal(t, "", br.text(t, "#who"), "no header button: the page is the form")
			br.shot(t, "01-sign-in-form")

			// A wrong secret: a clear 401, the field emptied, still signed out.
			br.fill(t, "#signin-client-id", creds.ClientID)
			br.fill(t, "#signin-secret", "not-the-secret")
			br.click(t, "#signin-form button[type=submit]")
			br.waitFor(t, "#signin-status .error")
			msg := br.text(t, "#signin-status .error")
			require.Contains(t, msg, "401")
			require.Contains(t, msg, "refused this client id and secret")
			require.Equal(t, "", eval[string](t, br, `document.getElementById('signin-secret').value`), "the secret field is cleared")
			br.shot(t, "02-wrong-secret")

			// A throttled exchange: 429 with when to try again.
			br.fill(t, "#signin-client-id", throttledClient)
			br.fill(t, "#signin-secret", "whatever")
			br.click(t, "#signin-form button[type=submit]")
			_, err = chromedp.Run(br.ctx, chromedp.Poll[bool](`(document.querySelector('#signin-status .error') || {}).textContent?.includes('429')`))
			require.NoError(t, err)
			require.Contains(t, br.text(t, "#signin-status .error"), "try again in 7 s")
			require.Equal(t, "", eval[string](t, br, `document.getElementById('signin-secret').value`))
			br.shot(t, "03-throttled")

			// The right secret: the warehouse page with the namespace.
			br.fill(t, "#signin-client-id", creds.ClientID)
			br.fill(t, "#signin-secret", creds.ClientSecret)
			signedIn := time.Now()
			br.click(t, "#signin-form button[type=submit]")
			br.waitFor(t, "#ns-list li")
			require.Contains(t, br.text(t, "#ns-list"), "lake_ns")
			require.Contains(t, br.text(t, "#who"), "Sign out")
			require.Equal(t, 0, eval[int](t, br, `document.querySelectorAll('#signin-form').length`))
			require.False(t, eval[bool](t, br, fmt.Sprintf(`[...document.querySelectorAll('input')].some((i) => i.value === %[1]q)
				|| document.documentElement.outerHTML.includes(%[1]q)`, creds.ClientSecret)), "the secret is nowhere in the page")
			noStoredToken(t, br)
			br.shot(t, "04-signed-in")

			sent := tokens.all()
			require.Len(t, sent, 3)
			for _, s := range sent {
				require.Equal(t, "application/x-www-form-urlencoded", s.contentType)
				require.Equal(t, "client_credentials", s.form.Get("grant_type"))
			}
			require.Equal(t, creds.ClientSecret, sent[2].form.Get("client_secret"))

			// The token is renewed by token exchange before it expires (at
			// 80% of its lifetime), without the secret, and the page keeps
			// working after the first token lapsed.
			require.Eventually(t, func() bool { return len(tokens.all()) > 3 }, 2*lifetime, 200*time.Millisecond, "renewal: %v", tokens.grants())
			renew := tokens.all()[3]
			require.Equal(t, "urn:ietf:params:oauth:grant-type:token-exchange", renew.form.Get("grant_type"))
			require.Equal(t, "urn:ietf:params:oauth:token-type:access_token", renew.form.Get("subject_token_type"))
			require.NotEmpty(t, renew.form.Get("subject_token"))
			require.Empty(t, renew.form.Get("client_secret"))
			require.Equal(t, "application/x-www-form-urlencoded", renew.contentType)
			if wait := time.Until(signedIn.Add(lifetime + time.Second)); wait > 0 {
				time.Sleep(wait)
			}
			r = b.do(t, "GET", "/v1/wh/namespaces", nil, "Authorization", "Bearer "+renew.form.Get("subject_token"))
			require.Equal(t, 401, r.status, "the first token has expired")
			br.open(t, "#/w/wh/n/lake_ns", "#tables-list + p")
			_, err = chromedp.Run(br.ctx, chromedp.Poll[bool](`document.querySelector('#tables-list + p').textContent === 'No tables.'`))
			require.NoError(t, err, "tables: %s", br.text(t, "#tables"))
			require.Contains(t, br.text(t, "#who"), "Sign out")
			noStoredToken(t, br)

			// Memory only: a reload forgets the token.
			require.NoError(t, chromedp.Do(br.ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#signin-form"))))
			noStoredToken(t, br)

			// Sign in again, then sign out: the token is dropped and the
			// API refuses the page's calls.
			br.fill(t, "#signin-client-id", creds.ClientID)
			br.fill(t, "#signin-secret", creds.ClientSecret)
			br.click(t, "#signin-form button[type=submit]")
			br.waitFor(t, "#tables-list + p")
			br.click(t, "#who button")
			br.waitFor(t, "#signin-form")
			require.Contains(t, apiFromPage(t, br, "GET", "/v1/wh/namespaces"), "401")
			noStoredToken(t, br)
			br.shot(t, "05-signed-out")

			// A rotated secret ends the session at the next renewal: the
			// exchange is refused and the sign-in page says why.
			br.fill(t, "#signin-client-id", creds.ClientID)
			br.fill(t, "#signin-secret", creds.ClientSecret)
			br.click(t, "#signin-form button[type=submit]")
			br.waitFor(t, "#tables-list + p")
			_, err = svc.Admin().RotatePrincipalSecret(ctx, "viewer")
			require.NoError(t, err)
			ctxEnd, cancel := context.WithTimeout(br.ctx, 2*lifetime)
			defer cancel()
			require.NoError(t, chromedp.Do(ctxEnd, chromedp.WaitVisible(chromedp.CSS("#session-ended"))))
			require.Contains(t, br.text(t, "#session-ended"), "Sign in again.")
			require.Equal(t, 1, eval[int](t, br, `document.querySelectorAll('#signin-form').length`))
			br.shot(t, "06-session-ended")
		})
	}
}

// TestConsoleOffersBothSignIns: with an OIDC provider and built-in
// principals both configured, the sign-in page offers the provider's
// button and the principal form, and the form signs in.
func TestConsoleOffersBothSignIns(t *testing.T) {
	chromiumPath(t)
	b, svc, _ := builtinConsoleServer(t, "sqlite", time.Hour)
	ctx := localCtx()
	creds, err := svc.Admin().CreatePrincipal(ctx, "viewer")
	require.NoError(t, err)
	_, err = svc.Admin().CreateRole(ctx, "browse", "")
	require.NoError(t, err)
	require.NoError(t, svc.Admin().GrantPrivilege(ctx, "browse", service.Grant{Privilege: service.PrivNamespaceList,
		On: service.Resource{Kind: service.ResourceWarehouse, Warehouse: "wh"}}))
	require.NoError(t, svc.Admin().AssignRole(ctx, "browse", service.Assignee{Kind: "builtin", Name: "viewer"}))
	_, err = svc.CreateNamespace(ctx, "wh", []string{"lake_ns"}, nil)
	require.NoError(t, err)

	// The console as `serve --auth on --oidc-issuer ...` configures it (no
	// provider runs here: its button is only looked at), the API behind.
	target, err := url.Parse(b.url)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	ui := console.Handler(console.Options{OIDCIssuer: "http://127.0.0.1:9/realms/none", OIDCClientID: "console", BuiltinSignIn: true})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, console.Prefix) {
			ui.ServeHTTP(w, r)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)

	br := newBrowser(t, front.URL, screenshotDir(t, "both-sign-ins"))
	br.open(t, "#/w/wh", "#signin-form")
	br.waitFor(t, "#signin-oidc")
	require.Contains(t, br.text(t, "#signin-builtin h2"), "Or sign in as a service principal")
	require.Contains(t, br.text(t, "#who"), "Sign in", "the header offers the provider")
	br.shot(t, "01-both")
	br.fill(t, "#signin-client-id", creds.ClientID)
	br.fill(t, "#signin-secret", creds.ClientSecret)
	br.click(t, "#signin-form button[type=submit]")
	br.waitFor(t, "#ns-list li")
	require.Contains(t, br.text(t, "#ns-list"), "lake_ns")
	require.Contains(t, br.text(t, "#who"), "Sign out")
	noStoredToken(t, br)
}

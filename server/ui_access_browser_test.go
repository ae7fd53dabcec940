package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/console"
)

// The console against a catalog with access control on: OIDC from the
// test Keycloak, RBAC with the access matrix's grants (alice in analysts
// reads namespace sales; sam in stewards holds everything on it; pat in
// platform is server admin).

// requestLog records the API requests the console made, "METHOD path".
type requestLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *requestLog) add(s string) {
	l.mu.Lock()
	l.seen = append(l.seen, s)
	l.mu.Unlock()
}

func (l *requestLog) has(prefix string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.seen {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// consoleFront serves the console configured for Keycloak and passes every
// other request, token included, to the catalog untouched.
func consoleFront(t *testing.T, catalogURL, issuer string, log *requestLog) string {
	t.Helper()
	target, err := url.Parse(catalogURL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	ui := console.Handler(console.Options{OIDCIssuer: issuer, OIDCClientID: "lakehold-console", OIDCScopes: "openid"})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, console.Prefix) {
			ui.ServeHTTP(w, r)
			return
		}
		log.add(r.Method + " " + r.URL.RequestURI())
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return front.URL
}

// signInAs opens hash, signs in on Keycloak's form as user and waits for
// sel on the page the console comes back to.
func (b *browser) signInAs(t *testing.T, hash, user, sel string) {
	t.Helper()
	b.open(t, hash, "main button")
	b.click(t, "main button")
	b.waitFor(t, "#username")
	b.fill(t, "#username", user)
	b.fill(t, "#password", user+"-password")
	b.click(t, "#kc-login")
	b.waitFor(t, sel)
}

// apiFromPage calls the catalog with the page's own api() (the signed-in
// person's token), shows a failure in the page with the console's error
// box, and returns "ok" or the error box's text.
func apiFromPage(t *testing.T, b *browser, method, path string) string {
	t.Helper()
	js := fmt.Sprintf(`(async () => {
		const {api} = await import('/ui/js/api.js');
		const {errorBox} = await import('/ui/js/dom.js');
		try { await api(%q, %q); return 'ok'; } catch (e) {
			const box = errorBox(e, 'Direct call');
			box.id = 'direct-call-error';
			document.getElementById('main').prepend(box);
			return box.textContent;
		}
	})()`, method, path)
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	return v
}

// TestConsoleOffersOnlyWhatIsHeld: with auth on, a reader's table page has
// no drop button and no property editor before anything was tried (the
// console asked GET /management/v1/privileges); a drop the reader sends
// anyway is refused with a 403 the page shows; a namespace steward on the
// same page is offered both.
func TestConsoleOffersOnlyWhatIsHeld(t *testing.T) {
	chromiumPath(t)
	iss := keycloakIssuer(t)
	admin := userToken(t, iss, "pat")
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b, _, _ := matrixServer(t, backend, iss)
			f := &matrixFixture{t: t, b: b, admin: admin}
			f.base()
			f.must(200, "POST", "/v1/wh/namespaces/sales/tables", map[string]any{"name": "orders", "schema": rawJSON(testSchema)})
			shots := screenshotDir(t, "access-"+backend)
			const page = "#/w/wh/n/sales/t/orders"

			log := &requestLog{}
			reader := newBrowser(t, consoleFront(t, b.url, iss, log), shots)
			reader.signInAs(t, page, "alice", "#snapshots-box[data-render-ms]")
			require.Contains(t, reader.text(t, "h1"), "sales.orders")
			require.True(t, log.has("GET /management/v1/privileges?kind=table&warehouse=wh&namespace=sales&name=orders"), "asked: %v", log.seen)
			require.False(t, log.has("DELETE "), "nothing was tried")
			require.Equal(t, 0, eval[int](t, reader, `document.querySelectorAll('#drop, #drop-table, [data-target=drop]').length`), "no drop button")
			require.Equal(t, 0, eval[int](t, reader, `document.querySelectorAll('[data-props="table"] form').length`), "no property editor")
			reader.shot(t, "01-reader-table")

			// The reader's namespace page offers no child namespace either.
			reader.open(t, "#/w/wh/n/sales", "#tables-list li")
			require.Equal(t, 0, eval[int](t, reader, `document.querySelectorAll('#create-namespace-form').length`))

			msg := apiFromPage(t, reader, "DELETE", "/v1/wh/namespaces/sales/tables/orders")
			require.Contains(t, msg, "403 ForbiddenException")
			require.Contains(t, msg, "lacks privilege table-drop")
			require.Contains(t, msg, "You do not hold the privilege for this.")
			reader.waitFor(t, "#direct-call-error")
			reader.shot(t, "02-reader-direct-drop-refused")
			require.Equal(t, 200, b.do(t, "GET", "/v1/wh/namespaces/sales/tables/orders", nil, "Authorization", "Bearer "+admin).status, "still there")

			steward := newBrowser(t, consoleFront(t, b.url, iss, &requestLog{}), shots)
			steward.signInAs(t, page, "sam", "#drop-table")
			steward.waitFor(t, `[data-props="table"] form`)
			require.Equal(t, 1, eval[int](t, steward, `document.querySelectorAll('[data-target=drop]').length`))
			steward.shot(t, "03-steward-table")
			steward.open(t, "#/w/wh/n/sales", "#create-namespace-form")
		})
	}
}

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

// builtinTokenStatus exchanges a built-in principal's id and secret at the
// token endpoint and returns the HTTP status.
func builtinTokenStatus(t *testing.T, catalogURL, id, secret string) int {
	t.Helper()
	resp, err := http.PostForm(catalogURL+"/v1/oauth/tokens", url.Values{"grant_type": {"client_credentials"},
		"client_id": {id}, "client_secret": {secret}, "scope": {"catalog"}})
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// TestConsoleManagesAccess: the server admin, signed in on Keycloak,
// creates a role, grants, assigns and revokes through the UI and sees each
// change through the API; creates, rotates and deletes a service principal
// (the secret shown once is one the token endpoint accepts); and pages and
// filters the audit log.
func TestConsoleManagesAccess(t *testing.T) {
	chromiumPath(t)
	iss := keycloakIssuer(t)
	admin := userToken(t, iss, "pat")
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b, audit, _ := matrixServer(t, backend, iss)
			f := &matrixFixture{t: t, b: b, admin: admin}
			br := newBrowser(t, consoleFront(t, b.url, iss, &requestLog{}), screenshotDir(t, "manage-"+backend))
			br.signInAs(t, "#/admin/roles", "pat", "#create-role-form")
			// The access links are filled in after the page, once the
			// privilege check answers: wait for them, not for the page.
			br.waitFor(t, "#sections a")
			require.Contains(t, br.text(t, "#sections"), "Audit log", "the admin is offered the access pages")
			manageRoleThroughUI(t, f, br)
			managePrincipalThroughUI(t, f, br)
			for i := 0; i < 60; i++ { // more audited requests than one page of the log
				f.must(204, "POST", "/management/v1/roles/reader/grants", grantBody(nil, nil, 0))
			}
			audit.Flush(t.Context())
			browseAuditLog(t, br)
		})
	}
}

func manageRoleThroughUI(t *testing.T, f *matrixFixture, br *browser) {
	br.fill(t, "#new-role-name", "ui_role")
	br.fill(t, "#new-role-description", "made in the console")
	br.click(t, "#create-role-form button[type=submit]")
	br.waitFor(t, "#grant-form")
	require.Equal(t, "made in the console", f.must(200, "GET", "/management/v1/roles/ui_role", nil).json(t)["description"])

	eval[chromedp.Void](t, br, `document.getElementById('grant-privilege').value = 'table-read-metadata';
		document.getElementById('grant-kind').value = 'namespace'`)
	br.fill(t, "#grant-warehouse", "wh")
	br.fill(t, "#grant-namespace", "sales.eu")
	br.click(t, "#grant-form button[type=submit]")
	br.waitFor(t, `tr.grant[data-grant="table-read-metadata@namespace:wh/sales.eu"]`)
	require.JSONEq(t, `{"grants":[{"privilege":"table-read-metadata","resource":{"kind":"namespace","warehouse":"wh","namespace":["sales","eu"]}}]}`,
		string(f.must(200, "GET", "/management/v1/roles/ui_role/grants", nil).body))

	br.fill(t, "#assign-name", "auditors")
	br.click(t, "#assign-form button[type=submit]")
	br.waitFor(t, `tr.assignment[data-assignee="group:auditors"]`)
	require.JSONEq(t, `{"assignments":[{"kind":"group","name":"auditors"}]}`,
		string(f.must(200, "GET", "/management/v1/roles/ui_role/assignments", nil).body))

	// A bad grant shows the API's 400 and changes nothing.
	eval[chromedp.Void](t, br, `document.getElementById('grant-privilege').value = 'manage-grants';
		document.getElementById('grant-kind').value = 'namespace'`)
	br.fill(t, "#grant-warehouse", "wh")
	br.fill(t, "#grant-namespace", "sales")
	br.click(t, "#grant-form button[type=submit]")
	br.waitFor(t, "#grant-form .error")
	require.Contains(t, br.text(t, "#grant-form .error"), "400")
	require.Contains(t, br.text(t, "#grant-form .error"), "cannot be granted on a namespace")
	require.Len(t, f.must(200, "GET", "/management/v1/roles/ui_role/grants", nil).json(t)["grants"], 1)
	br.shot(t, "01-role")

	br.click(t, "tr.grant button") // arms
	br.click(t, "tr.grant button") // confirms
	br.waitFor(t, "#grants .empty")
	require.JSONEq(t, `{"grants":[]}`, string(f.must(200, "GET", "/management/v1/roles/ui_role/grants", nil).body))

	br.open(t, "#/admin/roles", `tr[data-role="ui_role"]`)
	br.shot(t, "02-roles")
}

func managePrincipalThroughUI(t *testing.T, f *matrixFixture, br *browser) {
	br.open(t, "#/admin/principals", "#create-principal-form")
	br.fill(t, "#new-principal-name", "ui_etl")
	br.click(t, "#create-principal-form button[type=submit]")
	br.waitFor(t, `tr[data-principal="ui_etl"]`)
	id, secret := br.text(t, "#new-client-id"), br.text(t, "#new-client-secret")
	require.NotEmpty(t, secret)
	require.Equal(t, 200, builtinTokenStatus(t, f.b.url, id, secret), "the secret shown works")
	require.NotContains(t, string(f.must(200, "GET", "/management/v1/principals/ui_etl", nil).body), secret)
	br.shot(t, "03-principal-created")

	br.click(t, `[data-rotate="ui_etl"]`)
	_, err := chromedp.Run(br.ctx, chromedp.Poll[bool](fmt.Sprintf(`(document.getElementById('new-client-secret') || {}).textContent !== %q`, secret)))
	require.NoError(t, err)
	rotated := br.text(t, "#new-client-secret")
	require.NotEmpty(t, rotated)
	require.Equal(t, 200, builtinTokenStatus(t, f.b.url, id, rotated))
	require.NotEqual(t, 200, builtinTokenStatus(t, f.b.url, id, secret), "the old secret stops working")

	// Reloading the page never shows a secret again.
	br.open(t, "#/admin/principals", `tr[data-principal="ui_etl"]`)
	require.NotContains(t, br.text(t, "main"), rotated)
	br.click(t, `[data-delete="ui_etl"]`)
	br.click(t, `[data-delete="ui_etl"]`)
	_, err = chromedp.Run(br.ctx, chromedp.Poll[bool](`!document.querySelector('[data-principal="ui_etl"]') && !!document.querySelector('#principals')`))
	require.NoError(t, err)
	require.Equal(t, 404, f.do("GET", "/management/v1/principals/ui_etl", nil).status)
}

func browseAuditLog(t *testing.T, br *browser) {
	br.open(t, "#/admin/audit", "tr.audit-row")
	_, err := chromedp.Run(br.ctx, chromedp.Poll[bool](`document.querySelectorAll('tr.audit-row').length === 50`))
	require.NoError(t, err, "one page of 50")
	require.Contains(t, br.text(t, "#audit-info"), "more on the server")
	br.click(t, "#audit-more")
	_, err = chromedp.Run(br.ctx, chromedp.Poll[bool](`document.querySelectorAll('tr.audit-row').length > 50`))
	require.NoError(t, err, "the next page")
	br.shot(t, "04-audit")

	br.fill(t, "#audit-resource", "role:ui_role")
	br.click(t, "#audit-filters button[type=submit]")
	_, err = chromedp.Run(br.ctx, chromedp.Poll[bool](`[...document.querySelectorAll('tr.audit-row')].length > 0 &&
		[...document.querySelectorAll('tr.audit-row td:nth-child(4)')].every(td => td.textContent.startsWith('role:ui_role'))`))
	require.NoError(t, err, "filtered: %s", br.text(t, "#audit"))
	actions := eval[[]string](t, br, `[...document.querySelectorAll('tr.audit-row td:nth-child(3)')].map(td => td.textContent)`)
	require.Contains(t, actions, "POST /management/v1/roles/{role}/grants/revoke")
	require.Contains(t, actions, "POST /management/v1/roles/{role}/assignments")
	br.shot(t, "05-audit-filtered")
}

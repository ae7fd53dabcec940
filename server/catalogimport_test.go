package server_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/store"
)

// The source's secrets: a client secret traded for a token, and the token.
const (
	importSecret = "S3CRET-src-5e1f"
	importToken  = "TOKEN-src-77ab"
)

// importEnv is a target catalog under RBAC (with audit, captured logs and
// its database dump) and a source Lakehold behind a gate that wants
// importer:importSecret traded for importToken.
type importEnv struct {
	dst     *bundle
	dump    func() string
	audit   *service.AuditLog
	logs    *lockedBuffer
	srcURI  string // the gate
	src     *bundle
	outside string       // the source's allowed location outside the target's rules
	denied  atomic.Int32 // requests the gate refused
	hits    atomic.Int32 // requests the gate saw
	fail    atomic.Value // a path suffix (string) the gate answers 500 with its own text
}

func newImportEnv(t *testing.T, backend string) *importEnv {
	t.Helper()
	return newImportEnvOver(t, backend, nil)
}

// newImportEnvOver is newImportEnv with the target's service over
// wrap(store) (nil: the store itself).
func newImportEnvOver(t *testing.T, backend string, wrap func(store.Store) store.Store) *importEnv {
	t.Helper()
	e := &importEnv{logs: &lockedBuffer{}}
	e.outside = "file://" + filepath.Join(t.TempDir(), "outside")
	e.src = setupTB(t, "sqlite", map[string]string{"allowed-locations": e.outside})
	e.srcURI = e.gate(t)

	st, dump := atRest(t, backend)
	e.dump = dump
	log := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.audit = access.NewAuditLog(st, service.AuditLogOptions{Logger: log})
	t.Cleanup(e.audit.Close)
	svcStore := st
	if wrap != nil {
		svcStore = wrap(st)
	}
	svc := service.New(svcStore, storage.NewProvider(), service.Options{Authorizer: access.NewRBAC(st), Logger: log, Audit: e.audit})
	loc := "file://" + filepath.Join(t.TempDir(), "warehouse")
	// The target lets tables be where the source's warehouse keeps them.
	_, err := svc.CreateWarehouse(localCtx(), "wh", loc, map[string]string{"allowed-locations": e.src.warehouse})
	require.NoError(t, err)
	hs := httptest.NewServer(withTestPrincipal(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: log})))
	t.Cleanup(hs.Close)
	e.dst = &bundle{url: hs.URL, warehouse: loc, store: st, client: hs.Client(), svc: svc}
	e.seed(t)
	return e
}

// gate serves the source behind an OAuth2 client credentials sign-in; a
// refusal carries a server path and the presented secret in its message,
// which the import must not relay.
func (e *importEnv) gate(t *testing.T) string {
	u, err := url.Parse(e.src.url)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(u)
	refuse := func(w http.ResponseWriter, what string) {
		e.denied.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": 401, "type": "NotAuthorizedException",
			"message": "denied " + what + " per /srv/source/conf/users.yaml"}})
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.hits.Add(1)
		if r.URL.Path == "/v1/oauth/tokens" {
			_ = r.ParseForm()
			if r.Form.Get("client_id") != "importer" || r.Form.Get("client_secret") != importSecret {
				refuse(w, "client secret "+r.Form.Get("client_secret"))
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]string{"access_token": importToken, "token_type": "bearer"})
			return
		}
		if f, _ := e.fail.Load().(string); f != "" && strings.HasSuffix(r.URL.Path, f) {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"error":{"code":500,"type":"java.sql.SQLException at /srv/source/db","message":"stack at /srv/source/app.jar"}}`))
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+importToken {
			refuse(w, "token "+r.Header.Get("Authorization"))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// seed creates in the source: sales {owner: alice} with table orders and
// views v_orders (spark) and v_odd (cobol); ops with table elsewhere,
// located outside the target's rules.
func (e *importEnv) seed(t *testing.T) {
	t.Helper()
	ok := func(r response) { require.Equal(t, 200, r.status, "%s", r.body) }
	ok(e.src.do(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"sales"}, "properties": map[string]string{"owner": "alice"}}))
	ok(e.src.do(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"ops"}}))
	ok(e.src.createTable(t, "sales", "orders", nil))
	ok(e.src.createTable(t, "ops", "elsewhere", map[string]any{"location": e.outside + "/elsewhere"}))
	for name, dialect := range map[string]string{"v_orders": "spark", "v_odd": "cobol"} {
		ok(e.src.do(t, "POST", "/v1/wh/namespaces/sales/views", map[string]any{
			"name": name, "schema": jsonRaw(testSchema),
			"view-version": map[string]any{"version-id": 1, "timestamp-ms": time.Now().UnixMilli(), "schema-id": 0, "summary": map[string]string{},
				"default-namespace": []string{"sales"},
				"representations":   []map[string]string{{"type": "sql", "sql": "SELECT id FROM sales.orders", "dialect": dialect}}},
		}))
	}
}

// importAs posts an import as who with the given body fields over the
// source's URI, warehouse and credential.
func (e *importEnv) importAs(t *testing.T, who string, fields map[string]any) response {
	t.Helper()
	body := map[string]any{"source-uri": e.srcURI, "source-warehouse": "wh", "source-credential": "importer:" + importSecret}
	for k, v := range fields {
		if v == nil {
			delete(body, k)
		} else {
			body[k] = v
		}
	}
	return e.dst.do(t, "POST", "/management/v1/warehouses/wh/import", body, "X-Test-Principal", who)
}

type importAnswer struct {
	DryRun  bool   `json:"dry-run"`
	Note    string `json:"note"`
	Stopped string `json:"stopped"`
	Items   []struct {
		Kind      string   `json:"kind"`
		Namespace []string `json:"namespace"`
		Name      string   `json:"name"`
		Status    string   `json:"status"`
		Reason    string   `json:"reason"`
	} `json:"items"`
}

func decodeImport(t *testing.T, r response) (importAnswer, map[string]string, map[string]string) {
	t.Helper()
	require.Equal(t, 200, r.status, "%s", r.body)
	var a importAnswer
	require.NoError(t, json.Unmarshal(r.body, &a))
	status, reason := map[string]string{}, map[string]string{}
	for _, it := range a.Items {
		n := it.Kind + " " + strings.Join(append(append([]string{}, it.Namespace...), it.Name), ".")
		n = strings.TrimSuffix(n, ".")
		status[n], reason[n] = it.Status, it.Reason
	}
	return a, status, reason
}

// TestImportRoute: a dry run writes nothing and foresees the location
// refusal; the real run imports what it may and refuses by name the view
// in an unknown dialect and the table outside the warehouse's rules; a
// rerun skips everything it imported.
func TestImportRoute(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			e := newImportEnv(t, backend)
			a, st, why := decodeImport(t, e.importAs(t, "local", map[string]any{"dry-run": true}))
			require.True(t, a.DryRun)
			require.Contains(t, a.Note, "checked against the target warehouse's location")
			require.Equal(t, map[string]string{"namespace sales": "would-import", "namespace ops": "would-import",
				"table sales.orders": "would-import", "view sales.v_orders": "would-import",
				"view sales.v_odd": "refused", "table ops.elsewhere": "refused"}, st)
			require.Contains(t, why["view sales.v_odd"], `unknown SQL dialect "cobol"`)
			require.Contains(t, why["table ops.elsewhere"], "outside the target warehouse's location")
			require.Equal(t, 404, e.dst.do(t, "GET", "/v1/wh/namespaces/sales", nil, "X-Test-Principal", "local").status, "a dry run writes nothing")

			a, st, why = decodeImport(t, e.importAs(t, "local", nil))
			require.False(t, a.DryRun)
			require.Empty(t, a.Stopped)
			require.Equal(t, map[string]string{"namespace sales": "imported", "namespace ops": "imported",
				"table sales.orders": "imported", "view sales.v_orders": "imported",
				"view sales.v_odd": "refused", "table ops.elsewhere": "refused"}, st)
			require.Contains(t, why["table ops.elsewhere"], "the target refused it")
			r := e.dst.do(t, "GET", "/v1/wh/namespaces/sales/tables/orders", nil, "X-Test-Principal", "local")
			require.Equal(t, 200, r.status, "%s", r.body)
			srcLoad := e.src.do(t, "GET", "/v1/wh/namespaces/sales/tables/orders", nil)
			require.Equal(t, srcLoad.json(t)["metadata-location"], r.json(t)["metadata-location"], "registered at the source's metadata file")
			r = e.dst.do(t, "GET", "/v1/wh/namespaces/sales", nil, "X-Test-Principal", "local")
			require.Equal(t, "alice", r.json(t)["properties"].(map[string]any)["owner"])

			_, st, _ = decodeImport(t, e.importAs(t, "local", nil))
			require.Equal(t, map[string]string{"namespace sales": "skipped", "namespace ops": "skipped",
				"table sales.orders": "skipped", "view sales.v_orders": "skipped",
				"view sales.v_odd": "refused", "table ops.elsewhere": "refused"}, st, "a rerun skips what is there")

			// A namespace filter, with a token instead of a credential.
			_, st, _ = decodeImport(t, e.importAs(t, "local", map[string]any{"source-credential": nil, "source-token": importToken,
				"namespaces": [][]string{{"ops"}}, "dry-run": true}))
			require.Equal(t, map[string]string{"namespace ops": "skipped", "table ops.elsewhere": "refused"}, st)
		})
	}
}

// TestImportRouteAccess: only a caller with manage-warehouses on the
// warehouse may import; one who may create tables there is refused 403,
// one who holds nothing there is told it does not exist.
func TestImportRouteAccess(t *testing.T) {
	e := newImportEnv(t, "sqlite")
	as := func(who, method, path string, body any) response {
		return e.dst.do(t, method, path, body, "X-Test-Principal", who)
	}
	require.Equal(t, 200, as("local", "POST", "/management/v1/roles", map[string]any{"name": "writers"}).status)
	for _, p := range []string{"namespace-create", "table-create", "view-create", "namespace-list", "table-list"} {
		r := as("local", "POST", "/management/v1/roles/writers/grants", map[string]any{"privilege": p, "resource": map[string]any{"kind": "warehouse", "warehouse": "wh"}})
		require.Equal(t, 204, r.status, "%s", r.body)
	}
	require.Equal(t, 204, as("local", "POST", "/management/v1/roles/writers/assignments", map[string]any{"kind": "builtin", "name": "wendy"}).status)

	r := e.importAs(t, "builtin:wendy", nil)
	require.Equal(t, 403, r.status, "%s", r.body)
	typ, _ := r.errorOf(t)
	require.Equal(t, "ForbiddenException", typ)
	r = e.importAs(t, "builtin:nobody", nil)
	require.Equal(t, 404, r.status, "%s", r.body)
	require.Zero(t, e.hits.Load(), "a refused caller reaches no source")

	r = as("local", "POST", "/management/v1/roles/writers/grants", map[string]any{"privilege": "manage-warehouses",
		"resource": map[string]any{"kind": "warehouse", "warehouse": "wh"}})
	require.Equal(t, 204, r.status, "%s", r.body)
	_, st, _ := decodeImport(t, e.importAs(t, "builtin:wendy", nil))
	require.Equal(t, "imported", st["table sales.orders"], "a warehouse admin with the create privileges imports")
}

// TestImportRouteKeepsSecrets: the source's credential and token, good or
// bad, reach neither the answer, the audit log, the server's log lines nor
// its database; a source's refusal is summarised (its status) without its
// text; a source URI that is not http(s) or carries user info is refused
// without echoing it.
func TestImportRouteKeepsSecrets(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			e := newImportEnv(t, backend)
			const badSecret, badToken, uriPassword = "WRONG-secret-a1b2", "TOKEN-bad-c3d4", "pw-in-uri-e5f6"
			var answers []string
			post := func(fields map[string]any) response {
				r := e.importAs(t, "local", fields)
				answers = append(answers, string(r.body))
				return r
			}
			_, st, _ := decodeImport(t, post(nil))
			require.Equal(t, "imported", st["table sales.orders"])

			r := post(map[string]any{"source-credential": "importer:" + badSecret})
			require.Equal(t, 422, r.status, "%s", r.body)
			_, msg := r.errorOf(t)
			require.Contains(t, msg, "401 NotAuthorizedException", "the source's status is summarised")
			r = post(map[string]any{"source-credential": nil, "source-token": badToken})
			require.Equal(t, 422, r.status, "%s", r.body)
			r = post(map[string]any{"source-credential": "importer:" + badSecret, "source-token": badToken})
			require.Equal(t, 400, r.status, "%s", r.body)
			require.Equal(t, 2, int(e.denied.Load()), "the source refused the bad secret and the bad token")

			u, err := url.Parse(e.srcURI)
			require.NoError(t, err)
			u.User = url.UserPassword("importer", uriPassword)
			r = post(map[string]any{"source-uri": u.String()})
			require.Equal(t, 400, r.status, "%s", r.body)
			for _, bad := range []string{"file:///etc", "ftp://example.com", "/v1/relative"} {
				r = post(map[string]any{"source-uri": bad})
				require.Equal(t, 400, r.status, "%s: %s", bad, r.body)
			}

			e.audit.Flush(t.Context())
			evs := ""
			rows, _, err := e.dst.store.ListAudit(t.Context(), store.AuditFilter{}, store.Page{Size: 100000})
			require.NoError(t, err)
			for _, ev := range rows {
				evs += ev.Action + " " + ev.Resource + " " + ev.Detail + "\n"
			}
			require.Contains(t, evs, "/management/v1/warehouses/{warehouse}/import", "the imports are audited")
			places := map[string]string{"answers": strings.Join(answers, "\n"), "audit": evs, "logs": e.logs.String(), "database": e.dump()}
			for place, text := range places {
				for _, secret := range []string{importSecret, importToken, badSecret, badToken, uriPassword, "/srv/source"} {
					require.NotContains(t, text, secret, "%s must not hold %q", place, secret)
				}
			}
		})
	}
}

// TestImportRouteSourceFailsMidway: a source failing on one table's load
// (after the listings) stops the import before anything is written: 422
// naming the step, with the source's status but neither its message nor
// an error type that is not a plain name.
func TestImportRouteSourceFailsMidway(t *testing.T) {
	e := newImportEnv(t, "sqlite")
	e.fail.Store("/tables/elsewhere")
	r := e.importAs(t, "local", nil)
	require.Equal(t, 422, r.status, "%s", r.body)
	_, msg := r.errorOf(t)
	require.Equal(t, "The import stopped: source: load table ops.elsewhere: the catalog answered 500 Internal Server Error", msg)
	require.NotContains(t, string(r.body), "/srv/source")
	require.Equal(t, 404, e.dst.do(t, "GET", "/v1/wh/namespaces/sales", nil, "X-Test-Principal", "local").status, "nothing was written")
	require.NotContains(t, e.logs.String(), "/srv/source")
}

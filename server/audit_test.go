package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/store"
)

// fakeVendor hands out fixed, secret-looking credentials for any location.
type fakeVendor struct{}

const vendedSecret = "vendedsecret-9f8e7d"

func (fakeVendor) Vend(_ context.Context, _ credentials.WarehouseInfo, loc string, level credentials.AccessLevel) (map[string]string, []credentials.StorageCredential, error) {
	cfg := map[string]string{"s3.access-key-id": "AKIAVENDED", "s3.secret-access-key": vendedSecret, "s3.session-token": vendedSecret}
	return map[string]string{}, []credentials.StorageCredential{{Prefix: loc, Config: cfg}}, nil
}

// denyAll refuses every privilege and every storage access.
type denyAll struct{}

func (denyAll) Authorize(context.Context, identity.Principal, service.Privilege, service.Resource) error {
	return &fault.Error{Kind: fault.Forbidden, Message: "Forbidden"}
}

func (denyAll) TableAccess(context.Context, identity.Principal, service.Resource) (credentials.AccessLevel, error) {
	return "", &fault.Error{Kind: fault.Forbidden, Message: "Forbidden"}
}

func (denyAll) Held(context.Context, identity.Principal, service.Resource, []service.Privilege) ([]service.Privilege, error) {
	return nil, nil
}

type auditBundle struct {
	*bundle
	audit *service.AuditLog
	logs  *lockedBuffer
}

// auditSetup is setup with an audit log, a credential vendor, captured
// JSON logs and the given authorizer (nil allows all).
func auditSetup(t *testing.T, backend string, authz service.Authorizer) *auditBundle {
	t.Helper()
	st := openStore(t, backend)
	logs := &lockedBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	audit := access.NewAuditLog(st, service.AuditLogOptions{Logger: log})
	t.Cleanup(audit.Close)
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: log, Audit: audit,
		Credentials: fakeVendor{}, Authorizer: authz})
	loc := "file://" + filepath.Join(t.TempDir(), "warehouse")
	// The warehouse is made beside the server under test, whose authorizer
	// may refuse everything.
	_, err := service.New(st, storage.NewProvider(), service.Options{Logger: log}).CreateWarehouse(localCtx(), "wh", loc, nil)
	require.NoError(t, err)
	hs := httptest.NewServer(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: log}))
	t.Cleanup(hs.Close)
	return &auditBundle{bundle: &bundle{url: hs.URL, warehouse: loc, store: st, client: hs.Client()}, audit: audit, logs: logs}
}

// rows flushes the audit log and returns every stored event, oldest first.
func (b *auditBundle) rows(t *testing.T) []store.AuditEvent {
	t.Helper()
	b.audit.Flush(context.Background())
	evs, _, err := b.store.ListAudit(context.Background(), store.AuditFilter{}, store.Page{})
	require.NoError(t, err)
	for i, j := 0, len(evs)-1; i < j; i, j = i+1, j-1 {
		evs[i], evs[j] = evs[j], evs[i]
	}
	return evs
}

func TestAuditMutatingRequests(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := auditSetup(t, backend, nil)
			r := b.do(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"a b"}}, "X-Request-ID", "req-create")
			require.Equal(t, 200, r.status, "%s", r.body)
			require.Equal(t, 200, b.do(t, "GET", "/v1/wh/namespaces", nil).status)
			require.Equal(t, 204, b.do(t, "HEAD", "/v1/wh/namespaces/a%20b", nil).status)
			r = b.do(t, "DELETE", "/v1/wh/namespaces/missing", nil)
			require.Equal(t, 404, r.status)

			rows := b.rows(t)
			require.Len(t, rows, 2, "GET and HEAD must not be audited: %+v", rows)
			c := rows[0]
			require.Equal(t, "POST /v1/{prefix}/namespaces", c.Action)
			require.Equal(t, "warehouse:wh", c.Resource)
			require.Equal(t, "anonymous:anonymous", c.Principal)
			require.Equal(t, "allowed", c.Decision)
			require.Equal(t, 200, c.Status)
			require.Equal(t, "req-create", c.RequestID)
			d := rows[1]
			require.Equal(t, "DELETE /v1/{prefix}/namespaces/{namespace}", d.Action)
			require.Equal(t, "namespace:wh/missing", d.Resource)
			require.Equal(t, "failed", d.Decision)
			require.Equal(t, 404, d.Status)
			require.Equal(t, d.RequestID, r.header.Get("X-Request-ID"))
			require.Contains(t, b.logs.String(), `"msg":"audit"`)
		})
	}
}

func TestAuditResourceNames(t *testing.T) {
	b := auditSetup(t, "sqlite", nil)
	b.createNamespace(t, "a/b")
	b.createNamespace(t, "a/b", "c")
	r := b.createTable(t, "a%2Fb%1Fc", "t 1", nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	require.Equal(t, 204, b.do(t, "DELETE", "/v1/wh/namespaces/a%2Fb%1Fc/tables/t%201", nil).status)
	require.Equal(t, 400, b.do(t, "POST", "/v1/wh/nowhere", nil).status)
	rows := b.rows(t)
	require.Len(t, rows, 5)
	rows = rows[1:]
	require.Equal(t, "namespace:wh/a/b.c", rows[1].Resource, "create table names its namespace")
	require.Equal(t, "table:wh/a/b.c/t 1", rows[2].Resource, "decoded names")
	require.Equal(t, "POST unmatched", rows[3].Action)
}

func TestAuditVends(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := auditSetup(t, backend, nil)
			b.createNamespace(t, "ns")
			r := b.createTable(t, "ns", "t", nil)
			require.Equal(t, 200, r.status, "%s", r.body)
			before := len(b.rows(t))

			r = b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil, "X-Iceberg-Access-Delegation", "vended-credentials")
			require.Equal(t, 200, r.status, "%s", r.body)
			require.NotEmpty(t, r.json(t)["storage-credentials"], "the fake vendor's credentials must reach the client")
			rows := b.rows(t)[before:]
			require.Len(t, rows, 1, "one vend on load, nothing else: %+v", rows)
			v := rows[0]
			require.Equal(t, "vend-credentials", v.Action)
			require.Equal(t, "table:wh/ns/t", v.Resource)
			require.Equal(t, "access=read-write", v.Detail)
			require.Equal(t, "allowed", v.Decision)
			require.Equal(t, 200, v.Status)
			require.Equal(t, r.header.Get("X-Request-ID"), v.RequestID)

			r = b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t/credentials", nil)
			require.Equal(t, 200, r.status, "%s", r.body)
			rows = b.rows(t)[before+1:]
			require.Len(t, rows, 1)
			require.Equal(t, "vend-credentials", rows[0].Action)

			// A create that vends records the request and the vend.
			r = b.createTableWith(t, "ns", "t2", "X-Iceberg-Access-Delegation", "vended-credentials")
			require.Equal(t, 200, r.status, "%s", r.body)
			rows = b.rows(t)[before+2:]
			require.Len(t, rows, 2)
			actions := []string{rows[0].Action, rows[1].Action}
			require.ElementsMatch(t, []string{"vend-credentials", "POST /v1/{prefix}/namespaces/{namespace}/tables"}, actions)
		})
	}
}

func (b *auditBundle) createTableWith(t *testing.T, ns, name string, headers ...string) response {
	t.Helper()
	return b.do(t, "POST", "/v1/wh/namespaces/"+ns+"/tables", map[string]any{"name": name, "schema": json.RawMessage(testSchema)}, headers...)
}

func TestAuditDenied(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := auditSetup(t, backend, denyAll{})
			r := b.do(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"ns"}})
			require.Equal(t, 403, r.status, "%s", r.body)
			r = b.do(t, "DELETE", "/v1/wh/namespaces/ns/tables/t", nil)
			require.Equal(t, 403, r.status, "%s", r.body)
			r = b.do(t, "GET", "/management/v1/audit", nil)
			require.Equal(t, 403, r.status, "listing the audit trail needs manage-grants: %s", r.body)
			rows := b.rows(t)
			require.Len(t, rows, 2)
			for _, e := range rows {
				require.Equal(t, "denied", e.Decision)
				require.Equal(t, 403, e.Status)
			}
			require.Equal(t, "table:wh/ns/t", rows[1].Resource)
		})
	}
}

func TestAuditVendDenied(t *testing.T) {
	b := auditSetup(t, "sqlite", nil)
	b.createNamespace(t, "ns")
	require.Equal(t, 200, b.createTable(t, "ns", "t", nil).status)
	// Same store, a second server whose authorizer grants no storage access.
	log := slog.New(slog.NewJSONHandler(b.logs, nil))
	audit := access.NewAuditLog(b.store, service.AuditLogOptions{Logger: log})
	svc := service.New(b.store, storage.NewProvider(), service.Options{Logger: log, Audit: audit, Credentials: fakeVendor{}, Authorizer: denyAll{}})
	hs := httptest.NewServer(server.New(svc, server.Config{Logger: log}))
	defer hs.Close()
	other := &bundle{url: hs.URL, client: hs.Client()}
	r := other.do(t, "GET", "/v1/wh/namespaces/ns/tables/t/credentials", nil)
	require.Equal(t, 403, r.status, "%s", r.body)
	audit.Close()
	evs, _, err := b.store.ListAudit(context.Background(), store.AuditFilter{Action: "vend-credentials"}, store.Page{})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, "denied", evs[0].Decision)
	require.Equal(t, 403, evs[0].Status, "the vend row carries the status the request answered")
	require.Equal(t, "table:wh/ns/t", evs[0].Resource)
}

// TestAuditKeepsNoSecrets sends a bearer token, a body and query strings
// holding secrets, then looks for them in every audit row and the whole
// log output.
func TestAuditKeepsNoSecrets(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := auditSetup(t, backend, nil)
			const bearer, bodySecret, querySecret = "eyJhbGciOiJIUzI1NiJ9.bearersecret-5b4a", "bodysecret-7c6d", "querysecret-3e2f"
			auth := []string{"Authorization", "Bearer " + bearer, "X-Iceberg-Access-Delegation", "vended-credentials"}
			r := b.do(t, "POST", "/v1/wh/namespaces?token="+querySecret, map[string]any{"namespace": []string{"ns"},
				"properties": map[string]string{"password": bodySecret}}, auth...)
			require.Equal(t, 200, r.status, "%s", r.body)
			r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "t", "schema": json.RawMessage(testSchema),
				"properties": map[string]string{"s3.secret-access-key": bodySecret}}, auth...)
			require.Equal(t, 200, r.status, "%s", r.body)
			require.Contains(t, string(r.body), vendedSecret, "the vend must have happened for this test to mean anything")
			r = b.do(t, "POST", "/v1/oauth/tokens?client_secret="+querySecret, "grant_type=client_credentials&client_secret="+bodySecret,
				"Content-Type", "application/x-www-form-urlencoded", "Authorization", "Basic "+bearer)
			r = b.do(t, "POST", "/v1/wh/namespaces", `{"namespace": ["`+bodySecret+`"`, auth...) // malformed body
			require.Equal(t, 400, r.status)
			rows := b.rows(t)
			require.GreaterOrEqual(t, len(rows), 5, "%+v", rows)
			all := b.logs.String() + fmt.Sprintf("%+v", rows)
			for _, secret := range []string{bearer, "bearersecret", bodySecret, querySecret, vendedSecret} {
				require.NotContains(t, all, secret)
			}
		})
	}
}

func TestAuditManagementAPI(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := auditSetup(t, backend, nil)
			start := time.Now().Add(-time.Second).UTC().Format(time.RFC3339)
			for i := 0; i < 5; i++ {
				b.createNamespace(t, fmt.Sprint("ns", i))
			}
			require.Equal(t, 204, b.do(t, "DELETE", "/v1/wh/namespaces/ns0", nil).status)
			b.audit.Flush(context.Background())

			var got []map[string]any
			tok := ""
			for pages := 1; ; pages++ {
				path := "/management/v1/audit?pageSize=2&action=" + urlq("POST /v1/{prefix}/namespaces") + "&since=" + urlq(start)
				if tok != "" {
					path += "&pageToken=" + urlq(tok)
				}
				r := b.do(t, "GET", path, nil)
				require.Equal(t, 200, r.status, "%s", r.body)
				m := r.json(t)
				for _, e := range m["events"].([]any) {
					got = append(got, e.(map[string]any))
				}
				next, _ := m["next-page-token"].(string)
				if next == "" {
					require.Equal(t, 3, pages)
					break
				}
				tok = next
			}
			require.Len(t, got, 5)
			e := got[0]
			for _, k := range []string{"id", "at", "request-id", "principal", "action", "resource", "decision", "status", "detail"} {
				require.Contains(t, e, k)
			}
			_, err := time.Parse(time.RFC3339, e["at"].(string))
			require.NoError(t, err)

			r := b.do(t, "GET", "/management/v1/audit?resource="+urlq("namespace:wh/ns0"), nil)
			require.Equal(t, 200, r.status, "%s", r.body)
			evs := r.json(t)["events"].([]any)
			require.Len(t, evs, 1)
			require.Equal(t, "DELETE /v1/{prefix}/namespaces/{namespace}", evs[0].(map[string]any)["action"])

			r = b.do(t, "GET", "/management/v1/audit?until="+urlq(start), nil)
			require.Equal(t, 200, r.status)
			require.Empty(t, r.json(t)["events"])
			for _, bad := range []string{"since=yesterday", "pageSize=0", "pageSize=1001", "pageToken=%25%25"} {
				r = b.do(t, "GET", "/management/v1/audit?"+bad, nil)
				require.Equal(t, 400, r.status, "%s: %s", bad, r.body)
				r.errorOf(t)
			}
		})
	}
}

func urlq(s string) string {
	return strings.NewReplacer("%", "%25", " ", "%20", "{", "%7B", "}", "%7D", "/", "%2F", ":", "%3A", "+", "%2B").Replace(s)
}

package pipeline

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
)

func TestRouteResource(t *testing.T) {
	params := map[string]string{"prefix": "wh", "namespace": "a\x1fb", "table": "t", "view": "v", "name": "x", "role": "admin"}
	param := func(k string) string { return params[k] }
	for pattern, want := range map[string]string{
		"/v1/{prefix}/namespaces":                                  "warehouse:wh",
		"/v1/{prefix}/tables/rename":                               "warehouse:wh",
		"/v1/{prefix}/namespaces/{namespace}/properties":           "namespace:wh/a.b",
		"/v1/{prefix}/namespaces/{namespace}/tables/{table}/files": "table:wh/a.b/t",
		"/v1/{prefix}/namespaces/{namespace}/views/{view}":         "view:wh/a.b/v",
		"/management/v1/warehouses":                                "server:",
		"/management/v1/warehouses/{name}/storage-profile":         "warehouse:x",
		"/management/v1/roles/{role}/grants":                       "role:admin",
		"/management/v1/principals/{name}":                         "principal:x",
		"/v1/oauth/tokens":                                         "server:",
		"/v1/config":                                               "server:",
	} {
		if got := routeResource(pattern, param); got != want {
			t.Errorf("%s: %q, want %q", pattern, got, want)
		}
	}
}

// TestAuditTokenRoute: a token request is audited as issue-token, with
// neither its form body, its query string nor its headers anywhere in the
// row or the logs. The token route belongs to authentication, so a stand-in
// handler serves it here.
func TestAuditTokenRoute(t *testing.T) {
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	audit := access.NewAuditLog(st, service.AuditLogOptions{Logger: log})
	r := chi.NewRouter()
	srv := New(service.New(st, storage.NewProvider(), service.Options{Logger: log, Audit: audit}), Config{Logger: log, Registry: prometheus.NewRegistry()}, r)
	r.Use(srv.RequestContext, srv.Audit)
	r.Post(tokenRoute, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"issuedtoken-1a2b","token_type":"bearer"}`))
	})
	req := httptest.NewRequest("POST", tokenRoute+"?client_secret=querysecret-1", strings.NewReader("grant_type=client_credentials&client_id=etl&client_secret=formsecret-2"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Basic aGVhZGVyc2VjcmV0LTM=")
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	audit.Close()
	evs, _, err := st.ListAudit(ctx, store.AuditFilter{}, store.Page{})
	if err != nil || len(evs) != 1 {
		t.Fatalf("%d rows, %v", len(evs), err)
	}
	e := evs[0]
	if e.Action != "issue-token" || e.Decision != "allowed" || e.Status != 200 || e.RequestID == "" {
		t.Fatalf("row %+v", e)
	}
	all := logs.String() + e.Principal + e.Resource + e.Detail + e.Action
	for _, secret := range []string{"querysecret", "formsecret", "aGVhZGVyc2VjcmV0", "issuedtoken", "client_secret"} {
		if strings.Contains(all, secret) {
			t.Errorf("%s leaked into the audit row or logs", secret)
		}
	}
}

// TestAuditPanickingHandler: a handler that panics is still audited, as
// the 500 the client gets.
func TestAuditPanickingHandler(t *testing.T) {
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	audit := access.NewAuditLog(st, service.AuditLogOptions{Logger: quiet})
	r := chi.NewRouter()
	srv := New(service.New(st, storage.NewProvider(), service.Options{Logger: quiet, Audit: audit}), Config{Logger: quiet, Registry: prometheus.NewRegistry()}, r)
	r.Use(srv.RequestContext, srv.Audit)
	r.Delete("/management/v1/warehouses/{name}", func(http.ResponseWriter, *http.Request) { panic("boom") })
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest("DELETE", "/management/v1/warehouses/w1", nil))
	audit.Close()
	evs, _, err := st.ListAudit(ctx, store.AuditFilter{}, store.Page{})
	if err != nil || len(evs) != 1 {
		t.Fatalf("%d rows, %v", len(evs), err)
	}
	if e := evs[0]; e.Status != 500 || e.Status != rec.Code || e.Decision != "failed" || e.Resource != "warehouse:w1" {
		t.Fatalf("row %+v, response %d", e, rec.Code)
	}
}

// TestAuditAroundAuthentication: with audit before authentication and
// AuditPrincipal after it, a request authentication refuses is recorded as
// denied for the anonymous principal, and an authenticated one under its
// principal.
func TestAuditAroundAuthentication(t *testing.T) {
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	audit := access.NewAuditLog(st, service.AuditLogOptions{Logger: quiet})
	r := chi.NewRouter()
	srv := New(service.New(st, storage.NewProvider(), service.Options{Logger: quiet, Audit: audit}), Config{Logger: quiet, Registry: prometheus.NewRegistry()}, r)
	authn := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") == "" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			p := identity.Principal{Source: identity.SourceOIDC, Subject: "alice"}
			next.ServeHTTP(w, r.WithContext(identity.With(r.Context(), p)))
		})
	}
	r.Use(srv.RequestContext, srv.Audit, authn, AuditPrincipal)
	r.Post("/v1/{prefix}/namespaces", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	for _, hdr := range []string{"", "Bearer x"} {
		req := httptest.NewRequest("POST", "/v1/wh/namespaces", nil)
		if hdr != "" {
			req.Header.Set("Authorization", hdr)
		}
		r.ServeHTTP(httptest.NewRecorder(), req)
	}
	audit.Close()
	evs, _, err := st.ListAudit(ctx, store.AuditFilter{}, store.Page{})
	if err != nil || len(evs) != 2 {
		t.Fatalf("%d rows, %v", len(evs), err)
	}
	byStatus := map[int]store.AuditEvent{evs[0].Status: evs[0], evs[1].Status: evs[1]}
	if e := byStatus[401]; e.Decision != "denied" || e.Principal != "anonymous:anonymous" ||
		e.Action != "POST /v1/{prefix}/namespaces" || e.Resource != "warehouse:wh" {
		t.Errorf("refused request: %+v", e)
	}
	if e := byStatus[200]; e.Decision != "allowed" || e.Principal != "oidc:alice" || e.Resource != "warehouse:wh" {
		t.Errorf("authenticated request: %+v", e)
	}
}

package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/access"
)

// withTestPrincipal stands in for authentication: X-Test-Principal
// "builtin:NAME" or "oidc:SUB" names the caller, "local" the operator.
func withTestPrincipal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := r.Header.Get("X-Test-Principal"); h != "" {
			p := identity.Principal{Source: identity.SourceLocal, Subject: "test"}
			if src, sub, ok := strings.Cut(h, ":"); ok {
				p = identity.Principal{Source: identity.Source(src), Subject: sub}
			}
			r = r.WithContext(identity.With(r.Context(), p))
		}
		next.ServeHTTP(w, r)
	})
}

// setupRBAC starts a catalog under the RBAC authorizer with warehouse wh,
// namespace ns and table t (created by the operator).
func setupRBAC(t *testing.T, backend string) *bundle {
	st := openStore(t, backend)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(st, storage.NewProvider(), service.Options{Authorizer: access.NewRBAC(st), Logger: quiet})
	loc := "file://" + filepath.Join(t.TempDir(), "warehouse")
	local := identity.With(context.Background(), identity.Principal{Source: identity.SourceLocal})
	_, err := svc.CreateWarehouse(local, "wh", loc, nil)
	require.NoError(t, err)
	hs := httptest.NewServer(withTestPrincipal(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: quiet})))
	t.Cleanup(hs.Close)
	b := &bundle{url: hs.URL, warehouse: loc, store: st, client: hs.Client()}
	r := b.do(t, "POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"ns"}}, "X-Test-Principal", "local")
	require.Equal(t, 200, r.status, "%s", r.body)
	r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "t", "schema": jsonRaw(testSchema)}, "X-Test-Principal", "local")
	require.Equal(t, 200, r.status, "%s", r.body)
	return b
}

func TestRBACOverHTTP(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setupRBAC(t, backend)
			as := func(who, method, path string, body any) response {
				return b.do(t, method, path, body, "X-Test-Principal", who)
			}
			admin := "local"
			require.Equal(t, 200, as(admin, "POST", "/management/v1/roles", map[string]any{"name": "readers", "description": "read ns"}).status)
			r := as(admin, "POST", "/management/v1/roles/readers/grants", map[string]any{
				"privilege": "table-read-metadata", "resource": map[string]any{"kind": "namespace", "warehouse": "wh", "namespace": []string{"ns"}}})
			require.Equal(t, 204, r.status, "%s", r.body)
			r = as(admin, "POST", "/management/v1/roles/readers/assignments", map[string]any{"kind": "builtin", "name": "alice"})
			require.Equal(t, 204, r.status, "%s", r.body)

			require.Equal(t, 200, as("builtin:alice", "GET", "/v1/wh/namespaces/ns/tables/t", nil).status)
			require.Equal(t, 200, as("builtin:alice", "GET", "/v1/config?warehouse=wh", nil).status)
			r = as("builtin:alice", "POST", "/v1/wh/namespaces/ns/tables/t", map[string]any{"updates": []any{}})
			require.Equal(t, 403, r.status, "%s", r.body)
			typ, _ := r.errorOf(t)
			require.Equal(t, "ForbiddenException", typ)

			// Hidden answers exactly as missing.
			hidden := as("builtin:bob", "GET", "/v1/wh/namespaces/ns/tables/t", nil)
			missing := as(admin, "GET", "/v1/wh/namespaces/ns/tables/nope", nil)
			require.Equal(t, 404, hidden.status)
			ht, hm := hidden.errorOf(t)
			mt, mm := missing.errorOf(t)
			require.Equal(t, mt, ht)
			require.Equal(t, strings.Replace(mm, "nope", "t", 1), hm)
			require.Equal(t, 404, as("builtin:bob", "GET", "/v1/wh/namespaces/ns/tables", nil).status)
			require.Equal(t, 404, as("builtin:bob", "GET", "/v1/config?warehouse=wh", nil).status)

			// Management needs manage-grants; bad grants are 400 with the reason.
			r = as("builtin:alice", "POST", "/management/v1/roles", map[string]any{"name": "x"})
			require.Equal(t, 403, r.status, "%s", r.body)
			r = as(admin, "POST", "/management/v1/roles/readers/grants", map[string]any{"privilege": "read-all", "resource": map[string]any{"kind": "server"}})
			require.Equal(t, 400, r.status)
			_, msg := r.errorOf(t)
			require.Contains(t, msg, `Unknown privilege "read-all"`)
			r = as(admin, "POST", "/management/v1/roles/readers/grants", map[string]any{"privilege": "table-drop", "resource": map[string]any{"kind": "bucket"}})
			require.Equal(t, 400, r.status)
			_, msg = r.errorOf(t)
			require.Contains(t, msg, `Unknown resource kind "bucket"`)
			r = as(admin, "POST", "/management/v1/roles/nope/grants", map[string]any{"privilege": "table-drop", "resource": map[string]any{"kind": "server"}})
			require.Equal(t, 404, r.status)

			r = as(admin, "GET", "/management/v1/roles/readers/grants", nil)
			require.Equal(t, 200, r.status)
			require.JSONEq(t, `{"grants":[{"privilege":"table-read-metadata","resource":{"kind":"namespace","warehouse":"wh","namespace":["ns"]}}]}`, string(r.body))
			r = as(admin, "GET", "/management/v1/roles", nil)
			require.JSONEq(t, `{"roles":[{"name":"readers","description":"read ns"}]}`, string(r.body))

			// A subject with a slash survives the path.
			r = as(admin, "POST", "/management/v1/roles/readers/assignments", map[string]any{"kind": "oidc", "name": "https://idp/u|1"})
			require.Equal(t, 204, r.status, "%s", r.body)
			r = as(admin, "DELETE", "/management/v1/roles/readers/assignments/oidc/https:%2F%2Fidp%2Fu%7C1", nil)
			require.Equal(t, 204, r.status, "%s", r.body)
			r = as(admin, "GET", "/management/v1/roles/readers/assignments", nil)
			require.JSONEq(t, `{"assignments":[{"kind":"builtin","name":"alice"}]}`, string(r.body))

			r = as(admin, "POST", "/management/v1/roles/readers/grants/revoke", map[string]any{
				"privilege": "table-read-metadata", "resource": map[string]any{"kind": "namespace", "warehouse": "wh", "namespace": []string{"ns"}}})
			require.Equal(t, 204, r.status, "%s", r.body)
			require.Equal(t, 404, as("builtin:alice", "GET", "/v1/wh/namespaces/ns/tables/t", nil).status, "revoked at once")
			require.Equal(t, 204, as(admin, "DELETE", "/management/v1/roles/readers", nil).status)
			require.Equal(t, 404, as(admin, "GET", "/management/v1/roles/readers", nil).status)
		})
	}
}

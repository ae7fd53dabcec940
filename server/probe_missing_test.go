package server_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A caller who may see a namespace but not read its views gets 404 for a
// view name that does not exist (engines probe: Trino loads a view of the
// name a table is about to take) and still 403 for one that does.
func TestProbeOfMissingNameIs404(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setupRBAC(t, backend)
			as := func(who, method, path string, body any) response {
				return b.do(t, method, path, body, "X-Test-Principal", who)
			}
			require.Equal(t, 200, as("local", "POST", "/management/v1/roles", map[string]any{"name": "tables-only"}).status)
			r := as("local", "POST", "/management/v1/roles/tables-only/grants", map[string]any{
				"privilege": "table-read-metadata", "resource": map[string]any{"kind": "namespace", "warehouse": "wh", "namespace": []string{"ns"}}})
			require.Equal(t, 204, r.status, "%s", r.body)
			r = as("local", "POST", "/management/v1/roles/tables-only/assignments", map[string]any{"kind": "builtin", "name": "etl"})
			require.Equal(t, 204, r.status, "%s", r.body)
			b.do(t, "POST", "/v1/wh/namespaces/ns/views", viewBody("v"), "X-Test-Principal", "local")

			r = as("builtin:etl", "GET", "/v1/wh/namespaces/ns/views/nope", nil)
			require.Equal(t, 404, r.status, "%s", r.body)
			typ, _ := r.errorOf(t)
			require.Equal(t, "NoSuchViewException", typ)
			require.Equal(t, 404, as("builtin:etl", "HEAD", "/v1/wh/namespaces/ns/views/nope", nil).status)
			r = as("builtin:etl", "GET", "/v1/wh/namespaces/ns/views/v", nil)
			require.Equal(t, 403, r.status, "%s", r.body)
		})
	}
}

package server_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEffectivePrivilegesOverHTTP checks GET /management/v1/privileges:
// the caller's own privileges with inheritance, the namespace levels
// decoded from %1F, and 400s with an ErrorModel for ill-formed resources.
func TestEffectivePrivilegesOverHTTP(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setupRBAC(t, backend)
			as := func(who, method, path string, body any) response {
				return b.do(t, method, path, body, "X-Test-Principal", who)
			}
			require.Equal(t, 200, as("local", "POST", "/management/v1/roles", map[string]any{"name": "readers"}).status)
			for _, p := range []string{"table-list", "table-read-metadata"} {
				r := as("local", "POST", "/management/v1/roles/readers/grants", map[string]any{
					"privilege": p, "resource": map[string]any{"kind": "namespace", "warehouse": "wh", "namespace": []string{"ns"}}})
				require.Equal(t, 204, r.status, "%s", r.body)
			}
			require.Equal(t, 204, as("local", "POST", "/management/v1/roles/readers/assignments", map[string]any{"kind": "builtin", "name": "alice"}).status)

			r := as("builtin:alice", "GET", "/management/v1/privileges?kind=table&warehouse=wh&namespace=ns&name=t", nil)
			require.Equal(t, 200, r.status, "%s", r.body)
			require.JSONEq(t, `{"resource":{"kind":"table","warehouse":"wh","namespace":["ns"],"name":"t"},"privileges":["table-list","table-read-metadata"]}`, string(r.body))
			// Inherited by a nested namespace; nothing on another warehouse.
			r = as("builtin:alice", "GET", "/management/v1/privileges?kind=namespace&warehouse=wh&namespace=ns%1Fdeeper", nil)
			require.JSONEq(t, `{"resource":{"kind":"namespace","warehouse":"wh","namespace":["ns","deeper"]},"privileges":["table-list","table-read-metadata"]}`, string(r.body))
			r = as("builtin:alice", "GET", "/management/v1/privileges?kind=warehouse&warehouse=wh2", nil)
			require.JSONEq(t, `{"resource":{"kind":"warehouse","warehouse":"wh2"},"privileges":[]}`, string(r.body))
			r = as("builtin:bob", "GET", "/management/v1/privileges?kind=server", nil)
			require.JSONEq(t, `{"resource":{"kind":"server"},"privileges":[]}`, string(r.body))
			r = as("local", "GET", "/management/v1/privileges?kind=table&warehouse=wh&namespace=ns&name=t", nil)
			require.Contains(t, string(r.body), `"table-drop"`)

			for _, bad := range []string{"kind=table&warehouse=wh&namespace=ns", "kind=bucket", "kind=namespace&warehouse=wh&namespace=a%1F%1Fb", "warehouse=wh"} {
				r := as("builtin:alice", "GET", "/management/v1/privileges?"+bad, nil)
				require.Equal(t, 400, r.status, "%s: %s", bad, r.body)
				r.errorOf(t)
			}
		})
	}
}

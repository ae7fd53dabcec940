package server_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A stored Idempotency-Key response is replayed only to the principal
// whose request stored it: another principal reusing the key (guessed or
// leaked) runs its own request and cannot read the first one's answer.
func TestIdempotencyKeyIsPerPrincipal(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setupRBAC(t, backend)
			body := map[string]any{"namespace": []string{"keyed"}}
			key := "0190f1f4-6b1e-7c39-9a55-3c1f0b6e2a10"
			r := b.do(t, "POST", "/v1/wh/namespaces", body, "X-Test-Principal", "local", "Idempotency-Key", key)
			require.Equal(t, 200, r.status, "%s", r.body)
			// The same principal retrying gets the stored answer.
			r = b.do(t, "POST", "/v1/wh/namespaces", body, "X-Test-Principal", "local", "Idempotency-Key", key)
			require.Equal(t, 200, r.status, "%s", r.body)
			// Another principal with no grants is refused on its own
			// merits instead of receiving the replay.
			r = b.do(t, "POST", "/v1/wh/namespaces", body, "X-Test-Principal", "builtin:stranger", "Idempotency-Key", key)
			require.NotEqual(t, 200, r.status, "%s", r.body)
			typ, _ := r.errorOf(t)
			require.Contains(t, []string{"ForbiddenException", "NoSuchWarehouseException"}, typ)
		})
	}
}

package pipeline

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each layer of the replay rule alone keeps secrets out of the
// Idempotency-Key store: the token route takes no key, and a no-store
// answer is stored only in the redacted form its handler gave.
func TestIdempotencyLayers(t *testing.T) {
	for path, want := range map[string]bool{
		"/v1/oauth/tokens": false, "/v1/wh/namespaces": true, "/v1/wh/namespaces/ns/tables/t/metrics": false,
		"/management/v1/principals": false,
	} {
		require.Equal(t, want, idempotentRoute(httptest.NewRequest(http.MethodPost, path, nil)), path)
	}
	plain := &recorder{statusWriter: statusWriter{ResponseWriter: httptest.NewRecorder()}}
	_, _ = plain.Write([]byte(`{"ok":true}`))
	body, redacted, ok := storable(plain)
	require.True(t, ok)
	require.False(t, redacted)
	require.JSONEq(t, `{"ok":true}`, string(body))

	secret := &recorder{statusWriter: statusWriter{ResponseWriter: httptest.NewRecorder()}}
	secret.Header().Set("Cache-Control", "no-store")
	_, _ = secret.Write([]byte(`{"access_token":"t"}`))
	_, _, ok = storable(secret)
	require.False(t, ok, "a no-store answer without a redacted form is not stored")

	secret.SetReplay([]byte(`{"config":{}}`))
	body, redacted, ok = storable(secret)
	require.True(t, ok)
	require.True(t, redacted)
	require.Equal(t, `{"config":{}}`, string(body))
}

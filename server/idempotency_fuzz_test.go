package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
)

// FuzzIdempotencyKey sends a request with an arbitrary Idempotency-Key
// and body three times: twice as alice, once as bob. Whatever the input:
// no answer is a 5xx; a key that is not 1–128 printable ASCII characters
// is a 400; alice's repeat gets her first answer exactly (status and body,
// marked Idempotent-Replayed unless the body was refused before any key
// was claimed); bob, with the same key and body, is
// never answered from alice's stored outcome.
func FuzzIdempotencyKey(f *testing.F) {
	for _, s := range []struct {
		key  string
		body string
	}{
		{"0190f1f4-6b1e-7c39-9a55-3c1f0b6e2a10", `{"namespace":["a"]}`},
		{"k", `{"namespace":["b"],"properties":{"x":"y"}}`},
		{"bad key", `{"namespace":["c"]}`},
		{"k2", `{"namespace":`},
		{string(make([]byte, 129)), `{}`},
		{"\u00e9", `{"namespace":["d"]}`},
		{"k3", `{"namespace":["e","f"]}`},
	} {
		f.Add(s.key, []byte(s.body))
	}
	st := openStore(f, "sqlite")
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: quiet})
	_, err := svc.CreateWarehouse(context.Background(), "wh", "file://"+filepath.Join(f.TempDir(), "wh"), nil)
	require.NoError(f, err)
	hs := httptest.NewServer(withTestPrincipal(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: quiet})))
	f.Cleanup(hs.Close)
	b := &bundle{url: hs.URL, store: st, client: hs.Client()}
	var bobs atomic.Int64
	f.Fuzz(func(t *testing.T, key string, body []byte) {
		if key == "" || !sendableHeader(key) {
			return // no key at all, or one net/http will not send
		}
		as := func(who string) response {
			return b.do(t, "POST", "/v1/wh/namespaces", string(body), "X-Test-Principal", who, "Idempotency-Key", key)
		}
		first := as("builtin:alice")
		require.Less(t, first.status, 500, "%s", first.body)
		if !printableKey(key) {
			require.Equal(t, 400, first.status, "%s", first.body)
			return
		}
		if first.status != 422 { // 422: an earlier input used the key with another body
			again := as("builtin:alice")
			require.Equal(t, first.status, again.status, "%s", again.body)
			if utf8.Valid(body) { // a body that is not UTF-8 is refused before any key is claimed
				require.Equal(t, "true", again.header.Get("Idempotent-Replayed"), "%d %s", first.status, first.body)
			}
			require.Equal(t, string(first.body), string(again.body))
		}
		// A fresh bob each time: the fuzzer repeats inputs, and bob may of
		// course be replayed his own earlier answer.
		other := as("builtin:bob" + strconv.FormatInt(bobs.Add(1), 10))
		require.Less(t, other.status, 500, "%s", other.body)
		require.Empty(t, other.header.Get("Idempotent-Replayed"), "bob got alice's stored answer: %s", other.body)
	})
}

// sendableHeader reports whether net/http's client sends s as a header
// value as it is (no control characters but tab, no leading or trailing
// space, which it would trim).
func sendableHeader(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return s[0] != ' ' && s[0] != '\t' && s[len(s)-1] != ' ' && s[len(s)-1] != '\t'
}

// printableKey is the server's rule for a valid key.
func printableKey(k string) bool {
	if len(k) > 128 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] <= ' ' || k[i] > '~' {
			return false
		}
	}
	return true
}

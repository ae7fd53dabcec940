package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
)

// TestImportRouteBusy: while MaxConcurrentImports imports wait on a source
// that has not answered yet, one more is answered 503 at once (retry, not
// wait); once they end, an import runs again.
func TestImportRouteBusy(t *testing.T) {
	e := newImportEnv(t, "sqlite")
	var arrived atomic.Int32
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	// A source that holds /v1/config until released, then serves an
	// empty catalog.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/config" {
			arrived.Add(1)
			<-release
			_ = json.NewEncoder(w).Encode(map[string]any{})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"namespaces": [][]string{}})
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(open) // runs first: no handler is left blocking Close
	fields := map[string]any{"source-uri": slow.URL, "source-credential": nil}

	var wg sync.WaitGroup
	answers := make([]response, service.MaxConcurrentImports)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = e.importAs(t, "local", fields)
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); arrived.Load() < service.MaxConcurrentImports && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	require.Equal(t, int32(service.MaxConcurrentImports), arrived.Load(), "both imports reached the source")

	msg := wantError(t, e.importAs(t, "local", fields), 503, "ServiceUnavailableException")
	require.Equal(t, "Another import is running; retry", msg)
	require.Equal(t, int32(service.MaxConcurrentImports), arrived.Load(), "the refused import did not reach the source")

	open()
	wg.Wait()
	for _, r := range answers {
		require.Equal(t, 200, r.status, "%s", r.body)
	}
	require.Equal(t, 200, e.importAs(t, "local", fields).status, "the slots are free again")
}

// downNamespaces is a target database that cannot be reached for a
// namespace's load.
type downNamespaces struct{ store.Store }

func (downNamespaces) NamespaceGet(context.Context, string, []string) (*store.Namespace, error) {
	return nil, store.ErrUnavailable
}

// TestImportRouteTargetUnavailable: when this catalog's database fails
// the run before anything is written, the route answers its 503 (retry)
// rather than 422 or a report with stopped.
func TestImportRouteTargetUnavailable(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			e := newImportEnvOver(t, backend, func(st store.Store) store.Store { return downNamespaces{st} })
			for _, dry := range []bool{false, true} {
				r := e.importAs(t, "local", map[string]any{"dry-run": dry})
				msg := wantError(t, r, 503, "ServiceUnavailableException")
				require.Equal(t, "Catalog database unavailable; retry later", msg, "dry run %v", dry)
				require.NotEmpty(t, r.header.Get("Retry-After"))
			}
		})
	}
}

// TestImportRouteSourceAnswers: an answer that is not JSON is reported
// in fixed words (neither the body nor the request path, which holds the
// source's prefix, is quoted), and one longer than MaxImportBody fails
// the step instead of being read whole.
func TestImportRouteSourceAnswers(t *testing.T) {
	e := newImportEnv(t, "sqlite")
	odd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/config":
			_ = json.NewEncoder(w).Encode(map[string]any{"overrides": map[string]string{"prefix": "acct-7f3e"}})
		case "/v1/acct-7f3e/namespaces":
			_, _ = w.Write([]byte(`<html>/srv/source/secret-page</html>`))
		}
	}))
	t.Cleanup(odd.Close)
	r := e.importAs(t, "local", map[string]any{"source-uri": odd.URL, "source-credential": nil})
	msg := wantError(t, r, 422, "UnprocessableEntityException")
	require.Equal(t, "The import stopped: source: list namespaces: the answer was not valid JSON", msg)
	require.NotContains(t, string(r.body), "acct-7f3e")
	require.NotContains(t, string(r.body), "/srv/source")

	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"defaults":{"pad":"`))
		_, _ = w.Write(make([]byte, service.MaxImportBody)) // zero bytes: past the bound either way
		_, _ = w.Write([]byte(`"}}`))
	}))
	t.Cleanup(huge.Close)
	r = e.importAs(t, "local", map[string]any{"source-uri": huge.URL, "source-credential": nil})
	msg = wantError(t, r, 422, "UnprocessableEntityException")
	require.Equal(t, "The source catalog could not be opened: config: the answer was longer than 16777216 bytes", msg)
}

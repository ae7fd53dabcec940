package server_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPagingKnowsItsEnd: every list route returns next-page-token only when
// another item follows. N items in pages of N are one page without a token;
// N+1 items are a full page with a token and a final page of one item
// without (no trailing empty page).
func TestPagingKnowsItsEnd(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			const n = 3
			for i := 0; i < n; i++ {
				b.createNamespace(t, fmt.Sprintf("ns%d", i))
				require.Equal(t, 200, b.createTable(t, "ns0", fmt.Sprintf("t%d", i), nil).status)
				b.createView(t, "ns0", fmt.Sprintf("v%d", i))
			}
			lists := map[string]string{
				"namespaces": "/v1/wh/namespaces",
				"tables":     "/v1/wh/namespaces/ns0/tables",
				"views":      "/v1/wh/namespaces/ns0/views",
			}
			for what, path := range lists {
				items, next := b.listPage(t, path, n, "")
				require.Len(t, items, n, what)
				require.Empty(t, next, "%s: exactly %d items in a page of %d carry no token", what, n, n)
			}
			b.createNamespace(t, "ns9")
			require.Equal(t, 200, b.createTable(t, "ns0", "t9", nil).status)
			b.createView(t, "ns0", "v9")
			for what, path := range lists {
				items, next := b.listPage(t, path, n, "")
				require.Len(t, items, n, what)
				require.NotEmpty(t, next, what)
				items, next = b.listPage(t, path, n, next)
				require.Len(t, items, 1, what)
				require.Empty(t, next, "%s: the last page ends the list", what)
			}
		})
	}
}

// listPage GETs one page of a list route and returns its items (namespaces
// or identifiers) and next-page-token ("" when absent or null).
func (b *bundle) listPage(t *testing.T, path string, size int, token string) ([]any, string) {
	t.Helper()
	q := url.Values{"pageSize": {fmt.Sprint(size)}}
	if token != "" {
		q.Set("pageToken", token)
	}
	r := b.do(t, "GET", path+"?"+q.Encode(), nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	m := r.json(t)
	items, _ := m["namespaces"].([]any)
	if items == nil {
		items, _ = m["identifiers"].([]any)
	}
	next, _ := m["next-page-token"].(string)
	return items, next
}

// createView creates a minimal SQL view.
func (b *bundle) createView(t *testing.T, ns, name string) {
	t.Helper()
	r := b.do(t, "POST", "/v1/wh/namespaces/"+ns+"/views", map[string]any{
		"name": name, "schema": rawJSON(testSchema), "properties": map[string]string{},
		"view-version": rawJSON(`{"version-id":1,"timestamp-ms":1,"schema-id":0,"summary":{},"default-namespace":["` + ns + `"],"representations":[{"type":"sql","sql":"select 1","dialect":"spark"}]}`),
	})
	require.Equal(t, 200, r.status, "%s", r.body)
}

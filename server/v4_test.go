package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/stretchr/testify/require"
)

func formatVersion(t *testing.T, r response) int {
	t.Helper()
	var res struct {
		Metadata struct {
			FormatVersion int    `json:"format-version"`
			NextRowID     *int64 `json:"next-row-id"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(r.body, &res), "%s", r.body)
	if res.Metadata.FormatVersion == 4 {
		require.NotNil(t, res.Metadata.NextRowID, "v4 metadata carries next-row-id")
	}
	return res.Metadata.FormatVersion
}

// TestV4Tables: create with format-version=4, non-snapshot commits, upgrade
// rules and the add-snapshot ban.
func TestV4Tables(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			r := b.createTable(t, "ns", "wide", map[string]any{"properties": map[string]string{"format-version": "4", "owner": "ml"}})
			require.Equal(t, 200, r.status, "%s", r.body)
			require.Equal(t, 4, formatVersion(t, r))
			require.Equal(t, 4, formatVersion(t, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/wide", nil)))

			c := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/wide", map[string]any{
				"requirements": []any{map[string]any{"type": "assert-current-schema-id", "current-schema-id": 0}},
				"updates": []any{
					map[string]any{"action": "set-properties", "updates": map[string]string{"k": "v"}},
					map[string]any{"action": "add-schema", "schema": rawJSON(`{"type":"struct","schema-id":1,"fields":[
						{"id":1,"name":"id","type":"long","required":true},{"id":2,"name":"data","type":"string","required":false},
						{"id":3,"name":"score","type":"double","required":false}]}`)},
					map[string]any{"action": "set-current-schema", "schema-id": -1},
				}})
			require.Equal(t, 200, c.status, "%s", c.body)
			require.Equal(t, 4, formatVersion(t, c))
			require.Equal(t, "v", tableProps(t, b, "ns", "wide")["k"])

			snap := map[string]any{"requirements": []any{}, "updates": []any{map[string]any{"action": "add-snapshot", "snapshot": map[string]any{
				"snapshot-id": 1, "sequence-number": 1, "timestamp-ms": 1, "manifest-list": "x", "summary": map[string]any{"operation": "append"}}}}}
			r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables/wide", snap)
			require.Equal(t, 400, r.status)
			_, msg := r.errorOf(t)
			require.Contains(t, msg, "files and column-files routes")

			// Upgrade: fine without snapshots, and with snapshots on a v2
			// table in one commit (v4upgrade_v12_test.go has the details).
			require.Equal(t, 200, b.createTable(t, "ns", "v2", nil).status)
			up := map[string]any{"requirements": []any{}, "updates": []any{map[string]any{"action": "upgrade-format-version", "format-version": 4}}}
			r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables/v2", up)
			require.Equal(t, 200, r.status, "%s", r.body)
			require.Equal(t, 4, formatVersion(t, r))
			ctx := context.Background()
			cat := restCatalog(t, b)
			_, err := cat.LoadTable(ctx, table.Identifier{"ns", "v2b"})
			require.Error(t, err)
			goTable(t, b, "ns", "v2b", []int64{1})
			r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables/v2b", up)
			require.Equal(t, 200, r.status, "%s", r.body)
			require.Equal(t, 4, formatVersion(t, r))
			down := map[string]any{"requirements": []any{}, "updates": []any{map[string]any{"action": "upgrade-format-version", "format-version": 3}}}
			require.Equal(t, 400, b.do(t, "POST", "/v1/wh/namespaces/ns/tables/v2", down).status)
		})
	}
}

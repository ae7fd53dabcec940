package server_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUnregisterTable: unregister answers the metadata the table last had,
// removes the table from the catalog and deletes none of its files, so the
// answer registers the same table again (here in another namespace); an
// Idempotency-Key replay answers the same; a missing table is a 404.
func TestUnregisterTable(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			b.createNamespace(t, "other")
			require.Equal(t, 200, b.createTable(t, "ns", "t", nil).status)
			commit := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t", map[string]any{"requirements": []any{},
				"updates": []any{map[string]any{"action": "set-properties", "updates": map[string]string{"owner": "ml"}}}})
			require.Equal(t, 200, commit.status, "%s", commit.body)
			loaded := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil).json(t)

			r := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t/unregister", nil, "Idempotency-Key", "0190b5b0-1111-7000-8000-000000000001")
			require.Equal(t, 200, r.status, "%s", r.body)
			got := r.json(t)
			require.Equal(t, loaded["metadata-location"], got["metadata-location"])
			require.Equal(t, loaded["metadata"], got["metadata"])
			require.ElementsMatch(t, []string{"metadata", "metadata-location"}, keys(got), "the spec's UnregisterTableResult")
			loc := got["metadata-location"].(string)
			_, err := os.Stat(strings.TrimPrefix(loc, "file://"))
			require.NoError(t, err, "the metadata file is kept")

			replay := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t/unregister", nil, "Idempotency-Key", "0190b5b0-1111-7000-8000-000000000001")
			require.Equal(t, 200, replay.status, "a replay answers what the first request answered: %s", replay.body)
			require.JSONEq(t, string(r.body), string(replay.body))

			require.Equal(t, 404, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil).status)
			again := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t/unregister", nil)
			require.Equal(t, 404, again.status)
			typ, _ := again.errorOf(t)
			require.Equal(t, "NoSuchTableException", typ)

			reg := b.do(t, "POST", "/v1/wh/namespaces/other/register", map[string]any{"name": "t", "metadata-location": loc})
			require.Equal(t, 200, reg.status, "%s", reg.body)
			require.Equal(t, loaded["metadata"], reg.json(t)["metadata"], "the files are all there")

			cfg := b.do(t, "GET", "/v1/config?warehouse=wh", nil).json(t)
			require.Contains(t, cfg["endpoints"], "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/unregister")
		})
	}
}

// TestUnregisterV4NeedsAV4Reader: a client that did not say it reads
// format version 4 is refused before anything is removed (it could not
// parse the answer, and the table would be gone); one that did gets the
// v4 metadata.
func TestUnregisterV4NeedsAV4Reader(t *testing.T) {
	b := setup(t, "sqlite")
	b.createNamespace(t, "ns")
	created := b.do(t, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "x", "schema": rawJSON(testSchema),
		"properties": map[string]string{"format-version": "4"}}, "X-Iceberg-Column-Files", "true")
	require.Equal(t, 200, created.status, "%s", created.body)
	r := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/x/unregister", nil, "X-Iceberg-Column-Files", "") // not a v4 reader
	require.Equal(t, 400, r.status, "%s", r.body)
	var body struct {
		Error struct {
			Reason string `json:"reason"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(r.body, &body))
	require.Equal(t, "format-version-4-unsupported-by-client", body.Error.Reason)
	require.Equal(t, 200, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/x", nil, "X-Iceberg-Column-Files", "true").status, "nothing was removed")

	r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables/x/unregister", nil, "X-Iceberg-Column-Files", "true")
	require.Equal(t, 200, r.status, "%s", r.body)
	require.EqualValues(t, 4, r.json(t)["metadata"].(map[string]any)["format-version"])
	require.Equal(t, 404, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/x", nil, "X-Iceberg-Column-Files", "true").status)
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

package server_test

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStagedCreateMakesLocalMetadataDir: a staged create on a file://
// warehouse persists no table and writes no file, but leaves the table's
// metadata directory in place (empty), because engines such as DuckDB
// write manifests there before the create commit; a custom
// write.metadata.path gets the directory instead.
func TestStagedCreateMakesLocalMetadataDir(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			staged := b.createTable(t, "ns", "s", map[string]any{"stage-create": true})
			require.Equal(t, 200, staged.status, "%s", staged.body)
			var st struct {
				Metadata struct {
					Location string `json:"location"`
				} `json:"metadata"`
			}
			require.NoError(t, json.Unmarshal(staged.body, &st))
			u, err := url.Parse(st.Metadata.Location)
			require.NoError(t, err)
			entries, err := os.ReadDir(filepath.Join(u.Path, "metadata"))
			require.NoError(t, err, "the staged table's metadata directory exists")
			require.Empty(t, entries, "a staged create writes no file")
			require.Equal(t, 404, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/s", nil).status)

			r := b.createTable(t, "ns", "c", map[string]any{"stage-create": true, "location": st.Metadata.Location + "x",
				"properties": map[string]string{"write.metadata.path": "file://" + u.Path + "x/meta"}})
			require.Equal(t, 200, r.status, "%s", r.body)
			_, err = os.Stat(u.Path + "x/meta")
			require.NoError(t, err, "write.metadata.path is the directory made")
		})
	}
}

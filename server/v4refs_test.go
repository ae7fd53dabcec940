package server_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/store"
)

// TestV4CommitKeepsRefsDocument: a v4 snapshot commit (files route) stores
// the refs-only document with the pointer, as table commits do, so that
// snapshots=refs loads keep answering from it (only the head of main) and
// never read the full document.
func TestV4CommitKeepsRefsDocument(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b, cs := setupCounting(t, backend)
			b.createNamespace(t, "ns")
			r := b.createTable(t, "ns", "t", map[string]any{"properties": map[string]string{"format-version": "4"}})
			require.Equal(t, 200, r.status, "%s", r.body)
			tableLoc, _, _ := v4Meta(t, r)
			dir := strings.TrimPrefix(tableLoc, "file://")
			var head int64
			for i, name := range []string{"a", "b", "c"} {
				size := writeDataFile(t, filepath.Join(dir, "data", name+".parquet"), int64(i))
				r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t/files", map[string]any{"add-data-files": []any{
					map[string]any{"location": "data/" + name + ".parquet", "file-format": "parquet", "record-count": 1,
						"file-size-in-bytes": size, "spec-id": 0}}})
				require.Equal(t, 200, r.status, "%s", r.body)
				_, snaps, _ := v4Meta(t, r)
				require.Len(t, snaps, i+1)
				head = snaps[i].SnapshotID
			}
			got, err := cs.Store.ObjectGetRefs(context.Background(), store.ObjectRef{Warehouse: "wh", Namespace: []string{"ns"}, Name: "t", Kind: store.KindTable})
			require.NoError(t, err)
			require.True(t, got.RefsOnly, "the v4 commit stored a refs document")

			full := cs.full.Load()
			refs := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t?snapshots=refs", nil)
			require.Equal(t, []int64{head}, snapshotIDs(t, refs), "only the head of main")
			require.Equal(t, full, cs.full.Load(), "a refs load does not read the full document")
			require.Len(t, snapshotIDs(t, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil)), 3)
		})
	}
}

package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCommitReadsPointerOnly: once a table's current metadata has been
// parsed (here by the first commit), later commits read only the pointer
// row and its refs-only column, never the full document, and still land
// on top of each other with the history intact.
func TestCommitReadsPointerOnly(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b, cs := setupCounting(t, backend)
			b.createNamespace(t, "ns")
			metaLoc := manySnapshotsMetadata(t, strings.TrimPrefix(b.warehouse, "file://"), 30)
			r := b.do(t, "POST", "/v1/wh/namespaces/ns/register", map[string]any{"name": "big", "metadata-location": metaLoc})
			require.Equal(t, 200, r.status, "%s", r.body)
			const path = "/v1/wh/namespaces/ns/tables/big"
			require.Equal(t, 200, b.do(t, "POST", path, setProps("k", "0")).status)
			full := cs.full.Load()
			for i := 1; i <= 3; i++ {
				r = b.do(t, "POST", path, setProps("k", fmt.Sprint(i)))
				require.Equal(t, 200, r.status, "%s", r.body)
			}
			require.Equal(t, full, cs.full.Load(), "commits on a cached metadata location do not fetch the document")
			require.Equal(t, "3", tableProps(t, b, "ns", "big")["k"])
			require.Len(t, snapshotIDs(t, b.do(t, "GET", path, nil)), 30)
			require.Equal(t, []int64{30}, snapshotIDs(t, b.do(t, "GET", path+"?snapshots=refs", nil)))
		})
	}
}

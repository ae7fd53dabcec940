package server_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/storagepath"
	"github.com/lakehold/catalog/store"
)

// TestOrphanTombstoneRefusesV4Adds: a v4 /files commit and a column-files
// commit that add a path an orphan-file removal (or an expiry) deleted
// and still holds as a tombstone are refused with 409
// CommitFailedException, and nothing is committed; once the tombstone is
// pruned the same commits land. The files exist throughout, so only the
// tombstone refuses them.
func TestOrphanTombstoneRefusesV4Adds(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		b.createNamespace(t, "ns")
		vt := newV4Table(t, b, "held", map[string]int{"a.parquet": 5})
		baseSize := writeBase(t, filepath.Join(vt.dir, "data", "x.parquet"), 5)
		cfSize := writeScores(t, filepath.Join(vt.dir, "data", "cf.parquet"), 5, 1, false, false)
		obj, err := b.store.ObjectGet(ctx, store.ObjectRef{Warehouse: "wh", Namespace: []string{"ns"}, Name: "held", Kind: store.KindTable})
		require.NoError(t, err)
		var tombs []string
		for _, f := range []string{"x.parquet", "cf.parquet"} {
			key, err := storagepath.Normalize(vt.loc + "/data/" + f)
			require.NoError(t, err)
			tombs = append(tombs, key)
		}
		held, err := b.store.ClaimOrphanCandidates(ctx, obj.ID, "run", tombs, time.Hour)
		require.NoError(t, err)
		require.Len(t, held, 2)
		require.NoError(t, b.store.TombstoneOrphanCandidates(ctx, obj.ID, "run", tombs))
		require.NoError(t, b.store.ReleaseOrphanCandidates(ctx, obj.ID, "run", nil))

		filesBody := map[string]any{"add-data-files": []any{map[string]any{"location": "data/x.parquet", "file-format": "parquet",
			"record-count": 5, "file-size-in-bytes": baseSize, "spec-id": 0}}}
		refused := func(r response, name string) {
			t.Helper()
			typ, msg := r.errorOf(t)
			require.Equal(t, 409, r.status, "%s", r.body)
			require.Equal(t, "CommitFailedException", typ)
			require.Contains(t, msg, "orphan-file removal")
			require.Contains(t, msg, name)
			require.NotContains(t, msg, vt.dir, "the file is named by its base name only")
			now, err := b.store.ObjectGet(ctx, obj.Ref())
			require.NoError(t, err)
			require.Equal(t, obj.MetadataLocation, now.MetadataLocation, "nothing committed")
		}
		refused(b.do(t, "POST", vt.path+"/files", filesBody), "x.parquet")
		refused(vt.commit(t, vt.columnFile("a.parquet", "cf.parquet", 5, []int{3}, cfSize)), "cf.parquet")

		pruned, err := b.store.PruneOrphanTombstones(ctx, obj.ID, time.Now().Add(time.Hour), 0)
		require.NoError(t, err)
		require.Equal(t, 2, pruned)
		r := b.do(t, "POST", vt.path+"/files", filesBody)
		require.Equal(t, 200, r.status, "pruned: the same commit lands: %s", r.body)
		r = vt.commit(t, vt.columnFile("a.parquet", "cf.parquet", 5, []int{3}, cfSize))
		require.Equal(t, 200, r.status, "%s", r.body)
	})
}

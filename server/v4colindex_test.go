package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/compact"
	"github.com/lakehold/catalog/internal/stitch"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
	"github.com/lakehold/catalog/v4manifest"
)

// spilledColumnFiles builds a v4 table of two leaves whose column files
// live in one that a later commit on the other does not read: 65 bases
// get a column file each in one commit (every row of their leaf, so it is
// retired, and more rows than the root keeps, so the MODIFIED rows go
// into a new leaf), then z.parquet is added by its own files commit (a
// leaf of its own). It returns the table and the column file of base f00.parquet,
// after checking that no data row is left in the root.
func spilledColumnFiles(t *testing.T, b *bundle, name string) (*v4Table, string) {
	t.Helper()
	const n = 65
	bases := map[string]int{}
	for i := 0; i < n; i++ {
		bases[fmt.Sprintf("f%02d.parquet", i)] = 3
	}
	vt := newV4Table(t, b, name, bases)
	var files []map[string]any
	for i := 0; i < n; i++ {
		cf := fmt.Sprintf("score-f%02d.parquet", i)
		size := writeScores(t, filepath.Join(vt.dir, "data", cf), 3, float64(i), false, false)
		files = append(files, vt.columnFile(fmt.Sprintf("f%02d.parquet", i), cf, 3, []int{3}, size))
	}
	r := vt.commit(t, files...)
	require.Equal(t, 200, r.status, "%s", r.body)
	size := writeBase(t, filepath.Join(vt.dir, "data/z.parquet"), 3)
	r = b.do(t, "POST", vt.path+"/files", map[string]any{"add-data-files": []any{addFile("z.parquet", 3, size)}})
	require.Equal(t, 200, r.status, "%s", r.body)

	_, snaps, _ := v4Meta(t, b.do(t, "GET", vt.path, nil))
	leaves := 0
	for _, rr := range readManifestFile(t, snaps[len(snaps)-1].RootManifest, vt.loc, nil) {
		if !rr.Tracking.Status.Live() {
			continue
		}
		require.NotEqual(t, v4manifest.ContentData, rr.ContentType, "the column files must live in a leaf, not in the root")
		if rr.ContentType == v4manifest.ContentDataManifest {
			leaves++
		}
	}
	require.Equal(t, 2, leaves, "the spilled rows and z.parquet each in a leaf")
	row, _ := vt.liveRow(t, "f00.parquet")
	require.Len(t, row.ColumnFiles, 1)
	return vt, "score-f00.parquet"
}

// TestColumnFileLiveInAnotherLeaf: a column file that is live on a base
// in another leaf than the one the commit reads is refused for a second
// base (found through the base-file index), and nothing is committed.
func TestColumnFileLiveInAnotherLeaf(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			vt, cf := spilledColumnFiles(t, b, "spilled")
			_, before, _ := v4Meta(t, b.do(t, "GET", vt.path, nil))

			fi, err := os.Stat(filepath.Join(vt.dir, "data", cf))
			require.NoError(t, err)
			r := vt.commit(t, vt.columnFile("z.parquet", cf, 3, []int{3}, fi.Size()))
			requireReason(t, r, "duplicate-file")
			require.Contains(t, string(r.body), "Column file data/"+cf+" is already a live column file of data/f00.parquet", "the message names the file as given and its base")
			_, after, _ := v4Meta(t, b.do(t, "GET", vt.path, nil))
			require.Equal(t, before[len(before)-1].SnapshotID, after[len(after)-1].SnapshotID, "nothing committed")
			row, _ := vt.liveRow(t, "z.parquet")
			require.Empty(t, row.ColumnFiles)
		})
	}
}

// TestFilesAddingALiveColumnFile: a data file or equality-delete file
// added through /files whose path is a live column file (in a leaf the
// files commit would not otherwise read) is refused, and nothing is
// committed.
func TestFilesAddingALiveColumnFile(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			vt, cf := spilledColumnFiles(t, b, "spilled")
			_, before, _ := v4Meta(t, b.do(t, "GET", vt.path, nil))

			// A data file written over the column file's path (a client
			// that reuses a name): it fits the table, but is refused.
			size := writeBase(t, filepath.Join(vt.dir, "data", cf), 3)
			r := b.do(t, "POST", vt.path+"/files", map[string]any{"add-data-files": []any{addFile(cf, 3, size)}})
			requireReason(t, r, "duplicate-file")
			require.Contains(t, string(r.body), "Data file data/"+cf+" is already a live column file of data/f00.parquet", "the message names the file and its base")

			// An equality-delete file over another live column file.
			delSize := writeParquet(t, filepath.Join(vt.dir, "data/score-f01.parquet"),
				[]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: fieldMD(1)}},
				func(b *array.RecordBuilder) { b.Field(0).(*array.Int64Builder).Append(1) })
			r = b.do(t, "POST", vt.path+"/files", map[string]any{"add-equality-delete-files": []any{map[string]any{
				"location": "data/score-f01.parquet", "file-format": "parquet", "record-count": 1, "file-size-in-bytes": delSize, "equality-ids": []int{1}, "spec-id": 0}}})
			requireReason(t, r, "duplicate-file")
			require.Contains(t, string(r.body), "Delete file data/score-f01.parquet is already a live column file of data/f01.parquet")
			_, after, _ := v4Meta(t, b.do(t, "GET", vt.path, nil))
			require.Equal(t, before[len(before)-1].SnapshotID, after[len(after)-1].SnapshotID, "nothing committed")
		})
	}
}

// TestCompactionOntoALiveColumnFile: a compaction whose rewritten file is
// at the path of a live column file (in a leaf the compaction would not
// otherwise read) is refused, and nothing is committed.
func TestCompactionOntoALiveColumnFile(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			vt, cf := spilledColumnFiles(t, b, "spilled")
			_, before, _ := v4Meta(t, b.do(t, "GET", vt.path, nil))

			// z.parquet rewritten, row ids materialized, over the column
			// file's path.
			z, _ := vt.liveRow(t, "z.parquet")
			var sc iceberg.Schema
			require.NoError(t, json.Unmarshal([]byte(wideSchemaJSON), &sc))
			f, err := os.Create(filepath.Join(vt.dir, "data", cf))
			require.NoError(t, err)
			out, err := compact.Rewrite(context.Background(), func(_ context.Context, loc string) (stitch.File, error) {
				return os.Open(vt.dir + loc[len(vt.loc):])
			}, f, compact.Input{Task: stitch.Task{DataFile: z.Location, RecordCount: z.RecordCount}, FirstRowID: *z.Tracking.FirstRowID, Schema: &sc})
			require.NoError(t, err)
			require.NoError(t, f.Close())
			r := b.do(t, "POST", vt.path+"/compaction", map[string]any{"rewrites": []any{map[string]any{"data-file": "data/z.parquet",
				"location": "data/" + cf, "file-size-in-bytes": out.Bytes, "record-count": out.Rows}}})
			require.Equal(t, 400, r.status, "%s", r.body)
			require.Contains(t, string(r.body), "data/"+cf+" is already a live column file of data/f00.parquet")
			require.NotContains(t, string(r.body), "/tmp", "no server path in the answer")
			_, after, _ := v4Meta(t, b.do(t, "GET", vt.path, nil))
			require.Equal(t, before[len(before)-1].SnapshotID, after[len(after)-1].SnapshotID, "nothing committed")
		})
	}
}

// indexAsPrevious replaces the base-file index of vt (the table "spilled")
// by what the rebuild of the version before migration 22 left: every live
// leaf in a lineage of its own that lists the leaf's data files only. It
// returns the store and the table's id and leaf rows.
func indexAsPrevious(t *testing.T, b *bundle, vt *v4Table) (*sqlstore.Store, string, []store.IndexedLeaf) {
	t.Helper()
	ctx := context.Background()
	st, ok := b.store.(*sqlstore.Store)
	require.True(t, ok, "the test needs the SQL store")
	obj, err := b.store.ObjectGet(ctx, store.ObjectRef{Warehouse: "wh", Namespace: []string{"ns"}, Name: "spilled", Kind: store.KindTable})
	require.NoError(t, err)
	require.NoError(t, st.FileIndexForget(ctx, obj.ID))
	_, snaps, _ := v4Meta(t, b.do(t, "GET", vt.path, nil))
	root := readManifestFile(t, snaps[len(snaps)-1].RootManifest, vt.loc, nil)
	var previous []store.IndexedLeaf
	for i := range root {
		if !root[i].Tracking.Status.Live() || root[i].ContentType != v4manifest.ContentDataManifest {
			continue
		}
		li := store.IndexedLeaf{Leaf: v4manifest.Resolve(vt.loc, root[i].Location), Lineage: fmt.Sprintf("previous-%d", i)}
		for _, r := range readManifestFile(t, root[i].Location, vt.loc, &root[i]) {
			li.Locations = append(li.Locations, v4manifest.Resolve(vt.loc, r.Location))
		}
		previous = append(previous, li)
	}
	require.Len(t, previous, 2)
	require.NoError(t, st.FileIndexAddAsPrevious(ctx, obj.ID, previous))
	return st, obj.ID, previous
}

// requireColumnFileRefused commits column file cf of vt for z.parquet and
// checks that it is refused as live on f00.parquet, committing nothing.
func requireColumnFileRefused(t *testing.T, b *bundle, vt *v4Table, cf string) {
	t.Helper()
	_, before, _ := v4Meta(t, b.do(t, "GET", vt.path, nil))
	fi, err := os.Stat(filepath.Join(vt.dir, "data", cf))
	require.NoError(t, err)
	r := vt.commit(t, vt.columnFile("z.parquet", cf, 3, []int{3}, fi.Size()))
	requireReason(t, r, "duplicate-file")
	require.Contains(t, string(r.body), "Column file data/"+cf+" is already a live column file of data/f00.parquet")
	_, after, _ := v4Meta(t, b.do(t, "GET", vt.path, nil))
	require.Equal(t, before[len(before)-1].SnapshotID, after[len(after)-1].SnapshotID, "nothing committed")
}

// TestColumnFileLiveInALeafIndexedByPreviousVersion: during a rolling
// upgrade a replica still on the version before migration 22 may index
// leaves with their data files only. This version does not trust those
// rows: its next commit indexes the leaves again, column files included,
// so a column file live in one of them is still refused for another base.
func TestColumnFileLiveInALeafIndexedByPreviousVersion(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			vt, cf := spilledColumnFiles(t, b, "spilled")
			st, id, previous := indexAsPrevious(t, b, vt)

			requireColumnFileRefused(t, b, vt, cf)
			var leaves []string
			for _, li := range previous {
				leaves = append(leaves, li.Leaf)
			}
			got, err := st.FileIndexLeaves(context.Background(), id, leaves)
			require.NoError(t, err)
			for _, li := range previous {
				require.NotEmpty(t, got[li.Leaf], "leaf %s is indexed again", li.Leaf)
				require.NotEqual(t, li.Lineage, got[li.Leaf], "in a new lineage")
			}
		})
	}
}

// TestColumnFileLiveInARewriteOfALeafIndexedByPreviousVersion: a commit
// that rewrites a leaf the previous version indexed without looking
// anything up first (a files commit that only removes) must not continue
// that leaf's lineage, which lacks its column files: the rewritten leaf
// starts a lineage of its own, so its column files are still found.
func TestColumnFileLiveInARewriteOfALeafIndexedByPreviousVersion(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			vt, cf := spilledColumnFiles(t, b, "spilled")
			indexAsPrevious(t, b, vt)

			// f01.parquet shares the leaf of f00.parquet and its column file.
			r := b.do(t, "POST", vt.path+"/files", map[string]any{"remove-files": []string{"data/f01.parquet"}})
			require.Equal(t, 200, r.status, "%s", r.body)
			requireColumnFileRefused(t, b, vt, cf)
		})
	}
}

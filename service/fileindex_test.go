package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
	"github.com/lakehold/catalog/v4manifest"
)

// countingStore counts the rebuilds of the base-file index.
type countingStore struct {
	store.Store
	adds atomic.Int32
}

func (c *countingStore) FileIndexAdd(ctx context.Context, tableID string, leaves []store.IndexedLeaf) error {
	c.adds.Add(1)
	return c.Store.FileIndexAdd(ctx, tableID, leaves)
}

// indexFixture is the concurrency fixture (files a and b in one leaf) seen
// through a second service whose store counts index rebuilds.
type indexFixture struct {
	*fixture
	svc   *service.Service
	count *countingStore
	objID string
}

func newIndexFixture(t *testing.T, backend string) *indexFixture {
	fx := newFixture(t, backend)
	close(fx.gate.release) // this fixture does not race
	c := &countingStore{Store: fx.gate.Store}
	svc := service.New(c, storage.NewProvider(), service.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	o, err := c.ObjectGet(context.Background(), store.ObjectRef{Warehouse: "wh", Namespace: []string{"ns"}, Name: "t", Kind: store.KindTable})
	require.NoError(t, err)
	return &indexFixture{fixture: fx, svc: svc, count: c, objID: o.ID}
}

// lineages returns the lineages the index lists a data file in.
func (ix *indexFixture) lineages(t *testing.T, file string) []string {
	got, err := ix.count.FileIndexLookup(context.Background(), ix.objID, []string{ix.loc + "/data/" + file})
	require.NoError(t, err)
	var out []string
	for _, e := range got {
		out = append(out, e.Lineage)
	}
	return out
}

func (ix *indexFixture) commit(t *testing.T, base, name string) {
	t.Helper()
	_, err := ix.svc.CommitColumnFiles(context.Background(), "wh", ix.columnCommit(t, base, name))
	require.NoError(t, err)
}

func (ix *indexFixture) liveColumnFiles(t *testing.T) map[string][]string {
	rows, err := ix.svc.V4Commits().LiveColumnFiles(context.Background(), "wh", ix.id, nil)
	require.NoError(t, err)
	out := map[string][]string{}
	for _, r := range rows {
		for _, cf := range r.ColumnFiles {
			out[r.DataFile] = append(out[r.DataFile], cf.Location)
		}
	}
	return out
}

// TestFileIndexFollowsCommits: the files commit indexed its leaf, so
// column commits find their bases without a rebuild; a column commit that
// masks its bases in their leaf puts their MODIFIED rows in the root
// itself (no leaf, no lineage), one that rewrites a leaf continues its
// lineage, and later commits find the bases in either without a rebuild.
func TestFileIndexFollowsCommits(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			ix := newIndexFixture(t, backend)
			a, b := ix.lineages(t, "a.parquet"), ix.lineages(t, "b.parquet")
			require.Len(t, a, 1, "the files commit indexed a")
			require.Equal(t, a, b, "one leaf, one lineage")
			ix.commit(t, "a.parquet", "cf1.parquet")
			ix.commit(t, "a.parquet", "cf2.parquet")
			ix.commit(t, "b.parquet", "cf3.parquet")
			// cf1 masked a in the first leaf and put its MODIFIED row in
			// the root; cf2 found a there and replaced it there; cf3 found
			// b alone live in the first leaf and rewrote it (the first
			// lineage).
			require.Equal(t, a, ix.lineages(t, "a.parquet"), "a: no leaf written for it")
			require.Equal(t, a, ix.lineages(t, "b.parquet"), "b: rewrites continue the lineage")
			require.Zero(t, ix.count.adds.Load(), "no leaf needed a rebuild")
			live := ix.liveColumnFiles(t)
			require.Equal(t, []string{ix.loc + "/data/cf2.parquet"}, live[ix.loc+"/data/a.parquet"])
			require.Equal(t, []string{ix.loc + "/data/cf3.parquet"}, live[ix.loc+"/data/b.parquet"])
		})
	}
}

// TestFileIndexUnknownBase: a base in no leaf is still rejected with the
// unknown-data-file reason, with and without a rebuild first.
func TestFileIndexUnknownBase(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			ix := newIndexFixture(t, backend)
			for _, forget := range []bool{false, true} {
				if forget {
					require.NoError(t, ix.gate.Store.(*sqlstore.Store).FileIndexForget(context.Background(), ix.objID))
				}
				_, err := ix.svc.CommitColumnFiles(context.Background(), "wh", ix.columnCommit(t, "nope.parquet", "cfx.parquet"))
				require.Error(t, err)
				var se *fault.Error
				require.ErrorAs(t, err, &se)
				require.Equal(t, fault.Validation, se.Kind, "%v", err)
				require.Equal(t, "unknown-data-file", se.Reason)
			}
		})
	}
}

// swapRecorder records the leaves each swap asked to index, and whether
// the swap landed.
type swapRecorder struct {
	store.Store
	mu      sync.Mutex
	landed  []string
	refused []string
}

func (r *swapRecorder) ObjectsSwap(ctx context.Context, swaps []store.Swap) error {
	err := r.Store.ObjectsSwap(ctx, swaps)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, sw := range swaps {
		for _, l := range sw.Index {
			if err == nil {
				r.landed = append(r.landed, l.Leaf)
			} else {
				r.refused = append(r.refused, l.Leaf)
			}
		}
	}
	return err
}

// TestFileIndexLostRaceWritesNothing: a commit that loses the race for
// its bases (409) leaves no index entries; the winner's leaf is indexed.
// The root already holds maxRootData data rows (fullRoot), so each of the
// two commits moves them, with its own, to a new leaf.
func TestFileIndexLostRaceWritesNothing(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			fx := newFixture(t, backend)
			fx.fullRoot(t)
			rec := &swapRecorder{Store: fx.gate.Store}
			fx.gate.Store = rec
			both := func(prefix string) service.ColumnFilesCommit {
				c := fx.columnCommit(t, "a.parquet", prefix+"a.parquet")
				c.ColumnFiles = append(c.ColumnFiles, fx.columnCommit(t, "b.parquet", prefix+"b.parquet").ColumnFiles...)
				return c
			}
			err := fx.race(t, both("cf1"), both("cf2"))
			require.Equal(t, fault.CommitFailed, fault.KindOf(err), "409: %v", err)
			require.Len(t, rec.landed, 1, "the winner wrote one leaf")
			require.Len(t, rec.refused, 1, "the loser's one attempt lost its swap")
			o, err := rec.ObjectGet(context.Background(), store.ObjectRef{Warehouse: "wh", Namespace: []string{"ns"}, Name: "t", Kind: store.KindTable})
			require.NoError(t, err)
			got, err := rec.FileIndexLeaves(context.Background(), o.ID, append(rec.landed, rec.refused...))
			require.NoError(t, err)
			require.Contains(t, got, rec.landed[0])
			require.NotContains(t, got, rec.refused[0])
		})
	}
}

// TestFileIndexRebuild: a table whose index is gone (as before the
// migration) is indexed once by the next column commit, which lands; the
// commit after it needs no rebuild. The rebuild reads each live leaf as
// its root row sees it (masked rows left out): a, masked in the leaf and
// held by the root itself, is listed in no lineage.
func TestFileIndexRebuild(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			ix := newIndexFixture(t, backend)
			ix.commit(t, "a.parquet", "cf1.parquet")
			before := ix.lineages(t, "a.parquet")
			require.NoError(t, ix.gate.Store.(*sqlstore.Store).FileIndexForget(context.Background(), ix.objID))
			require.Empty(t, ix.lineages(t, "a.parquet"))
			ix.commit(t, "b.parquet", "cf2.parquet")
			require.EqualValues(t, 1, ix.count.adds.Load(), "the live leaves were indexed once")
			after := ix.lineages(t, "b.parquet")
			require.Len(t, after, 1, "b: in the rebuilt first leaf (which this commit retires, b going to the root)")
			require.Empty(t, ix.lineages(t, "a.parquet"), "a is live in the root only: the rebuild skipped its masked row")
			require.NotContains(t, before, after[0], "a new lineage")
			ix.commit(t, "a.parquet", "cf3.parquet")
			require.EqualValues(t, 1, ix.count.adds.Load(), "no second rebuild")
			live := ix.liveColumnFiles(t)
			require.Equal(t, []string{ix.loc + "/data/cf3.parquet"}, live[ix.loc+"/data/a.parquet"])
			require.Equal(t, []string{ix.loc + "/data/cf2.parquet"}, live[ix.loc+"/data/b.parquet"])
		})
	}
}

// TestFileIndexAfterRollback: after main is rolled back to the snapshot
// before a column commit, the next column commit on the same base finds it
// in the older leaf (entries of the newer one are ignored) and lands.
func TestFileIndexAfterRollback(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			ix := newIndexFixture(t, backend)
			ctx := context.Background()
			res, err := ix.svc.Tables().LoadTable(ctx, "wh", ix.id, "all", service.NoDelegation)
			require.NoError(t, err)
			var meta struct {
				Current int64 `json:"current-snapshot-id"`
			}
			require.NoError(t, json.Unmarshal(res.Metadata, &meta))
			ix.commit(t, "a.parquet", "cf1.parquet")
			_, err = ix.svc.CommitTable(ctx, "wh", service.TableChange{Ident: ix.id,
				Updates: json.RawMessage(fmt.Sprintf(`[{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":%d}]`, meta.Current))})
			require.NoError(t, err)
			require.Empty(t, ix.liveColumnFiles(t), "rolled back")
			ix.commit(t, "a.parquet", "cf2.parquet")
			require.Zero(t, ix.count.adds.Load())
			live := ix.liveColumnFiles(t)
			require.Equal(t, []string{ix.loc + "/data/cf2.parquet"}, live[ix.loc+"/data/a.parquet"])
			require.Len(t, live, 1)
		})
	}
}

// TestRootCachedOnWrite: the root rows a commit caches when it writes the
// root are the rows a read of that root returns, after files and column
// commits (stats of several types, a deletion vector, a masked leaf).
func TestRootCachedOnWrite(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, "sqlite")
	close(fx.gate.release)
	check := func(what string) {
		t.Helper()
		cached, read, ok, err := fx.svc.CurrentRoot(ctx, "wh", fx.id)
		require.NoError(t, err)
		require.True(t, ok, "%s: the root is cached", what)
		require.Equal(t, read, cached, "%s: cached root rows", what)
	}
	check("files commit")
	_, err := fx.svc.CommitColumnFiles(ctx, "wh", fx.columnCommit(t, "a.parquet", "cfa.parquet"))
	require.NoError(t, err)
	check("column commit")
	n := int64(4)
	_, err = fx.svc.CommitFiles(ctx, "wh", service.FilesCommit{Ident: fx.id, AddDataFiles: []service.DataFileInput{{
		Location: "data/c.parquet", FileFormat: "parquet", RecordCount: n, FileSizeInBytes: 100,
		Stats: map[int]*v4manifest.FieldStats{
			1: {LowerBound: int64(1), UpperBound: int64(9), ValueCount: &n, NullValueCount: ptr(int64(0))},
			2: {LowerBound: 0.5, UpperBound: 2.5, ValueCount: &n, NullValueCount: ptr(int64(1)), NaNValueCount: ptr(int64(0))},
		}}}, RemoveFiles: []string{"data/b.parquet"}})
	require.NoError(t, err)
	check("files commit with stats and a removal")
}

// fullRoot puts 64 data rows (the most a root holds) in fx's root: 64 more
// files added in one leaf, then one column commit on all of them (the
// leaf's rows are all bases, so it is retired and their rows go to the
// root). Both commits pass the gate.
func (fx *fixture) fullRoot(t *testing.T) {
	ctx := context.Background()
	close(fx.gate.release)
	var adds []service.DataFileInput
	var cfs []service.ColumnFileInput
	for i := range 64 {
		name := fmt.Sprintf("f%02d.parquet", i)
		size := writeFile(t, filepath.Join(fx.dir, "data", name), []arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: md(1)},
			{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: md(2)}}, 4)
		adds = append(adds, service.DataFileInput{Location: "data/" + name, FileFormat: "parquet", RecordCount: 4, FileSizeInBytes: size})
		cfs = append(cfs, fx.columnCommit(t, name, "cf-"+name).ColumnFiles...)
	}
	_, err := fx.svc.CommitFiles(ctx, "wh", service.FilesCommit{Ident: fx.id, AddDataFiles: adds})
	require.NoError(t, err)
	_, err = fx.svc.CommitColumnFiles(ctx, "wh", service.ColumnFilesCommit{Ident: fx.id, ColumnFiles: cfs})
	require.NoError(t, err)
	<-fx.gate.reached
	fx.gate.once = sync.Once{}
	fx.gate.reached, fx.gate.release = make(chan struct{}), make(chan struct{})
}

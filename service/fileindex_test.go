package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
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
// through a second service whose store counts index rebuilds and whose log
// is kept.
type indexFixture struct {
	*fixture
	svc   *service.Service
	count *countingStore
	log   *bytes.Buffer
	objID string
}

func newIndexFixture(t *testing.T, backend string) *indexFixture {
	fx := newFixture(t, backend)
	close(fx.gate.release) // this fixture does not race
	c := &countingStore{Store: fx.gate.Store}
	var log bytes.Buffer
	svc := service.New(c, storage.NewProvider(), service.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	o, err := c.ObjectGet(context.Background(), store.ObjectRef{Warehouse: "wh", Namespace: []string{"ns"}, Name: "t", Kind: store.KindTable})
	require.NoError(t, err)
	return &indexFixture{fixture: fx, svc: svc, count: c, log: &log, objID: o.ID}
}

// entries returns the index entries of a data file as leaf#position, and
// the number of distinct leaves they name.
func (ix *indexFixture) entries(t *testing.T, file string) ([]string, int) {
	got, err := ix.count.FileIndexLookup(context.Background(), ix.objID, []string{ix.loc + "/data/" + file})
	require.NoError(t, err)
	var out []string
	leaves := map[string]bool{}
	for _, e := range got {
		out = append(out, fmt.Sprintf("%s#%d", e.Leaf, e.Position))
		leaves[e.Leaf] = true
	}
	return out, len(leaves)
}

func (ix *indexFixture) commit(t *testing.T, base, name string) {
	t.Helper()
	_, err := ix.svc.CommitColumnFiles(context.Background(), "wh", ix.columnCommit(t, base, name))
	require.NoError(t, err)
}

func (ix *indexFixture) liveColumnFiles(t *testing.T) map[string][]string {
	rows, err := ix.svc.LiveColumnFiles(context.Background(), "wh", ix.id, nil)
	require.NoError(t, err)
	out := map[string][]string{}
	for _, r := range rows {
		for _, cf := range r.ColumnFiles {
			out[r.DataFile] = append(out[r.DataFile], cf.Location)
		}
	}
	return out
}

func (ix *indexFixture) requireNoScanFallback(t *testing.T) {
	require.NotContains(t, ix.log.String(), "disagrees", "the index was used, not the full scan")
}

// TestFileIndexFollowsCommits: the files commit indexed its leaf, so
// column commits find their bases without a rebuild; each commit indexes
// the leaf it writes (the base's dead and live rows) and later commits
// find the base there.
func TestFileIndexFollowsCommits(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			ix := newIndexFixture(t, backend)
			a, leaves := ix.entries(t, "a.parquet")
			require.Len(t, a, 1, "the files commit indexed a: %v", a)
			require.Equal(t, 1, leaves)
			ix.commit(t, "a.parquet", "cf1.parquet")
			a, leaves = ix.entries(t, "a.parquet")
			require.Len(t, a, 3, "old leaf, then REPLACED and MODIFIED rows in the new one: %v", a)
			require.Equal(t, 2, leaves)
			b, leaves := ix.entries(t, "b.parquet")
			require.Len(t, b, 2, "b was carried into the rewritten leaf: %v", b)
			require.Equal(t, 2, leaves)
			ix.commit(t, "a.parquet", "cf2.parquet")
			ix.commit(t, "b.parquet", "cf3.parquet")
			require.Zero(t, ix.count.adds.Load(), "no leaf needed a rebuild")
			ix.requireNoScanFallback(t)
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
				var se *service.Error
				require.ErrorAs(t, err, &se)
				require.Equal(t, service.KindValidation, se.Kind, "%v", err)
				require.Equal(t, "unknown-data-file", se.Reason)
			}
		})
	}
}

// TestFileIndexLostRaceWritesNothing: a commit that loses the race for
// its base (409) leaves no entries: only the setup's and the winner's.
func TestFileIndexLostRaceWritesNothing(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			fx := newFixture(t, backend)
			err := fx.race(t, fx.columnCommit(t, "a.parquet", "cf1.parquet"), fx.columnCommit(t, "a.parquet", "cf2.parquet"))
			require.Equal(t, service.KindCommitFailed, service.KindOf(err), "409: %v", err)
			o, err := fx.gate.Store.ObjectGet(context.Background(), store.ObjectRef{Warehouse: "wh", Namespace: []string{"ns"}, Name: "t", Kind: store.KindTable})
			require.NoError(t, err)
			got, err := fx.gate.Store.FileIndexLookup(context.Background(), o.ID, []string{fx.loc + "/data/a.parquet", fx.loc + "/data/b.parquet"})
			require.NoError(t, err)
			leaves := map[string]bool{}
			for _, e := range got {
				leaves[e.Leaf] = true
			}
			require.Len(t, got, 5, "a: setup + the winner's two rows; b: setup + carried")
			require.Len(t, leaves, 2, "the setup's leaf and the winner's, none of the loser's")
		})
	}
}

// TestFileIndexRebuild: a table whose index is gone (as before the
// migration) is indexed once by the next column commit, which lands; the
// commit after it needs no rebuild.
func TestFileIndexRebuild(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			ix := newIndexFixture(t, backend)
			ix.commit(t, "a.parquet", "cf1.parquet")
			require.NoError(t, ix.gate.Store.(*sqlstore.Store).FileIndexForget(context.Background(), ix.objID))
			a, _ := ix.entries(t, "a.parquet")
			require.Empty(t, a)
			ix.commit(t, "b.parquet", "cf2.parquet")
			require.EqualValues(t, 1, ix.count.adds.Load(), "the live leaf was indexed once")
			b, leaves := ix.entries(t, "b.parquet")
			require.Len(t, b, 3, "rebuilt leaf, then REPLACED and MODIFIED rows: %v", b)
			require.Equal(t, 2, leaves)
			ix.commit(t, "a.parquet", "cf3.parquet")
			require.EqualValues(t, 1, ix.count.adds.Load(), "no second rebuild")
			ix.requireNoScanFallback(t)
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
			res, err := ix.svc.LoadTable(ctx, "wh", ix.id, "all", false)
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
			ix.requireNoScanFallback(t)
			live := ix.liveColumnFiles(t)
			require.Equal(t, []string{ix.loc + "/data/cf2.parquet"}, live[ix.loc+"/data/a.parquet"])
			require.Len(t, live, 1)
		})
	}
}

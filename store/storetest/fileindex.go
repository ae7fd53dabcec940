package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/store"
)

// leafOf builds an indexed leaf of n data files named after the leaf; row
// 1 repeats row 0's location (a dead row and a live row of one file).
func leafOf(leaf string, n int) store.IndexedLeaf {
	l := store.IndexedLeaf{Leaf: leaf}
	for i := 0; i < n; i++ {
		l.Locations = append(l.Locations, fmt.Sprintf("%s/f%04d.parquet", leaf, i))
	}
	if n > 1 {
		l.Locations[1] = l.Locations[0]
	}
	return l
}

func entryKeys(es []store.IndexEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = fmt.Sprintf("%s@%s#%d", e.Location, e.Leaf, e.Position)
	}
	slices.Sort(out)
	return out
}

// testFileIndex: a swap indexes the leaves it lists in its transaction (a
// lost swap indexes nothing); lookups see entries of their table only;
// FileIndexAdd skips leaves already indexed and does not count as a
// change under an Idempotency-Key; dropping or replacing a table removes
// its entries.
func testFileIndex(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	o := table([]string{"ns"}, "t", "file:///tmp/wh/ns/t")
	other := table([]string{"ns"}, "u", "file:///tmp/wh/ns/u")
	require.NoError(t, s.ObjectCreate(ctx, o))
	require.NoError(t, s.ObjectCreate(ctx, other))

	// 600 rows: two full prepared chunks and a remainder on SQLite.
	big, small := leafOf("L1", 600), leafOf("L2", 3)
	sw := swapTo(o, "m1")
	sw.Index = []store.IndexedLeaf{big, small}
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{sw}))
	o.MetadataLocation = "m1"

	lost := swapTo(other, "m9")
	lost.ExpectedMetadataLocation = "stale"
	lost.Index = []store.IndexedLeaf{leafOf("L3", 5)}
	require.ErrorIs(t, s.ObjectsSwap(ctx, []store.Swap{lost}), store.ErrConflict)

	marked, err := s.FileIndexLeaves(ctx, o.ID, []string{"L1", "L2", "L3"})
	require.NoError(t, err)
	require.Equal(t, map[string]bool{"L1": true, "L2": true}, marked)
	marked, err = s.FileIndexLeaves(ctx, other.ID, []string{"L1", "L3"})
	require.NoError(t, err)
	require.Empty(t, marked, "a lost swap indexes nothing; entries belong to their table")

	got, err := s.FileIndexLookup(ctx, o.ID, []string{"L1/f0000.parquet", "L1/f0599.parquet", "L2/f0002.parquet", "nope"})
	require.NoError(t, err)
	require.Equal(t, []string{"L1/f0000.parquet@L1#0", "L1/f0000.parquet@L1#1", "L1/f0599.parquet@L1#599", "L2/f0002.parquet@L2#2"}, entryKeys(got))
	got, err = s.FileIndexLookup(ctx, other.ID, []string{"L1/f0000.parquet", "L3/f0000.parquet"})
	require.NoError(t, err)
	require.Empty(t, got)

	// Many lookups at once: several IN chunks.
	var many []string
	for i := 0; i < 600; i += 2 {
		many = append(many, fmt.Sprintf("L1/f%04d.parquet", i))
	}
	got, err = s.FileIndexLookup(ctx, o.ID, many)
	require.NoError(t, err)
	require.Len(t, got, 301, "300 files, one of them at two positions")

	// Rebuild path: a new leaf, an indexed one (left as it is), under a
	// fenced key that must not become Mutated.
	require.Nil(t, mustBegin(t, s, claim("k", "fp", "owner", time.Minute, time.Hour)))
	fctx := store.WithIdempotencyFence(ctx, "k", "owner")
	require.NoError(t, s.FileIndexAdd(fctx, o.ID, []store.IndexedLeaf{leafOf("L4", 4), {Leaf: "L2", Locations: []string{"x"}}}))
	require.NoError(t, s.FileIndexAdd(ctx, o.ID, []store.IndexedLeaf{leafOf("L4", 4)}))
	rec := mustBegin(t, s, claim("k", "fp", "someone-else", time.Minute, time.Hour))
	require.NotNil(t, rec)
	require.False(t, rec.Mutated, "indexing is no catalog change")
	got, err = s.FileIndexLookup(ctx, o.ID, []string{"L4/f0003.parquet", "x", "L2/f0000.parquet"})
	require.NoError(t, err)
	require.Equal(t, []string{"L2/f0000.parquet@L2#0", "L2/f0000.parquet@L2#1", "L4/f0003.parquet@L4#3"}, entryKeys(got))

	// A fenced swap indexes too.
	sw = swapTo(o, "m2")
	sw.Index = []store.IndexedLeaf{leafOf("L5", 2)}
	require.NoError(t, s.ObjectsSwap(fctx, []store.Swap{sw}))
	marked, err = s.FileIndexLeaves(ctx, o.ID, []string{"L5"})
	require.NoError(t, err)
	require.True(t, marked["L5"])

	// Replace and drop remove the entries of the object they remove.
	require.NoError(t, s.FileIndexAdd(ctx, other.ID, []store.IndexedLeaf{leafOf("L6", 2)}))
	repl := table([]string{"ns"}, "u", "file:///tmp/wh/ns/u")
	require.NoError(t, s.ObjectReplace(ctx, repl))
	_, err = s.ObjectDelete(ctx, o.Ref())
	require.NoError(t, err)
	for _, id := range []string{o.ID, other.ID} {
		got, err = s.FileIndexLookup(ctx, id, []string{"L1/f0000.parquet", "L5/f0000.parquet", "L6/f0000.parquet"})
		require.NoError(t, err)
		require.Empty(t, got, "entries of a removed object")
		marked, err = s.FileIndexLeaves(ctx, id, []string{"L1", "L5", "L6"})
		require.NoError(t, err)
		require.Empty(t, marked)
	}
}

func mustBegin(t *testing.T, s store.Store, c store.IdempotencyClaim) *store.IdempotencyRecord {
	t.Helper()
	rec, err := s.IdempotencyBegin(context.Background(), c)
	require.NoError(t, err)
	return rec
}

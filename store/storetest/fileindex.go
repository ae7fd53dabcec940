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

// leafOf is a leaf starting lineage lin with n data files named after it.
func leafOf(leaf, lin string, n int) store.IndexedLeaf {
	l := store.IndexedLeaf{Leaf: leaf, Lineage: lin}
	for i := 0; i < n; i++ {
		l.Locations = append(l.Locations, fmt.Sprintf("%s/f%04d.parquet", lin, i))
	}
	return l
}

func entryKeys(es []store.IndexEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Location + "@" + e.Lineage
	}
	slices.Sort(out)
	return out
}

// twoTables creates tables t and u.
func twoTables(t *testing.T, s store.Store) (o, other *store.Object) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	o = table([]string{"ns"}, "t", "file:///tmp/wh/ns/t")
	other = table([]string{"ns"}, "u", "file:///tmp/wh/ns/u")
	require.NoError(t, s.ObjectCreate(ctx, o))
	require.NoError(t, s.ObjectCreate(ctx, other))
	return o, other
}

// testFileIndex: a swap indexes the leaves it lists in its transaction (a
// lost swap indexes nothing); a leaf continuing a lineage adds no file
// entries; lookups see entries of their table only.
func testFileIndex(t *testing.T, s store.Store) {
	ctx := context.Background()
	o, other := twoTables(t, s)

	// 600 files: two full prepared chunks and a remainder on SQLite.
	sw := swapTo(o, "m1")
	sw.Index = []store.IndexedLeaf{leafOf("L1", "A", 600), leafOf("L2", "B", 3)}
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{sw}))
	o.MetadataLocation = "m1"
	// L3 rewrites L1: same lineage, no file entries.
	sw = swapTo(o, "m2")
	sw.Index = []store.IndexedLeaf{{Leaf: "L3", Lineage: "A"}}
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{sw}))
	o.MetadataLocation = "m2"

	lost := swapTo(other, "m9")
	lost.ExpectedMetadataLocation = "stale"
	lost.Index = []store.IndexedLeaf{leafOf("L9", "Z", 5)}
	require.ErrorIs(t, s.ObjectsSwap(ctx, []store.Swap{lost}), store.ErrConflict)

	leaves, err := s.FileIndexLeaves(ctx, o.ID, []string{"L1", "L2", "L3", "L9"})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"L1": "A", "L2": "B", "L3": "A"}, leaves)
	leaves, err = s.FileIndexLeaves(ctx, other.ID, []string{"L1", "L9"})
	require.NoError(t, err)
	require.Empty(t, leaves, "a lost swap indexes nothing; entries belong to their table")

	got, err := s.FileIndexLookup(ctx, o.ID, []string{"A/f0000.parquet", "A/f0599.parquet", "B/f0002.parquet", "nope"})
	require.NoError(t, err)
	require.Equal(t, []string{"A/f0000.parquet@A", "A/f0599.parquet@A", "B/f0002.parquet@B"}, entryKeys(got))
	got, err = s.FileIndexLookup(ctx, other.ID, []string{"A/f0000.parquet", "Z/f0000.parquet"})
	require.NoError(t, err)
	require.Empty(t, got)

	// Many lookups at once: several IN chunks.
	var many []string
	for i := 0; i < 600; i += 2 {
		many = append(many, fmt.Sprintf("A/f%04d.parquet", i))
	}
	got, err = s.FileIndexLookup(ctx, o.ID, many)
	require.NoError(t, err)
	require.Len(t, got, 300)
}

// testFileIndexAdd: FileIndexAdd skips leaves already indexed and does not
// count as a change under an Idempotency-Key; a fenced swap indexes;
// dropping or replacing a table removes its entries.
func testFileIndexAdd(t *testing.T, s store.Store) {
	ctx := context.Background()
	o, other := twoTables(t, s)
	sw := swapTo(o, "m1")
	sw.Index = []store.IndexedLeaf{leafOf("L1", "A", 2), leafOf("L2", "B", 3)}
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{sw}))

	// Rebuild path: a new leaf, and an indexed one (left as it is, lineage
	// and files), under a fenced key that must not become Mutated.
	require.Nil(t, mustBegin(t, s, claim("k", "fp", "owner", time.Minute, time.Hour)))
	fctx := store.WithIdempotencyFence(ctx, "k", "owner")
	require.NoError(t, s.FileIndexAdd(fctx, o.ID, []store.IndexedLeaf{leafOf("L4", "C", 4), {Leaf: "L2", Lineage: "X", Locations: []string{"x"}}}))
	require.NoError(t, s.FileIndexAdd(ctx, o.ID, []store.IndexedLeaf{leafOf("L4", "D", 4)}))
	rec := mustBegin(t, s, claim("k", "fp", "someone-else", time.Minute, time.Hour))
	require.NotNil(t, rec)
	require.False(t, rec.Mutated, "indexing is no catalog change")
	got, err := s.FileIndexLookup(ctx, o.ID, []string{"C/f0003.parquet", "D/f0003.parquet", "x", "B/f0000.parquet"})
	require.NoError(t, err)
	require.Equal(t, []string{"B/f0000.parquet@B", "C/f0003.parquet@C"}, entryKeys(got))
	leaves, err := s.FileIndexLeaves(ctx, o.ID, []string{"L2", "L4"})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"L2": "B", "L4": "C"}, leaves)

	// A fenced swap indexes too.
	o.MetadataLocation = "m1"
	sw = swapTo(o, "m3")
	sw.Index = []store.IndexedLeaf{leafOf("L5", "E", 2)}
	require.NoError(t, s.ObjectsSwap(fctx, []store.Swap{sw}))
	leaves, err = s.FileIndexLeaves(ctx, o.ID, []string{"L5"})
	require.NoError(t, err)
	require.Equal(t, "E", leaves["L5"])

	// Replace and drop remove the entries of the object they remove.
	require.NoError(t, s.FileIndexAdd(ctx, other.ID, []store.IndexedLeaf{leafOf("L6", "F", 2)}))
	repl := table([]string{"ns"}, "u", "file:///tmp/wh/ns/u")
	require.NoError(t, s.ObjectReplace(ctx, repl))
	_, err = s.ObjectDelete(ctx, o.Ref())
	require.NoError(t, err)
	for _, id := range []string{o.ID, other.ID} {
		got, err = s.FileIndexLookup(ctx, id, []string{"A/f0000.parquet", "E/f0000.parquet", "F/f0000.parquet"})
		require.NoError(t, err)
		require.Empty(t, got, "entries of a removed object")
		leaves, err = s.FileIndexLeaves(ctx, id, []string{"L1", "L5", "L6"})
		require.NoError(t, err)
		require.Empty(t, leaves)
	}
}

func mustBegin(t *testing.T, s store.Store, c store.IdempotencyClaim) *store.IdempotencyRecord {
	t.Helper()
	rec, err := s.IdempotencyBegin(context.Background(), c)
	require.NoError(t, err)
	return rec
}

// testFileIndexForgetLeaves: forgetting expired leaves drops their rows,
// and a lineage's file rows only once no leaf of it is left.
func testFileIndexForgetLeaves(t *testing.T, s store.Store) {
	ctx := context.Background()
	o, other := twoTables(t, s)
	sw := swapTo(o, "m1")
	sw.Index = []store.IndexedLeaf{leafOf("L1", "A", 3), leafOf("L2", "B", 3), {Leaf: "L3", Lineage: "A"}}
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{sw}))
	sw = swapTo(other, "m1")
	sw.Index = []store.IndexedLeaf{leafOf("L1", "A", 3)}
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{sw}))

	// L1 goes (L3 continues lineage A), L2 goes (lineage B is left empty).
	require.NoError(t, s.FileIndexForgetLeaves(ctx, o.ID, []string{"L1", "L2", "metadata/not-a-leaf.avro"}))
	leaves, err := s.FileIndexLeaves(ctx, o.ID, []string{"L1", "L2", "L3"})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"L3": "A"}, leaves)
	got, err := s.FileIndexLookup(ctx, o.ID, []string{"A/f0000.parquet", "B/f0000.parquet"})
	require.NoError(t, err)
	require.Equal(t, []string{"A/f0000.parquet@A"}, entryKeys(got), "lineage A still has L3; B has no leaf")
	got, err = s.FileIndexLookup(ctx, other.ID, []string{"A/f0000.parquet"})
	require.NoError(t, err)
	require.Len(t, got, 1, "another table's entries are untouched")
	require.NoError(t, s.FileIndexForgetLeaves(ctx, o.ID, nil))
}

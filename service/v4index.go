package service

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/lakehold/catalog/internal/v4commit"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// The base-file index (docs/design.md, "Base-file index") lets a
// column-file commit read only the leaves holding its base files instead
// of every leaf of the table. Every data leaf this server writes is
// indexed with the swap that commits it (stageV4Snapshot); leaves of a
// root that are not indexed (tables from before the index, leaves other
// writers wrote) are read once and indexed here, before the lookup.

// rebuildBatch bounds the leaves indexed by one store call of the rebuild:
// the memory it holds and the length of its transaction.
const rebuildBatch = 16

// findBases finds the leaves holding the base files of byBase through the
// index, and the table's live equality deletes. A 503 or 500 for a store
// failure; the leaf reader's errors as they are.
func (s *Service) findBases(ctx context.Context, t *v4Tx, read v4commit.LeafReader, byBase map[string][]validation.ColumnFile) (map[string]*v4commit.BaseHit, []validation.DeleteFile, error) {
	st := t.st
	if err := s.indexRoot(ctx, t, read); err != nil {
		return nil, nil, err
	}
	got, err := s.store.FileIndexLookup(ctx, st.obj.ID, slices.Sorted(maps.Keys(byBase)))
	if err != nil {
		return nil, nil, storeErr(err, t.w.Name)
	}
	entries := make([]v4commit.IndexEntry, len(got))
	for i, e := range got {
		entries[i] = v4commit.IndexEntry{Location: e.Location, Leaf: e.Leaf, Position: e.Position}
	}
	found, deletes, err := v4commit.FindBasesIndexed(st.rootRows, read, byBase, entries, t.resolve)
	if errors.Is(err, v4commit.ErrIndexMismatch) {
		// Only a damaged index gets here; scanning every leaf is slow but
		// right.
		s.log.Warn("base-file index disagrees with a leaf manifest; scanning every leaf", "table_id", st.obj.ID)
		return v4commit.FindBases(st.rootRows, read, byBase)
	}
	return found, deletes, err
}

// indexRoot indexes the live data leaves of t's root that are not indexed
// yet. Entries of an immutable leaf are true whatever becomes of this
// commit, so they are written at once, in their own transactions.
func (s *Service) indexRoot(ctx context.Context, t *v4Tx, read v4commit.LeafReader) error {
	live := v4commit.LiveDataLeaves(t.st.rootRows, t.resolve)
	if len(live) == 0 {
		return nil
	}
	marked, err := s.store.FileIndexLeaves(ctx, t.st.obj.ID, slices.Sorted(maps.Keys(live)))
	if err != nil {
		return storeErr(err, t.w.Name)
	}
	var batch []store.IndexedLeaf
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := s.store.FileIndexAdd(ctx, t.st.obj.ID, batch)
		batch = batch[:0]
		return storeErr(err, t.w.Name)
	}
	for _, leaf := range slices.Sorted(maps.Keys(live)) {
		if marked[leaf] {
			continue
		}
		li, err := v4commit.ReadLeafIndex(&t.st.rootRows[live[leaf]], leaf, read)
		if err != nil {
			return err
		}
		batch = append(batch, store.IndexedLeaf{Leaf: li.Leaf, Locations: li.Locations})
		if len(batch) == rebuildBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// newLeafIndex is the index of the data leaves res writes, for the swap.
func (t *v4Tx) newLeafIndex(res *v4commit.Result) []store.IndexedLeaf {
	var out []store.IndexedLeaf
	for _, li := range res.DataLeafIndex(t.resolve) {
		out = append(out, store.IndexedLeaf{Leaf: li.Leaf, Locations: li.Locations})
	}
	return out
}

// resolve makes a location of t's table absolute.
func (t *v4Tx) resolve(loc string) string { return v4manifest.Resolve(t.st.location, loc) }

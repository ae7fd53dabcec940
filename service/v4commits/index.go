package v4commits

import (
	"context"
	"maps"
	"slices"

	"github.com/google/uuid"

	"github.com/lakehold/catalog/internal/v4tree"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// The base-file index (docs/design.md, "Base-file index") lets a
// column-file commit read only the leaves that may hold its base files
// instead of every leaf of the table, and any commit tell whether a file
// it adds is already live (as a data or column file) the same way. Every data leaf this server writes
// is indexed with the swap that commits it (StageSnapshot); leaves of a
// root that are not indexed (tables from before the index, leaves other
// writers wrote, leaves a replica on a version before migration 22
// indexed without their column files) are read once and indexed here,
// before the lookup.

// rebuildBatch bounds the leaves indexed by one store call of the rebuild:
// the memory it holds and the length of its transaction.
const rebuildBatch = 16

// indexHits is what one index lookup found for a commit's paths: the
// lineage of every live data leaf of the root and the lineages of the
// paths (data files and column files alike).
type indexHits struct {
	lineages map[string]string
	entries  []v4tree.IndexEntry
}

// lookup indexes t's root where needed and looks paths up in the index,
// in one query however many paths there are. A 503 or 500 for a store
// failure; the leaf reader's errors as they are.
func (cm *Committer) lookup(ctx context.Context, t *Tx, read v4tree.LeafReader, paths []string) (indexHits, error) {
	lineages, err := cm.indexRoot(ctx, t, read)
	if err != nil {
		return indexHits{}, err
	}
	t.lineages = lineages
	got, err := cm.store.FileIndexLookup(ctx, t.st.obj.ID, paths)
	if err != nil {
		return indexHits{}, storefault.Of(err, t.w.Name)
	}
	entries := make([]v4tree.IndexEntry, len(got))
	for i, e := range got {
		entries[i] = v4tree.IndexEntry{Location: e.Location, Lineage: e.Lineage}
	}
	return indexHits{lineages: lineages, entries: entries}, nil
}

// liveFiles is what a commit's new paths already are in the table.
type liveFiles struct {
	// data holds the rows found for paths (live or not: check the status).
	data map[string]*v4tree.BaseHit
	// columnOwner maps each path that is a live column file to its base.
	columnOwner map[string]string
	// deletes are the table's live equality deletes.
	deletes []validation.DeleteFile
}

// findLive looks every path of want (bases and new files, absolute) up
// in the index once and reads only the leaves that may hold one, to find
// the rows of want's data files and which of want are live column files.
// Errors are lookup's and the leaf reader's.
func (cm *Committer) findLive(ctx context.Context, t *Tx, read v4tree.LeafReader, want map[string][]validation.ColumnFile) (liveFiles, error) {
	hits, err := cm.lookup(ctx, t, read, slices.Sorted(maps.Keys(want)))
	if err != nil {
		return liveFiles{}, err
	}
	data, deletes, err := v4tree.FindBasesIndexed(t.st.rootRows, read, want, hits.lineages, hits.entries, t.resolve)
	if err != nil {
		return liveFiles{}, err
	}
	locs := make(map[string]bool, len(want))
	for loc := range want {
		locs[loc] = true
	}
	owners, err := v4tree.LiveColumnOwners(t.st.rootRows, read, locs, hits.lineages, hits.entries, t.resolve)
	if err != nil {
		return liveFiles{}, err
	}
	return liveFiles{data: data, columnOwner: owners, deletes: deletes}, nil
}

// indexRoot returns the lineage of every live data leaf of t's root,
// indexing those not indexed yet first. Entries of an immutable leaf are
// true whatever becomes of this commit, so they are written at once, in
// their own transactions.
func (cm *Committer) indexRoot(ctx context.Context, t *Tx, read v4tree.LeafReader) (map[string]string, error) {
	live := v4tree.LiveDataLeaves(t.st.rootRows, t.resolve)
	if len(live) == 0 {
		return map[string]string{}, nil
	}
	leaves := slices.Sorted(maps.Keys(live))
	lineages, err := cm.store.FileIndexLeaves(ctx, t.st.obj.ID, leaves)
	if err != nil || len(lineages) == len(leaves) {
		return lineages, storefault.Of(err, t.w.Name)
	}
	var todo []string
	for _, leaf := range leaves {
		if _, ok := lineages[leaf]; !ok {
			todo = append(todo, leaf)
		}
	}
	for start := 0; start < len(todo); start += rebuildBatch {
		batch := make([]store.IndexedLeaf, 0, rebuildBatch)
		for _, leaf := range todo[start:min(start+rebuildBatch, len(todo))] {
			li, err := v4tree.ReadLeafIndex(&t.st.rootRows[live[leaf]], leaf, read)
			if err != nil {
				return nil, err
			}
			batch = append(batch, store.IndexedLeaf{Leaf: leaf, Lineage: uuid.NewString(), Locations: li.Locations})
		}
		if err := cm.store.FileIndexAdd(ctx, t.st.obj.ID, batch); err != nil {
			return nil, storefault.Of(err, t.w.Name)
		}
	}
	// Read back: a concurrent rebuild may have indexed a leaf first, under
	// its own lineage.
	rebuilt, err := cm.store.FileIndexLeaves(ctx, t.st.obj.ID, todo)
	if err != nil {
		return nil, storefault.Of(err, t.w.Name)
	}
	maps.Copy(lineages, rebuilt)
	return lineages, nil
}

// newLeafIndex lists the data leaves res writes for the swap to index: a
// rewrite of an indexed leaf continues its lineage and adds no file
// entries; any other leaf starts a lineage with all its files. "Indexed"
// means trusted: FileIndexLeaves leaves out a leaf a previous version
// indexed (its lineage may lack column files), so a rewrite of one starts
// a complete lineage of its own rather than continue an incomplete one.
func (cm *Committer) newLeafIndex(ctx context.Context, t *Tx, res *v4tree.Result) ([]store.IndexedLeaf, error) {
	written := res.DataLeafIndex(t.resolve)
	var unknown []string
	for _, li := range written {
		if _, ok := t.lineages[li.Parent]; li.Parent != "" && !ok {
			unknown = append(unknown, li.Parent)
		}
	}
	lineages := t.lineages
	if len(unknown) > 0 {
		got, err := cm.store.FileIndexLeaves(ctx, t.st.obj.ID, unknown)
		if err != nil {
			return nil, storefault.Of(err, t.w.Name)
		}
		lineages = maps.Clone(t.lineages)
		if lineages == nil {
			lineages = map[string]string{}
		}
		maps.Copy(lineages, got)
	}
	out := make([]store.IndexedLeaf, 0, len(written))
	for _, li := range written {
		if lin, ok := lineages[li.Parent]; li.Parent != "" && ok {
			out = append(out, store.IndexedLeaf{Leaf: li.Leaf, Lineage: lin})
			continue
		}
		out = append(out, store.IndexedLeaf{Leaf: li.Leaf, Lineage: uuid.NewString(), Locations: li.Locations})
	}
	return out, nil
}

// resolve makes a location of t's table absolute.
func (t *Tx) resolve(loc string) string { return v4manifest.Resolve(t.st.location, loc) }

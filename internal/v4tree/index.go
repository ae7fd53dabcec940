package v4tree

import (
	"slices"

	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// The base-file index (docs/design.md, "Base-file index") records, per
// table, the lineage of each data leaf and the lineages each data file and
// each column file is in. A leaf written for added files starts a lineage; a leaf that
// rewrites another (Leaf.Parent: same files, some rows changed) continues
// the parent's. Which leaves count is decided here, from the root being
// committed against, so the index is right for any snapshot.

// IndexEntry says that data or column file Location is in (some leaves
// of) lineage Lineage.
type IndexEntry struct {
	Location string
	Lineage  string
}

// LeafIndex is one data leaf to index: its absolute location, the absolute
// location of the leaf it rewrites ("" when none) and its files (absolute,
// each once, in row order): each row's data file, then its column files.
type LeafIndex struct {
	Leaf      string
	Parent    string
	Locations []string
}

// baseCols is the projection a base lookup reads from a leaf: the column
// files too, to index them and to tell whether one is live.
var baseCols = []int{v4manifest.IDLocation, v4manifest.IDTracking, v4manifest.IDRecordCount, v4manifest.IDColumnFiles}

// LiveDataLeaves maps the absolute location (resolve turns a root row's
// location into one) of every live data leaf of root to its root index.
func LiveDataLeaves(root []v4manifest.TrackedFile, resolve func(string) string) map[string]int {
	out := map[string]int{}
	for i := range root {
		if root[i].Tracking.Status.Live() && root[i].ContentType == v4manifest.ContentDataManifest {
			out[resolve(root[i].Location)] = i
		}
	}
	return out
}

// uniqueLocations lists the locations of rows and of their column files,
// each once, in row order. A rewrite carries its parent's column files
// and adds none (column commits put changed rows in the root or in a new
// leaf), so a continued lineage needs no new entries for them either.
func uniqueLocations(rows []v4manifest.TrackedFile, resolve func(string) string) []string {
	seen := make(map[string]bool, len(rows))
	out := make([]string, 0, len(rows))
	add := func(loc string) {
		if !seen[loc] {
			seen[loc] = true
			out = append(out, loc)
		}
	}
	for i := range rows {
		add(resolve(rows[i].Location))
		for _, cf := range rows[i].ColumnFiles {
			add(resolve(cf.Location))
		}
	}
	return out
}

// ReadLeafIndex reads the data files of the leaf root row rr references
// (with the projection a base lookup reads, so that the reads share a
// cache). It returns the LeafReader's errors unchanged.
func ReadLeafIndex(rr *v4manifest.TrackedFile, leaf string, read LeafReader) (LeafIndex, error) {
	rows, err := read(rr, baseCols)
	if err != nil {
		return LeafIndex{}, err
	}
	return LeafIndex{Leaf: leaf, Locations: uniqueLocations(rows, func(s string) string { return s })}, nil
}

// DataLeafIndex lists the data leaves r writes; resolve makes a location
// absolute. The files of a leaf with a parent are all files of the parent.
func (r *Result) DataLeafIndex(resolve func(string) string) []LeafIndex {
	var out []LeafIndex
	for _, l := range r.Leaves {
		if l.Content != v4manifest.ContentDataLeaf {
			continue
		}
		li := LeafIndex{Leaf: l.Location, Locations: uniqueLocations(l.Rows, resolve)}
		if l.Parent != "" {
			li.Parent = resolve(l.Parent)
		}
		out = append(out, li)
	}
	return out
}

// FindBasesIndexed is FindBases reading only the leaves that may hold a
// base: lineages gives the lineage of the indexed live data leaves of root
// (by absolute location), entries the lineages of the base files. A live
// leaf without a lineage is read as FindBases would read it; a base in no
// leaf read is not in the table (CheckBases rejects it as before). It
// returns the LeafReader's errors unchanged.
func FindBasesIndexed(root []v4manifest.TrackedFile, read LeafReader, byBase map[string][]validation.ColumnFile,
	lineages map[string]string, entries []IndexEntry, resolve func(string) string) (map[string]*BaseHit, []validation.DeleteFile, error) {
	// Files in the root itself are found without reading a leaf; the
	// leaves of their lineages no longer hold them live.
	found := rootHits(root, byBase)
	want := map[string]bool{}
	for _, e := range entries {
		if _, ok := byBase[e.Location]; ok && found[e.Location] == nil {
			want[e.Lineage] = true
		}
	}
	leaves, narrow, err := readIndexedLeaves(root, read, lineages, want, resolve)
	if err != nil {
		return nil, nil, err
	}
	for k, i := range leaves {
		for _, r := range narrow[k] {
			if _, want := byBase[r.Location]; !want {
				continue
			}
			if h := found[r.Location]; h == nil || r.Tracking.Status.Live() {
				found[r.Location] = &BaseHit{RootIndex: i, Row: r}
			}
		}
	}
	deletes, err := liveDeletes(root, read)
	if err != nil {
		return nil, nil, err
	}
	return found, deletes, nil
}

// LiveColumnOwners returns the owner (base location) of each of locs
// (absolute) that is a live column file of a live data row of root:
// in the root itself, or in a live data leaf of a lineage entries give
// one of locs (or an unindexed leaf, read as FindBasesIndexed reads it).
// lineages and entries are as for FindBasesIndexed; leaves are read with
// the same projection, so the reads of one commit share a cache. It
// returns the LeafReader's errors unchanged.
func LiveColumnOwners(root []v4manifest.TrackedFile, read LeafReader, locs map[string]bool,
	lineages map[string]string, entries []IndexEntry, resolve func(string) string) (map[string]string, error) {
	owners := map[string]string{}
	addOwners := func(rows []v4manifest.TrackedFile) {
		for _, r := range rows {
			if r.ContentType != v4manifest.ContentData || !r.Tracking.Status.Live() {
				continue
			}
			for _, cf := range r.ColumnFiles {
				if loc := resolve(cf.Location); locs[loc] {
					owners[loc] = resolve(r.Location)
				}
			}
		}
	}
	addOwners(root)
	want := map[string]bool{}
	for _, e := range entries {
		if locs[e.Location] {
			want[e.Lineage] = true
		}
	}
	_, rows, err := readIndexedLeaves(root, read, lineages, want, resolve)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		addOwners(r)
	}
	return owners, nil
}

// readIndexedLeaves reads, narrow (baseCols), the live data leaves of
// root that may hold a wanted file: those of a lineage in want, and every
// leaf the index does not know (lineages has no entry for it). It returns
// their root indexes in order with their rows, and the LeafReader's
// errors unchanged.
func readIndexedLeaves(root []v4manifest.TrackedFile, read LeafReader, lineages map[string]string, want map[string]bool,
	resolve func(string) string) ([]int, [][]v4manifest.TrackedFile, error) {
	var leaves []int
	for leaf, i := range LiveDataLeaves(root, resolve) {
		if lin, indexed := lineages[leaf]; !indexed || want[lin] {
			leaves = append(leaves, i)
		}
	}
	slices.Sort(leaves)
	rows := make([][]v4manifest.TrackedFile, len(leaves))
	err := readEach(len(leaves), func(k int) (err error) {
		rows[k], err = read(&root[leaves[k]], baseCols)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return leaves, rows, nil
}

// liveDeletes collects the live equality deletes of every live delete
// leaf of root.
func liveDeletes(root []v4manifest.TrackedFile, read LeafReader) ([]validation.DeleteFile, error) {
	var deletes []validation.DeleteFile
	for i := range root {
		rr := &root[i]
		if !rr.Tracking.Status.Live() || rr.ContentType != v4manifest.ContentDeleteManifest {
			continue
		}
		rows, err := read(rr, nil)
		if err != nil {
			return nil, err
		}
		deletes = append(deletes, liveEqualityDeletes(rows)...)
	}
	return deletes, nil
}

package v4commit

import (
	"errors"
	"maps"
	"slices"

	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// The base-file index (docs/design.md, "Base-file index") tells which row
// of which leaf names a data file. Leaves are immutable, so an entry is
// true for as long as its leaf exists; which leaves count is decided here,
// from the root being committed against.

// IndexEntry says that row Position of the leaf at Leaf (absolute) names
// data file Location.
type IndexEntry struct {
	Location string
	Leaf     string
	Position int
}

// LeafIndex is the index of one data leaf: its absolute location and the
// data file location of each row, in row order.
type LeafIndex struct {
	Leaf      string
	Locations []string
}

// ErrIndexMismatch is returned by FindBasesIndexed when an index entry
// does not name the file its leaf holds at that position: the index cannot
// be trusted for this table and the caller should scan (FindBases).
var ErrIndexMismatch = errors.New("base-file index disagrees with a leaf manifest")

// baseCols is the projection a base lookup reads from a leaf.
var baseCols = []int{v4manifest.IDLocation, v4manifest.IDTracking, v4manifest.IDRecordCount}

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

// ReadLeafIndex reads the index of the leaf root row rr references (the
// projection a base lookup reads, so that the reads share a cache). It
// returns the LeafReader's errors unchanged.
func ReadLeafIndex(rr *v4manifest.TrackedFile, leaf string, read LeafReader) (LeafIndex, error) {
	rows, err := read(rr, baseCols)
	if err != nil {
		return LeafIndex{}, err
	}
	li := LeafIndex{Leaf: leaf, Locations: make([]string, len(rows))}
	for i := range rows {
		li.Locations[i] = rows[i].Location
	}
	return li, nil
}

// DataLeafIndex is the index of the data leaves r writes; resolve makes a
// row's location absolute.
func (r *Result) DataLeafIndex(resolve func(string) string) []LeafIndex {
	var out []LeafIndex
	for _, l := range r.Leaves {
		if l.Content != v4manifest.ContentDataLeaf {
			continue
		}
		li := LeafIndex{Leaf: l.Location, Locations: make([]string, len(l.Rows))}
		for i := range l.Rows {
			li.Locations[i] = resolve(l.Rows[i].Location)
		}
		out = append(out, li)
	}
	return out
}

// FindBasesIndexed is FindBases for a root whose live data leaves are all
// indexed: entries are the index entries naming the base files (of any
// leaf; those of leaves root does not list are ignored). Only the leaves
// holding a base are read; a base without an entry in a live leaf is not
// in the table (CheckBases rejects it as before). It returns
// ErrIndexMismatch when a leaf does not hold what its entry says, and the
// LeafReader's errors unchanged.
func FindBasesIndexed(root []v4manifest.TrackedFile, read LeafReader, byBase map[string][]validation.ColumnFile,
	entries []IndexEntry, resolve func(string) string) (map[string]*BaseHit, []validation.DeleteFile, error) {
	live := LiveDataLeaves(root, resolve)
	byLeaf := map[int][]IndexEntry{}
	for _, e := range entries {
		i, ok := live[e.Leaf]
		if _, want := byBase[e.Location]; ok && want {
			byLeaf[i] = append(byLeaf[i], e)
		}
	}
	found := map[string]*BaseHit{}
	for _, i := range slices.Sorted(maps.Keys(byLeaf)) {
		rows, err := read(&root[i], baseCols)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range byLeaf[i] {
			if e.Position < 0 || e.Position >= len(rows) || rows[e.Position].Location != e.Location {
				return nil, nil, ErrIndexMismatch
			}
			r := rows[e.Position]
			if h := found[e.Location]; h == nil || r.Tracking.Status.Live() {
				found[e.Location] = &BaseHit{RootIndex: i, Row: r}
			}
		}
	}
	deletes, err := liveDeletes(root, read)
	if err != nil {
		return nil, nil, err
	}
	return found, deletes, nil
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

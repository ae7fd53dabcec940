package v4commit

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

func identity(s string) string { return s }

// indexOf is the index of every data leaf tr holds, live or not.
func indexOf(tr *tree) []IndexEntry {
	var out []IndexEntry
	for _, leaf := range slices.Sorted(maps.Keys(tr.leaves)) {
		for i, r := range tr.leaves[leaf] {
			out = append(out, IndexEntry{Location: r.Location, Leaf: leaf, Position: i})
		}
	}
	return out
}

// TestFindBasesIndexedAgreesWithScan: for every set of bases the indexed
// lookup finds what the scan finds (dead rows, rows of dead leaves and
// unknown bases included) while reading only the leaves that hold a base
// and the delete leaves.
func TestFindBasesIndexedAgreesWithScan(t *testing.T) {
	tr, root := threeLeaves()
	// c2 is dead in leaf c, live again in leaf e; a1 also sits in a leaf no
	// root row lists (its entries must be ignored).
	tr.leaves[root[3].Location][1].Tracking.Status = v4manifest.StatusReplaced
	root = append(root, tr.addLeaf("e.parquet", v4manifest.ContentDataManifest, data("c2", 60)))
	tr.addLeaf("orphan.parquet", v4manifest.ContentDataManifest, data("x0", 1), data("a1", 10))
	entries := indexOf(tr)
	for _, tc := range []struct {
		bases []string
		reads []string // leaves read besides the delete leaf
	}{
		{[]string{"a1"}, []string{"a.parquet"}},
		{[]string{"c2"}, []string{"c.parquet", "e.parquet"}},
		{[]string{"a2", "b1", "c1"}, []string{"a.parquet", "b.parquet", "c.parquet"}},
		{[]string{"nope"}, nil},
		{[]string{"eq.parquet"}, nil}, // a delete file is no base: not indexed
	} {
		byBase := map[string][]validation.ColumnFile{}
		for _, b := range tc.bases {
			byBase[loc(b)] = []validation.ColumnFile{colFile(b, "cf", 1)}
		}
		wantFound, wantDeletes, err := FindBases(root, tr.read, byBase)
		if err != nil {
			t.Fatal(err)
		}
		tr.reads = nil
		found, deletes, err := FindBasesIndexed(root, tr.read, byBase, entries, identity)
		if err != nil {
			t.Fatal(err)
		}
		var wantReads []string
		for _, l := range tc.reads {
			wantReads = append(wantReads, tableLoc+"/metadata/"+l)
		}
		wantReads = append(wantReads, tableLoc+"/metadata/d.parquet")
		if !slices.Equal(tr.reads, wantReads) {
			t.Errorf("%v: read %v, want %v", tc.bases, tr.reads, wantReads)
		}
		if len(found) != len(wantFound) {
			t.Errorf("%v: found %d bases, the scan %d", tc.bases, len(found), len(wantFound))
		}
		for b, w := range wantFound {
			h := found[b]
			if h == nil || h.RootIndex != w.RootIndex || h.Row.Location != w.Row.Location || h.Row.Tracking.Status != w.Row.Tracking.Status {
				t.Errorf("%v: %s found at %+v, the scan at %+v", tc.bases, b, h, w)
			}
		}
		if len(deletes) != len(wantDeletes) {
			t.Errorf("%v: deletes %v, want %v", tc.bases, deletes, wantDeletes)
		}
	}
}

// TestFindBasesIndexedMismatch: an entry that does not match its leaf is
// ErrIndexMismatch, never a wrong base; reader errors pass unchanged.
func TestFindBasesIndexedMismatch(t *testing.T) {
	tr, root := threeLeaves()
	byBase := map[string][]validation.ColumnFile{loc("a1"): {colFile("a1", "cf", 1)}}
	a := tableLoc + "/metadata/a.parquet"
	for _, e := range []IndexEntry{{loc("a1"), a, 1}, {loc("a1"), a, 2}, {loc("a1"), a, -1}} {
		if _, _, err := FindBasesIndexed(root, tr.read, byBase, []IndexEntry{e}, identity); !errors.Is(err, ErrIndexMismatch) {
			t.Errorf("entry %+v: got %v, want ErrIndexMismatch", e, err)
		}
	}
	tr.fail = errRead
	if _, _, err := FindBasesIndexed(root, tr.read, byBase, []IndexEntry{{loc("a1"), a, 0}}, identity); err != errRead {
		t.Errorf("got %v, want the reader's error", err)
	}
}

// TestLeafIndexes: a commit's index lists its data leaves' rows in order
// (resolved), not its delete leaves; ReadLeafIndex reads a leaf's rows in
// order; LiveDataLeaves skips dead and delete leaves.
func TestLeafIndexes(t *testing.T) {
	tr, root := threeLeaves()
	eq := data("eq2", 2)
	eq.ContentType = v4manifest.ContentEqualityDeletes
	rel := data("rel", 1)
	rel.Location = "data/rel"
	res, err := CommitFiles(root, tr.read, newSnap(), Files{Added: []v4manifest.TrackedFile{data("n1", 1), rel}, EqualityDeletes: []v4manifest.TrackedFile{eq}, Remove: []string{loc("b1")}})
	if err != nil {
		t.Fatal(err)
	}
	idx := res.DataLeafIndex(func(s string) string { return v4manifest.Resolve(tableLoc, s) })
	got := map[string][]string{}
	for _, li := range idx {
		got[li.Leaf] = li.Locations
	}
	want := map[string][]string{
		tableLoc + "/metadata/new-0.parquet": {loc("b1"), loc("b2")}, // rewritten leaf b: b1 DELETED, b2 carried
		tableLoc + "/metadata/new-1.parquet": {loc("n1"), loc("rel")},
	}
	if len(got) != len(want) {
		t.Fatalf("index %v, want %v", got, want)
	}
	for l, w := range want {
		if !slices.Equal(got[l], w) {
			t.Errorf("leaf %s: %v, want %v", l, got[l], w)
		}
	}
	li, err := ReadLeafIndex(&root[2], "B", tr.read)
	if err != nil || li.Leaf != "B" || !slices.Equal(li.Locations, []string{loc("b1"), loc("b2")}) {
		t.Errorf("ReadLeafIndex: %+v, %v", li, err)
	}
	live := LiveDataLeaves(root, identity)
	if len(live) != 3 || live[root[0].Location] != 0 || live[root[3].Location] != 3 {
		t.Errorf("live data leaves %v", live)
	}
}

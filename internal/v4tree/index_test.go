package v4tree

import (
	"maps"
	"slices"
	"testing"

	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

func identity(s string) string { return s }

// indexOf indexes every data leaf of tr as its own lineage, except the
// leaves of cont, which continue the lineage of the leaf they map to.
func indexOf(tr *tree, cont map[string]string) (map[string]string, []IndexEntry) {
	lineages := map[string]string{}
	var entries []IndexEntry
	for _, leaf := range slices.Sorted(maps.Keys(tr.leaves)) {
		if parent, ok := cont[leaf]; ok {
			lineages[leaf] = parent
			continue
		}
		lineages[leaf] = leaf
		for _, loc := range uniqueLocations(tr.leaves[leaf], identity) {
			entries = append(entries, IndexEntry{Location: loc, Lineage: leaf})
		}
	}
	return lineages, entries
}

func meta(name string) string { return tableLoc + "/metadata/" + name }

// TestFindBasesIndexedAgreesWithScan: for every set of bases the indexed
// lookup finds what the scan finds (dead rows, continued lineages, files of
// leaves no root lists, unknown bases) while reading only the leaves of
// the bases' lineages, the unindexed live leaves and the delete leaves.
func TestFindBasesIndexedAgreesWithScan(t *testing.T) {
	tr, root := threeLeaves()
	// c2 is dead in leaf c and live in leaf e, which continues c's lineage
	// in this test's index; a1 is also in a leaf no root row lists.
	tr.leaves[root[3].Location][1].Tracking.Status = v4manifest.StatusReplaced
	root = append(root, tr.addLeaf("e.parquet", v4manifest.ContentDataManifest, data("c2", 60)))
	tr.addLeaf("orphan.parquet", v4manifest.ContentDataManifest, data("x0", 1), data("a1", 10))
	lineages, entries := indexOf(tr, map[string]string{meta("e.parquet"): meta("c.parquet")})
	for _, tc := range []struct {
		bases      []string
		reads      []string // leaves read besides the delete leaf
		unindexedB bool     // leaf b is not indexed
	}{
		{[]string{"a1"}, []string{"a.parquet"}, false},
		{[]string{"c2"}, []string{"c.parquet", "e.parquet"}, false},
		{[]string{"c1"}, []string{"c.parquet", "e.parquet"}, false},
		{[]string{"a2", "b1", "c1"}, []string{"a.parquet", "b.parquet", "c.parquet", "e.parquet"}, false},
		{[]string{"nope"}, nil, false},
		{[]string{"eq.parquet"}, nil, false}, // a delete file is no base
		{[]string{"a1"}, []string{"a.parquet", "b.parquet"}, true},
		{[]string{"b2"}, []string{"b.parquet"}, true},
	} {
		lin := maps.Clone(lineages)
		if tc.unindexedB {
			delete(lin, meta("b.parquet"))
		}
		byBase := map[string][]validation.ColumnFile{}
		for _, b := range tc.bases {
			byBase[loc(b)] = []validation.ColumnFile{colFile(b, "cf", 1)}
		}
		wantFound, wantDeletes, err := FindBases(root, tr.read, byBase)
		if err != nil {
			t.Fatal(err)
		}
		tr.reads = nil
		found, deletes, err := FindBasesIndexed(root, tr.read, byBase, lin, entries, identity)
		if err != nil {
			t.Fatal(err)
		}
		var wantReads []string
		for _, l := range tc.reads {
			wantReads = append(wantReads, meta(l))
		}
		wantReads = append(wantReads, meta("d.parquet"))
		// Leaves are read a few at a time: the order is not fixed.
		slices.Sort(wantReads)
		slices.Sort(tr.reads)
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
	tr.fail = errRead
	byBase := map[string][]validation.ColumnFile{loc("a1"): {colFile("a1", "cf", 1)}}
	if _, _, err := FindBasesIndexed(root, tr.read, byBase, lineages, entries, identity); err != errRead {
		t.Errorf("got %v, want the reader's error", err)
	}
}

// TestRewrittenLeavesKeepTheirParentsFiles: every leaf a commit writes in
// place of another names only files (data and column files) of that other
// leaf (what lets it
// continue the parent's lineage); leaves of added files, and the leaf of
// a column commit's MODIFIED rows, have no parent.
func TestRewrittenLeavesKeepTheirParentsFiles(t *testing.T) {
	dv := v4manifest.DeletionVector{Location: tableLoc + "/data/dv.puffin", SizeInBytes: 40, Cardinality: 5}
	check := func(name string, tr *tree, res *Result, wantParents int) {
		t.Helper()
		parents := 0
		for _, li := range res.DataLeafIndex(identity) {
			if li.Parent == "" {
				continue
			}
			parents++
			mine := uniqueLocations(tr.leaves[li.Parent], identity)
			for _, l := range li.Locations {
				if !slices.Contains(mine, l) {
					t.Errorf("%s: leaf %s names %s, which its parent does not", name, li.Leaf, l)
				}
			}
		}
		if parents != wantParents {
			t.Errorf("%s: %d leaves with a parent, want %d", name, parents, wantParents)
		}
	}
	tr, root := threeLeaves()
	// Column files are indexed as files too: a rewrite carries them.
	tr.leaves[root[2].Location][1] = withColumnFile(tr.leaves[root[2].Location][1], "cf-b2")
	tr.leaves[root[0].Location][1] = withColumnFile(tr.leaves[root[0].Location][1], "cf-a2")
	res, err := CommitFiles(root, tr.read, newSnap(), Files{Added: []v4manifest.TrackedFile{data("n1", 1)},
		Remove: []string{loc("a1")}, DeletionVectors: map[string]v4manifest.DeletionVector{loc("b2"): dv}})
	if err != nil {
		t.Fatal(err)
	}
	check("files", tr, res, 2)
	tr, root, c := columnsSetup(t, colFile("b1", "cf1", 1))
	res, err = CommitColumns(root, tr.read, newSnap(), c)
	if err != nil {
		t.Fatal(err)
	}
	// A column commit masks the base in its leaf and writes the MODIFIED
	// row into a new leaf: a new lineage, not a rewrite.
	check("columns", tr, res, 0)
}

// TestLeafIndexes: a commit lists its data leaves (resolved, each file
// once, parent resolved), not its delete leaves; ReadLeafIndex lists a
// leaf's files once each; LiveDataLeaves skips dead and delete leaves.
func TestLeafIndexes(t *testing.T) {
	tr, root := threeLeaves()
	tr.leaves[root[0].Location] = append(tr.leaves[root[0].Location], data("a1", 10)) // a1 twice
	eq := data("eq2", 2)
	eq.ContentType = v4manifest.ContentEqualityDeletes
	rel := data("rel", 1)
	rel.Location = "data/rel"
	root[2].Location = "metadata/b.parquet" // relative in the root
	tr.leaves[root[2].Location] = tr.leaves[meta("b.parquet")]
	res, err := CommitFiles(root, tr.read, newSnap(), Files{Added: []v4manifest.TrackedFile{data("n1", 1), rel},
		EqualityDeletes: []v4manifest.TrackedFile{eq}, Remove: []string{loc("b1")}})
	if err != nil {
		t.Fatal(err)
	}
	got := res.DataLeafIndex(func(s string) string { return v4manifest.Resolve(tableLoc, s) })
	want := []LeafIndex{
		{Leaf: meta("new-0.parquet"), Parent: meta("b.parquet"), Locations: []string{loc("b1"), loc("b2")}},
		{Leaf: meta("new-1.parquet"), Locations: []string{loc("n1"), loc("rel")}},
	}
	if len(got) != len(want) {
		t.Fatalf("index %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Leaf != want[i].Leaf || got[i].Parent != want[i].Parent || !slices.Equal(got[i].Locations, want[i].Locations) {
			t.Errorf("leaf %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	li, err := ReadLeafIndex(&root[0], "A", tr.read)
	if err != nil || li.Leaf != "A" || !slices.Equal(li.Locations, []string{loc("a1"), loc("a2")}) {
		t.Errorf("ReadLeafIndex: %+v, %v", li, err)
	}
	live := LiveDataLeaves(root, func(s string) string { return v4manifest.Resolve(tableLoc, s) })
	if len(live) != 3 || live[root[0].Location] != 0 || live[meta("b.parquet")] != 2 {
		t.Errorf("live data leaves %v", live)
	}
}

// withColumnFile gives r a column file at loc(name).
func withColumnFile(r v4manifest.TrackedFile, name string) v4manifest.TrackedFile {
	r.ColumnFiles = []v4manifest.ColumnFile{{FormatVersion: 4, FieldIDs: []int32{3}, Location: loc(name), FileFormat: "parquet", FileSizeInBytes: 9}}
	return r
}

// TestLiveColumnOwners: the owner of a live column file is found in the
// root and in the leaves of the lineages the index gives it, reading only
// those leaves (and unindexed ones); a column file of a dead row, or one
// the index does not name, is not live; a leaf index lists column files.
func TestLiveColumnOwners(t *testing.T) {
	tr, root := threeLeaves()
	b := tr.leaves[root[2].Location]
	b[0] = withColumnFile(b[0], "cf-b1")
	c := tr.leaves[root[3].Location]
	c[1] = withColumnFile(c[1], "cf-c2")
	c[1].Tracking.Status = v4manifest.StatusReplaced
	root = append(root, withColumnFile(data("r1", 5), "cf-r1"))
	lineages, entries := indexOf(tr, nil)
	li, err := ReadLeafIndex(&root[2], root[2].Location, tr.read)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{loc("b1"), loc("cf-b1"), loc("b2")}; !slices.Equal(li.Locations, want) {
		t.Errorf("leaf index %v, want %v", li.Locations, want)
	}
	for _, tc := range []struct {
		locs      []string
		owners    map[string]string
		reads     []string
		unindexed bool // leaf a is not indexed
	}{
		{[]string{"cf-b1"}, map[string]string{"cf-b1": "b1"}, []string{"b.parquet"}, false},
		{[]string{"cf-r1", "nope"}, map[string]string{"cf-r1": "r1"}, nil, false},
		{[]string{"cf-c2"}, map[string]string{}, []string{"c.parquet"}, false},
		{[]string{"b1"}, map[string]string{}, []string{"b.parquet"}, false}, // a data file is no column file
		{[]string{"cf-b1"}, map[string]string{"cf-b1": "b1"}, []string{"a.parquet", "b.parquet"}, true},
	} {
		lin := maps.Clone(lineages)
		if tc.unindexed {
			delete(lin, meta("a.parquet"))
		}
		locs := map[string]bool{}
		for _, l := range tc.locs {
			locs[loc(l)] = true
		}
		tr.reads = nil
		owners, err := LiveColumnOwners(root, tr.read, locs, lin, entries, identity)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{}
		for cf, base := range tc.owners {
			want[loc(cf)] = loc(base)
		}
		if !maps.Equal(owners, want) {
			t.Errorf("%v: owners %v, want %v", tc.locs, owners, want)
		}
		var wantReads []string
		for _, l := range tc.reads {
			wantReads = append(wantReads, meta(l))
		}
		slices.Sort(tr.reads)
		if !slices.Equal(tr.reads, wantReads) {
			t.Errorf("%v: read %v, want %v", tc.locs, tr.reads, wantReads)
		}
	}
	tr.fail = errRead
	if _, err := LiveColumnOwners(root, tr.read, map[string]bool{loc("cf-b1"): true}, lineages, entries, identity); err != errRead {
		t.Errorf("got %v, want the reader's error", err)
	}
}

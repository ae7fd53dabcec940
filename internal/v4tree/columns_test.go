package v4tree

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// withStats gives row r stats for fields 1 and 2 and sort order 1.
func withStats(r v4manifest.TrackedFile) v4manifest.TrackedFile {
	r.ContentStats = map[int]*v4manifest.FieldStats{1: {LowerBound: int64(1)}, 2: {LowerBound: int64(2)}}
	r.SortOrderID = ptrTo(int32(1))
	return r
}

func colFile(base, name string, ids ...int) validation.ColumnFile {
	return validation.ColumnFile{DataFile: loc(base), Location: loc(name), FileFormat: "parquet", FieldIDs: ids, RecordCount: 30, FileSizeInBytes: 9}
}

// columnsSetup finds the bases of files in the threeLeaves tree with b1
// carrying stats.
func columnsSetup(t *testing.T, files ...validation.ColumnFile) (*tree, []v4manifest.TrackedFile, Columns) {
	t.Helper()
	tr, root := threeLeaves()
	rows := tr.leaves[root[2].Location]
	rows[0] = withStats(rows[0])
	c := columnsFor(t, tr, root, files)
	order, err := table.NewSortOrder(1, []table.SortField{{SourceIDs: []int{2}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst}})
	if err != nil {
		t.Fatal(err)
	}
	c.SortOrders = []table.SortOrder{order}
	return tr, root, c
}

func TestCommitColumns(t *testing.T) {
	tr, root, c := columnsSetup(t, colFile("b1", "cf1", 1))
	c.Stats = map[string]map[int]*v4manifest.FieldStats{loc("cf1"): {1: {LowerBound: int64(100)}}}
	c.SnapshotProperties = map[string]string{"who": "test"}
	tr.reads = nil
	res, err := CommitColumns(root, tr.read, newSnap(), c)
	if err != nil {
		t.Fatal(err)
	}
	// The base's leaf is not rewritten: its root row masks the base
	// (MODIFIED, replaced_positions = dv = {0}) and the root itself holds
	// the MODIFIED row: the root is the only manifest written.
	if got, want := statuses(res.Root), []v4manifest.Status{0, 4, 0, 0, 4}; !slices.Equal(got, want) {
		t.Errorf("root statuses %v, want %v", got, want)
	}
	if !slices.Equal(tr.reads, []string{root[2].Location}) {
		t.Errorf("read %v, want only the base's leaf", tr.reads)
	}
	masked := res.Root[1]
	if masked.Location != root[2].Location || *masked.Tracking.DVSnapshotID != 99 || *masked.Tracking.SnapshotID != 1 || *masked.Tracking.SequenceNumber != 1 {
		t.Errorf("masked root row %+v", masked.Tracking)
	}
	dv, err := masked.MaskedPositions()
	if err != nil || !maps.Equal(dv, map[int64]bool{0: true}) {
		t.Errorf("dv %v (%v), want position 0", dv, err)
	}
	if delta, err := masked.ReplacedInSnapshot(); err != nil || !maps.Equal(delta, map[int64]bool{0: true}) {
		t.Errorf("replaced positions %v (%v), want position 0", delta, err)
	}
	if len(res.Leaves) != 0 {
		t.Fatalf("leaves %+v: want none", res.Leaves)
	}
	rows := res.Root[4:]
	if rows[0].ContentType != v4manifest.ContentData || rows[0].Location != loc("b1") {
		t.Fatalf("root row 4 is %v %s, want b1's data row", rows[0].ContentType, rows[0].Location)
	}
	rep, mod := tr.leaves[root[2].Location][0], rows[0]
	if *mod.Tracking.SequenceNumber != 7 || *mod.Tracking.LatestColumnFileSnapshotID != 99 || *mod.Tracking.FileSequenceNumber != 1 {
		t.Errorf("modified tracking %+v", mod.Tracking)
	}
	if len(mod.ColumnFiles) != 1 || mod.ColumnFiles[0].Location != loc("cf1") || !slices.Equal(mod.ColumnFiles[0].FieldIDs, []int32{1}) {
		t.Errorf("column files %+v", mod.ColumnFiles)
	}
	if mod.ContentStats[1].LowerBound != int64(100) || mod.ContentStats[2].LowerBound != int64(2) {
		t.Errorf("stats: field 1 %v (want the column file's), field 2 %v (want the base's)", mod.ContentStats[1], mod.ContentStats[2])
	}
	if mod.SortOrderID == nil {
		t.Error("sort order dropped though the column file does not touch its field")
	}
	if rep.ContentStats[1].LowerBound != int64(1) {
		t.Error("the replaced row's stats changed")
	}
	live := liveFiles(t, tr, res)
	if got := live[loc("b1")]; got.Tracking.Status != v4manifest.StatusModified {
		t.Errorf("live b1 is %v, want the MODIFIED row", got.Tracking.Status)
	}
	want := map[string]string{"added-column-files": "1", "retired-column-files": "0", "modified-data-files": "1", "who": "test"}
	for k, v := range want {
		if res.Summary[k] != v {
			t.Errorf("summary %s = %q, want %q", k, res.Summary[k], v)
		}
	}
	if res.Operation != table.OpOverwrite || res.AddedRows != 0 {
		t.Errorf("operation %s, added rows %d", res.Operation, res.AddedRows)
	}
}

func TestCommitColumnsStatsAndSortOrder(t *testing.T) {
	// Field 2 updated without stats: its stats become unknown, and the
	// sort order on field 2 no longer holds.
	tr, root, c := columnsSetup(t, colFile("b1", "cf2", 2))
	res, err := CommitColumns(root, tr.read, newSnap(), c)
	if err != nil {
		t.Fatal(err)
	}
	mod := rowIn(t, res, "b1")
	if _, ok := mod.ContentStats[2]; ok || mod.ContentStats[1] == nil {
		t.Errorf("stats %v: want field 1 kept and field 2 dropped", mod.ContentStats)
	}
	if mod.SortOrderID != nil {
		t.Error("sort order kept though its field was updated")
	}
}

func TestCommitColumnsMergesOlderColumnFiles(t *testing.T) {
	tr, root, c := columnsSetup(t, colFile("b1", "new", 1))
	rows := tr.leaves[root[2].Location]
	rows[0].ColumnFiles = []v4manifest.ColumnFile{{Location: loc("old1"), FieldIDs: []int32{1}}, {Location: loc("old2"), FieldIDs: []int32{2, 3}}}
	res, err := CommitColumns(root, tr.read, newSnap(), c)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cf := range rowIn(t, res, "b1").ColumnFiles {
		got = append(got, cf.Location[len(tableLoc+"/data/"):])
	}
	if !slices.Equal(got, []string{"new", "old2"}) {
		t.Errorf("column files %v, want new and old2 (old1 retired)", got)
	}
	if res.Summary["retired-column-files"] != "1" || res.Summary["added-column-files"] != "1" {
		t.Errorf("summary %v", res.Summary)
	}
}

func TestCommitColumnsEqualityDelete(t *testing.T) {
	tr, root, c := columnsSetup(t, colFile("b1", "cf1", 1))
	// The delete leaf's file is global and newer than b1 (sequence 1).
	c.Deletes = []validation.DeleteFile{{Location: loc("eq"), SequenceNumber: 2, Unpartitioned: true}}
	_, err := CommitColumns(root, tr.read, newSnap(), c)
	var ve *validation.Error
	if !errors.As(err, &ve) || ve.Reason != validation.ReasonEqualityDeletesPresent {
		t.Errorf("got %v, want %s", err, validation.ReasonEqualityDeletesPresent)
	}
	c.Deletes[0].SequenceNumber = 1 // not newer: does not apply
	if _, err := CommitColumns(root, tr.read, newSnap(), c); err != nil {
		t.Error(err)
	}
}

func TestFindBases(t *testing.T) {
	tr, root := threeLeaves()
	// c2 is dead in leaf c but live again in a later leaf: the live row wins.
	tr.leaves[root[3].Location][1].Tracking.Status = v4manifest.StatusReplaced
	root = append(root, tr.addLeaf("e.parquet", v4manifest.ContentDataManifest, data("c2", 60)))
	files := []validation.ColumnFile{colFile("c2", "x", 1), colFile("a1", "y", 1), colFile("a1", "z", 2)}
	files[0].RecordCount, files[1].RecordCount, files[2].RecordCount = 60, 10, 10
	byBase := GroupByBase(files)
	found, deletes, err := FindBases(root, tr.read, byBase)
	if err != nil {
		t.Fatal(err)
	}
	if h := found[loc("c2")]; h == nil || h.RootIndex != 5 || !h.Row.Tracking.Status.Live() {
		t.Errorf("c2 found at %+v, want the live row of root row 5", h)
	}
	if h := found[loc("a1")]; h == nil || h.RootIndex != 0 {
		t.Errorf("a1 found at %+v", h)
	}
	if len(deletes) != 1 || deletes[0].Location != loc("eq.parquet") || deletes[0].SequenceNumber != 1 {
		t.Errorf("deletes %+v", deletes)
	}
	states, err := CheckBases(byBase, found)
	if err != nil || len(states) != 2 || states[loc("a1")] != (BaseState{Live: true, Seq: 1}) {
		t.Errorf("states %v, %v", states, err)
	}
	tr.fail = errRead
	if _, _, err := FindBases(root, tr.read, byBase); err != errRead {
		t.Errorf("got %v, want the reader's error", err)
	}
}

func TestCheckBases(t *testing.T) {
	tr, root := threeLeaves()
	for _, tc := range []struct {
		name   string
		file   validation.ColumnFile
		reason string
	}{
		{"unknown", colFile("zz", "cf", 1), validation.ReasonUnknownDataFile},
		{"delete file", colFile("eq.parquet", "cf", 1), validation.ReasonUnknownDataFile}, // delete leaves are not searched
		{"record count", validation.ColumnFile{DataFile: loc("a1"), Location: loc("cf"), FieldIDs: []int{1}, RecordCount: 11}, validation.ReasonRecordCountMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			byBase := GroupByBase([]validation.ColumnFile{tc.file})
			found, _, err := FindBases(root, tr.read, byBase)
			if err != nil {
				t.Fatal(err)
			}
			_, err = CheckBases(byBase, found)
			var ve *validation.Error
			if !errors.As(err, &ve) || ve.Reason != tc.reason {
				t.Errorf("got %v, want %s", err, tc.reason)
			}
		})
	}
}

// TestCommitColumnsFoldsSmallLeaves: once enough small leaves are live, a
// column commit folds their live rows into its new leaf and retires them;
// every file stays live exactly once.
func TestCommitColumnsFoldsSmallLeaves(t *testing.T) {
	tr := newTree()
	var root []v4manifest.TrackedFile
	for i := 0; i < mergeSmallAt; i++ {
		root = append(root, tr.addLeaf(fmt.Sprintf("small%d.parquet", i), v4manifest.ContentDataManifest, data(fmt.Sprintf("s%d", i), 1)))
	}
	root = append(root, tr.addLeaf("base.parquet", v4manifest.ContentDataManifest, data("b1", 30), data("b2", 30)))
	c := columnsFor(t, tr, root, []validation.ColumnFile{colFile("b1", "cf1", 1)})
	res, err := CommitColumns(root, tr.read, newSnap(), c)
	if err != nil {
		t.Fatal(err)
	}
	// Few rows: the folded ones and the MODIFIED one go in the root.
	want := slices.Repeat([]v4manifest.Status{v4manifest.StatusDeleted}, mergeSmallAt)
	want = append(want, v4manifest.StatusModified)
	want = append(want, slices.Repeat([]v4manifest.Status{v4manifest.StatusExisting}, mergeSmallAt)...)
	want = append(want, v4manifest.StatusModified)
	if got := statuses(res.Root); !slices.Equal(got, want) {
		t.Fatalf("root statuses %v, want %v", got, want)
	}
	if len(res.Leaves) != 0 {
		t.Fatalf("%d new leaves, want none", len(res.Leaves))
	}
	if live := liveFiles(t, tr, res); len(live) != mergeSmallAt+2 || live[loc("b1")].Tracking.Status != v4manifest.StatusModified {
		t.Fatalf("live files %v", live)
	}
}

// TestCommitColumnsBaseInRoot: a base held by the root itself (the MODIFIED
// row of an earlier column commit) is updated without reading any leaf:
// its REPLACED twin and new MODIFIED row both go in the root, with the
// column files merged and its tracking explicit.
func TestCommitColumnsBaseInRoot(t *testing.T) {
	tr, root, c := columnsSetup(t, colFile("b1", "cf1", 1))
	first, err := CommitColumns(root, tr.read, newSnap(), c)
	if err != nil {
		t.Fatal(err)
	}
	root = nil
	for _, rr := range first.Root {
		if rr.Tracking.Status.Live() {
			root = append(root, rr)
		}
	}
	c = columnsFor(t, tr, root, []validation.ColumnFile{colFile("b1", "cf2", 2)})
	if h := c.Found[loc("b1")]; h == nil || root[h.RootIndex].ContentType != v4manifest.ContentData {
		t.Fatalf("b1 found at %+v, want its row in the root", h)
	}
	tr.reads = nil
	snap := newSnap()
	snap.ID, snap.SequenceNumber = 100, 8
	res, err := CommitColumns(root, tr.read, snap, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.reads) != 0 || len(res.Leaves) != 0 {
		t.Errorf("read %v, wrote %d leaves: want neither", tr.reads, len(res.Leaves))
	}
	var rep, mod *v4manifest.TrackedFile
	for i := range res.Root {
		if r := &res.Root[i]; r.Location == loc("b1") {
			switch r.Tracking.Status {
			case v4manifest.StatusReplaced:
				rep = r
			case v4manifest.StatusModified:
				mod = r
			}
		}
	}
	if rep == nil || mod == nil {
		t.Fatalf("root %v: want b1 REPLACED and MODIFIED", statuses(res.Root))
	}
	if *rep.Tracking.SnapshotID != 100 || len(rep.ColumnFiles) != 1 {
		t.Errorf("replaced row %+v", rep.Tracking)
	}
	if *mod.Tracking.SequenceNumber != 8 || *mod.Tracking.LatestColumnFileSnapshotID != 100 || mod.Tracking.FirstRowID == nil || len(mod.ColumnFiles) != 2 {
		t.Errorf("modified row %+v with %d column files", mod.Tracking, len(mod.ColumnFiles))
	}
	if live := liveFiles(t, tr, res); live[loc("b1")].Tracking.Status != v4manifest.StatusModified || len(live) != len(liveFiles(t, tr, first)) {
		t.Errorf("live files %d, b1 %v", len(live), live[loc("b1")].Tracking.Status)
	}
}

// TestCommitColumnsMovesRootRowsToALeaf: when the root would hold more
// than maxRootData data rows, the commit moves them all, carried forward,
// into one new leaf.
func TestCommitColumnsMovesRootRowsToALeaf(t *testing.T) {
	tr, root := threeLeaves()
	for i := range maxRootData {
		r := data(fmt.Sprintf("r%d", i), 5)
		r.Tracking = v4manifest.Tracking{Status: v4manifest.StatusModified, SnapshotID: ptrTo(int64(1)), SequenceNumber: ptrTo(int64(2)),
			FileSequenceNumber: ptrTo(int64(1)), FirstRowID: ptrTo(int64(1000 + 5*i))}
		root = append(root, r)
	}
	before := liveFiles(t, tr, &Result{Root: root})
	c := columnsFor(t, tr, root, []validation.ColumnFile{colFile("b1", "cf1", 1)})
	res, err := CommitColumns(root, tr.read, newSnap(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Leaves) != 1 || len(res.Leaves[0].Rows) != maxRootData+1 {
		t.Fatalf("leaves %d: want one with the %d root rows and the MODIFIED one", len(res.Leaves), maxRootData)
	}
	for _, rr := range res.Root {
		if rr.ContentType == v4manifest.ContentData {
			t.Fatalf("%s is still in the root", rr.Location)
		}
	}
	if r := rowIn(t, res, "r3"); r.Tracking.Status != v4manifest.StatusExisting || *r.Tracking.FirstRowID != 1015 {
		t.Errorf("moved row %+v, want EXISTING with its row id", r.Tracking)
	}
	if live := liveFiles(t, tr, res); len(live) != len(before) || live[loc("b1")].Tracking.Status != v4manifest.StatusModified {
		t.Errorf("live files %d", len(live))
	}
}

// TestCommitColumnsRetiresAllBaseLeaf: when every live row of a leaf is a
// base, the leaf is neither masked whole nor rewritten: its root row is
// DELETED and the bases' REPLACED and MODIFIED rows go in the root, so the
// root is the only manifest written.
func TestCommitColumnsRetiresAllBaseLeaf(t *testing.T) {
	tr, root := threeLeaves()
	f2 := colFile("b2", "cf1", 1)
	f2.RecordCount = 40
	c := columnsFor(t, tr, root, []validation.ColumnFile{colFile("b1", "cf1", 1), f2})
	before := liveFiles(t, tr, &Result{Root: root})
	res, err := CommitColumns(root, tr.read, newSnap(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Leaves) != 0 {
		t.Fatalf("%d leaves written, want none", len(res.Leaves))
	}
	if got := res.Root[1]; got.Location != root[2].Location || got.Tracking.Status != v4manifest.StatusDeleted || *got.Tracking.SnapshotID != 99 {
		t.Errorf("leaf b's root row %v %+v, want it DELETED in this snapshot", got.Location, got.Tracking)
	}
	pairs := map[string][]v4manifest.Status{}
	for _, r := range res.Root {
		if r.ContentType == v4manifest.ContentData {
			pairs[r.Location] = append(pairs[r.Location], r.Tracking.Status)
		}
	}
	for _, b := range []string{"b1", "b2"} {
		if got := pairs[loc(b)]; !slices.Contains(got, v4manifest.StatusReplaced) || !slices.Contains(got, v4manifest.StatusModified) {
			t.Errorf("%s rows in the root %v, want REPLACED and MODIFIED", b, got)
		}
	}
	live := liveFiles(t, tr, res)
	if len(live) != len(before) || live[loc("b2")].Tracking.Status != v4manifest.StatusModified || live[loc("b2")].Tracking.FirstRowID == nil {
		t.Errorf("live files %d (want %d), b2 %+v", len(live), len(before), live[loc("b2")].Tracking)
	}
}

package v4commit

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
	// (MODIFIED, replaced_positions = dv = {0}) and a new leaf holds the
	// MODIFIED row.
	if got, want := statuses(res.Root), []v4manifest.Status{0, 4, 0, 0, 1}; !slices.Equal(got, want) {
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
	if len(res.Leaves) != 1 || res.Leaves[0].Parent != "" || res.Leaves[0].RootIndex != 4 {
		t.Fatalf("leaves %+v: want one new leaf", res.Leaves)
	}
	rows := res.Leaves[0].Rows
	if got, want := statuses(rows), []v4manifest.Status{4}; !slices.Equal(got, want) {
		t.Fatalf("leaf statuses %v, want %v", got, want)
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
	mod := res.Leaves[0].Rows[0]
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
	for _, cf := range res.Leaves[0].Rows[0].ColumnFiles {
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
	want := slices.Repeat([]v4manifest.Status{v4manifest.StatusDeleted}, mergeSmallAt)
	want = append(want, v4manifest.StatusModified, v4manifest.StatusAdded)
	if got := statuses(res.Root); !slices.Equal(got, want) {
		t.Fatalf("root statuses %v, want %v", got, want)
	}
	if rows := res.Leaves[0].Rows; len(rows) != mergeSmallAt+1 {
		t.Fatalf("new leaf holds %d rows, want the %d folded ones and the MODIFIED one", len(rows), mergeSmallAt)
	}
	if live := liveFiles(t, tr, res); len(live) != mergeSmallAt+2 || live[loc("b1")].Tracking.Status != v4manifest.StatusModified {
		t.Fatalf("live files %v", live)
	}
}

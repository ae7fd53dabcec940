package v4tree

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// threeLeaves is a root of three data leaves a, b, c with two files each,
// one dead root row and one delete leaf.
func threeLeaves() (*tree, []v4manifest.TrackedFile) {
	tr := newTree()
	dead := tr.addLeaf("gone.parquet", v4manifest.ContentDataManifest)
	dead.Tracking.Status = v4manifest.StatusDeleted
	del := data("eq.parquet", 3)
	del.ContentType = v4manifest.ContentEqualityDeletes
	root := []v4manifest.TrackedFile{
		tr.addLeaf("a.parquet", v4manifest.ContentDataManifest, data("a1", 10), data("a2", 20)),
		dead,
		tr.addLeaf("b.parquet", v4manifest.ContentDataManifest, data("b1", 30), data("b2", 40)),
		tr.addLeaf("c.parquet", v4manifest.ContentDataManifest, data("c1", 50), data("c2", 60)),
		tr.addLeaf("d.parquet", v4manifest.ContentDeleteManifest, del),
	}
	return tr, root
}

func TestCommitFiles(t *testing.T) {
	dv := v4manifest.DeletionVector{Location: tableLoc + "/data/dv.puffin", Offset: 4, SizeInBytes: 40, Cardinality: 5}
	eq := data("eq2.parquet", 2)
	eq.ContentType = v4manifest.ContentEqualityDeletes
	for _, tc := range []struct {
		name string
		in   Files
		// want
		op         table.Operation
		live       []string // live data and delete files after the commit
		rootStatus []v4manifest.Status
		reads      int
		leafRows   [][]v4manifest.Status // rows of each new leaf
		summary    map[string]string     // "" for a key left out (a zero counter)
		addedRows  int64
	}{{
		name: "append", in: Files{FirstRowID: 1000, Added: []v4manifest.TrackedFile{data("n1", 5), data("n2", 6)}},
		op:         table.OpAppend,
		live:       []string{"a1", "a2", "b1", "b2", "c1", "c2", "eq.parquet", "n1", "n2"},
		rootStatus: []v4manifest.Status{0, 0, 0, 0, 1},
		leafRows:   [][]v4manifest.Status{{1, 1}},
		summary:    map[string]string{"added-data-files": "2", "added-records": "11", "deleted-data-files": ""},
		addedRows:  11,
	}, {
		name: "append in bounded leaves", in: Files{FirstRowID: 0, MaxLeafEntries: 2,
			Added: []v4manifest.TrackedFile{data("n1", 1), data("n2", 1), data("n3", 1)}},
		op:         table.OpAppend,
		live:       []string{"a1", "a2", "b1", "b2", "c1", "c2", "eq.parquet", "n1", "n2", "n3"},
		rootStatus: []v4manifest.Status{0, 0, 0, 0, 1, 1},
		leafRows:   [][]v4manifest.Status{{1, 1}, {1}},
		summary:    map[string]string{"added-data-files": "3", "added-records": "3"},
		addedRows:  3,
	}, {
		name: "remove rewrites only the leaf that holds the file", in: Files{Remove: []string{loc("b2")}},
		op:         table.OpDelete,
		live:       []string{"a1", "a2", "b1", "c1", "c2", "eq.parquet"},
		rootStatus: []v4manifest.Status{0, 2, 1, 0, 0},
		reads:      4,
		leafRows:   [][]v4manifest.Status{{0, 2}},
		summary:    map[string]string{"deleted-data-files": "1", "deleted-records": "40", "removed-delete-files": ""},
	}, {
		name: "remove a delete file", in: Files{Remove: []string{loc("eq.parquet")}, Added: []v4manifest.TrackedFile{data("n1", 5)}},
		op:         table.OpAppend, // as before the move: only removed data files make an overwrite
		live:       []string{"a1", "a2", "b1", "b2", "c1", "c2", "n1"},
		rootStatus: []v4manifest.Status{0, 0, 0, 2, 1, 1},
		reads:      4,
		leafRows:   [][]v4manifest.Status{{2}, {1}},
		summary:    map[string]string{"removed-delete-files": "1", "deleted-data-files": ""},
		addedRows:  5,
	}, {
		name: "deletion vector reads data leaves only", in: Files{DeletionVectors: map[string]v4manifest.DeletionVector{loc("c1"): dv}},
		op:         table.OpDelete,
		live:       []string{"a1", "a2", "b1", "b2", "c1", "c2", "eq.parquet"},
		rootStatus: []v4manifest.Status{0, 0, 2, 1, 0},
		reads:      3,
		leafRows:   [][]v4manifest.Status{{3, 4, 0}},
		summary:    map[string]string{"changed-deletion-vectors": "1", "added-position-deletes": "5"},
	}, {
		name: "equality deletes with an append overwrite", in: Files{Added: []v4manifest.TrackedFile{data("n1", 5)}, EqualityDeletes: []v4manifest.TrackedFile{eq}},
		op:         table.OpOverwrite,
		live:       []string{"a1", "a2", "b1", "b2", "c1", "c2", "eq.parquet", "eq2.parquet", "n1"},
		rootStatus: []v4manifest.Status{0, 0, 0, 0, 1, 1},
		leafRows:   [][]v4manifest.Status{{1}, {1}},
		summary:    map[string]string{"added-delete-files": "1", "added-records": "5"},
		addedRows:  5,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			tr, root := threeLeaves()
			res, err := CommitFiles(root, tr.read, newSnap(), tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if res.Operation != tc.op {
				t.Errorf("operation %s, want %s", res.Operation, tc.op)
			}
			if got := statuses(res.Root); !slices.Equal(got, tc.rootStatus) {
				t.Errorf("root statuses %v, want %v", got, tc.rootStatus)
			}
			if len(tr.reads) != tc.reads {
				t.Errorf("read %d leaves (%v), want %d", len(tr.reads), tr.reads, tc.reads)
			}
			if len(res.Leaves) != len(tc.leafRows) {
				t.Fatalf("%d new leaves, want %d", len(res.Leaves), len(tc.leafRows))
			}
			for i, l := range res.Leaves {
				if got := statuses(l.Rows); !slices.Equal(got, tc.leafRows[i]) {
					t.Errorf("leaf %d statuses %v, want %v", i, got, tc.leafRows[i])
				}
				rr := res.Root[l.RootIndex]
				if rr.Location != l.Location || rr.Tracking.Status != v4manifest.StatusAdded || *rr.Tracking.SnapshotID != 99 || rr.RecordCount != int64(len(l.Rows)) {
					t.Errorf("leaf %d root row %+v", i, rr)
				}
			}
			var live []string
			for l := range liveFiles(t, tr, res) {
				live = append(live, l[len(tableLoc+"/data/"):])
			}
			slices.Sort(live)
			if !slices.Equal(live, tc.live) {
				t.Errorf("live %v, want %v", live, tc.live)
			}
			for k, v := range tc.summary {
				if res.Summary[k] != v {
					t.Errorf("summary %s = %q, want %q", k, res.Summary[k], v)
				}
			}
			if res.AddedRows != tc.addedRows {
				t.Errorf("added rows %d, want %d", res.AddedRows, tc.addedRows)
			}
		})
	}
}

func TestCommitFilesTracking(t *testing.T) {
	tr, root := threeLeaves()
	dv := v4manifest.DeletionVector{Location: tableLoc + "/data/dv.puffin", SizeInBytes: 1, Cardinality: 3}
	res, err := CommitFiles(root, tr.read, newSnap(), Files{
		FirstRowID: 500, MaxLeafEntries: 1, Added: []v4manifest.TrackedFile{data("n1", 7), data("n2", 8)},
		Remove: []string{loc("a1")}, DeletionVectors: map[string]v4manifest.DeletionVector{loc("a2"): dv},
	})
	if err != nil {
		t.Fatal(err)
	}
	rewritten, n1, n2 := res.Leaves[0], res.Leaves[1], res.Leaves[2]
	if rr := res.Root[n2.RootIndex]; rr.Tracking.FirstRowID == nil || *rr.Tracking.FirstRowID != 507 {
		t.Errorf("second added leaf's first row id %v, want 507", rr.Tracking.FirstRowID)
	}
	for _, r := range append(n1.Rows, n2.Rows...) {
		if *r.Tracking.SequenceNumber != 7 || *r.Tracking.FileSequenceNumber != 7 || *r.Tracking.SnapshotID != 99 {
			t.Errorf("added row tracking %+v", r.Tracking)
		}
	}
	if fr := *n2.Rows[0].Tracking.FirstRowID; fr != 507 {
		t.Errorf("n2 first row id %d, want 507", fr)
	}
	gone, replaced, mod := rewritten.Rows[0], rewritten.Rows[1], rewritten.Rows[2]
	if gone.Tracking.Status != v4manifest.StatusDeleted || *gone.Tracking.SnapshotID != 99 || *gone.Tracking.SequenceNumber != 1 {
		t.Errorf("removed row tracking %+v", gone.Tracking)
	}
	if replaced.Tracking.Status != v4manifest.StatusReplaced || *replaced.Tracking.SnapshotID != 99 {
		t.Errorf("replaced row tracking %+v", replaced.Tracking)
	}
	if mod.Tracking.Status != v4manifest.StatusModified || *mod.Tracking.DVSnapshotID != 99 || *mod.Tracking.SequenceNumber != 1 ||
		mod.DeletionVector == nil || !reflect.DeepEqual(*mod.DeletionVector, dv) {
		t.Errorf("modified row %+v dv %+v", mod.Tracking, mod.DeletionVector)
	}
	if old := res.Root[0]; old.Tracking.Status != v4manifest.StatusDeleted || *old.Tracking.SnapshotID != 99 {
		t.Errorf("retired leaf row %+v", old.Tracking)
	}
	mi := res.Root[rewritten.RootIndex].ManifestInfo
	if mi == nil || mi.DeletedFiles != 1 || mi.ReplacedFiles != 1 || mi.ModifiedFiles != 1 || mi.DeletedRows != 10 {
		t.Errorf("manifest info %+v", mi)
	}
	res.SetLeafSize(1, 1234)
	if res.Root[n1.RootIndex].FileSizeInBytes != 1234 {
		t.Error("SetLeafSize did not reach the root row")
	}
}

func TestCommitFilesErrors(t *testing.T) {
	dv := func(card int64) map[string]v4manifest.DeletionVector {
		return map[string]v4manifest.DeletionVector{loc("b1"): {Location: loc("dv"), SizeInBytes: 1, Cardinality: card}}
	}
	for _, tc := range []struct {
		name    string
		in      Files
		fail    error
		reason  string // a *validation.Error with this reason
		request bool   // a *RequestError
	}{
		{name: "unknown remove", in: Files{Remove: []string{loc("zz")}}, reason: validation.ReasonUnknownDataFile},
		{name: "one of two removes unknown", in: Files{Remove: []string{loc("a1"), loc("gone-file")}}, reason: validation.ReasonUnknownDataFile},
		{name: "deletion vector on an unknown file", in: Files{DeletionVectors: map[string]v4manifest.DeletionVector{loc("zz"): {}}}, reason: validation.ReasonUnknownDataFile},
		{name: "deletion vector on a delete file", in: Files{DeletionVectors: map[string]v4manifest.DeletionVector{loc("eq.parquet"): {}}}, reason: validation.ReasonUnknownDataFile},
		{name: "cardinality over the record count", in: Files{DeletionVectors: dv(31)}, request: true},
		{name: "leaf read fails", in: Files{Remove: []string{loc("a1")}}, fail: errRead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, root := threeLeaves()
			tr.fail = tc.fail
			_, err := CommitFiles(root, tr.read, newSnap(), tc.in)
			var ve *validation.Error
			var re *RequestError
			switch {
			case err == nil:
				t.Fatal("no error")
			case tc.fail != nil && err != tc.fail:
				t.Errorf("got %v, want the reader's error unchanged", err)
			case tc.reason != "" && (!errors.As(err, &ve) || ve.Reason != tc.reason):
				t.Errorf("got %v, want reason %s", err, tc.reason)
			case tc.request && !errors.As(err, &re):
				t.Errorf("got %T %v, want a *RequestError", err, err)
			}
		})
	}
	// A cardinality equal to the record count is fine.
	tr, root := threeLeaves()
	if _, err := CommitFiles(root, tr.read, newSnap(), Files{DeletionVectors: dv(30)}); err != nil {
		t.Errorf("cardinality = record count: %v", err)
	}
}

func TestCommitFilesMessagesUseName(t *testing.T) {
	tr, root := threeLeaves()
	snap := newSnap()
	snap.Name = func(string) string { return "<named>" }
	_, err := CommitFiles(root, tr.read, snap, Files{Remove: []string{"s3://elsewhere/secret/x.parquet"}})
	if err == nil || err.Error() != "remove-files: <named> is not a live file of the table" {
		t.Errorf("message %v", err)
	}
}

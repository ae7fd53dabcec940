package v4tree

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// applied stores res's new leaves in tr (renamed for commit n: newSnap
// names every commit's leaves alike) and returns the live rows of its
// root: the tree the next commit starts from.
func applied(tr *tree, res *Result, n int) []v4manifest.TrackedFile {
	var root []v4manifest.TrackedFile
	for _, rr := range res.Root {
		if rr.Tracking.Status.Live() {
			root = append(root, rr)
		}
	}
	for _, l := range res.Leaves {
		name := strings.Replace(l.Location, "/new-", fmt.Sprintf("/c%d-new-", n), 1)
		tr.leaves[name] = l.Rows
		for i := range root {
			if root[i].Location == l.Location {
				root[i].Location = name
			}
		}
	}
	return root
}

// TestSummaryTotals commits one of each v4 commit kind in a chain and
// checks, after each, that the totals made from the parent's totals plus
// the commit's delta equal those of a full scan of the new tree, and the
// counters the commit reports.
func TestSummaryTotals(t *testing.T) {
	tr, root := threeLeaves()
	leafRows := func(root []v4manifest.TrackedFile) []v4manifest.TrackedFile {
		return slices.Collect(maps.Values(liveFiles(t, tr, &Result{Root: root})))
	}
	totals := Totals(leafRows(root))
	if want := map[string]int64{SummaryTotalRecords: 210, SummaryTotalDataFiles: 6, SummaryTotalDeleteFiles: 1,
		SummaryTotalFilesSize: 700, SummaryTotalPositionDeletes: 0, SummaryTotalEqualityDeletes: 3}; !maps.Equal(totals, want) {
		t.Fatalf("totals of the start %v, want %v", totals, want)
	}
	dv := func(card, size int64) v4manifest.DeletionVector {
		return v4manifest.DeletionVector{Location: loc("dv.puffin"), Offset: 4, SizeInBytes: size, Cardinality: card}
	}
	eq := data("eq2.parquet", 2)
	eq.ContentType = v4manifest.ContentEqualityDeletes
	steps := []struct {
		name   string
		commit func(root []v4manifest.TrackedFile) (*Result, error)
		want   map[string]string // counters and totals; "" for a key left out
	}{{
		name: "append",
		commit: func(root []v4manifest.TrackedFile) (*Result, error) {
			return CommitFiles(root, tr.read, newSnap(), Files{FirstRowID: 1000, Added: []v4manifest.TrackedFile{data("n1", 5), data("n2", 6)}})
		},
		want: map[string]string{"added-data-files": "2", "added-records": "11", "added-files-size": "200", "deleted-data-files": "",
			"total-records": "221", "total-data-files": "8", "total-files-size": "900"},
	}, {
		name: "deletion vector",
		commit: func(root []v4manifest.TrackedFile) (*Result, error) {
			return CommitFiles(root, tr.read, newSnap(), Files{DeletionVectors: map[string]v4manifest.DeletionVector{loc("c1"): dv(5, 40)}})
		},
		want: map[string]string{"added-dvs": "1", "added-delete-files": "1", "added-position-deletes": "5", "added-files-size": "40",
			"total-delete-files": "2", "total-position-deletes": "5", "total-files-size": "940", "total-records": "221"},
	}, {
		name: "deletion vector replaced",
		commit: func(root []v4manifest.TrackedFile) (*Result, error) {
			return CommitFiles(root, tr.read, newSnap(), Files{DeletionVectors: map[string]v4manifest.DeletionVector{loc("c1"): dv(7, 50)}})
		},
		want: map[string]string{"added-dvs": "1", "removed-dvs": "1", "added-position-deletes": "7", "removed-position-deletes": "5",
			"added-files-size": "50", "removed-files-size": "40", "total-delete-files": "2", "total-position-deletes": "7", "total-files-size": "950"},
	}, {
		name: "column file",
		commit: func(root []v4manifest.TrackedFile) (*Result, error) {
			f := colFile("c1", "cf1", 1)
			f.RecordCount = 50
			return CommitColumns(root, tr.read, newSnap(), columnsFor(t, tr, root, []validation.ColumnFile{f}))
		},
		want: map[string]string{"added-files-size": "9", "removed-files-size": "", "added-data-files": "", "added-column-files": "1",
			"total-data-files": "8", "total-records": "221", "total-files-size": "959"},
	}, {
		name: "column file supersedes the last",
		commit: func(root []v4manifest.TrackedFile) (*Result, error) {
			f := colFile("c1", "cf2", 1)
			f.FileSizeInBytes, f.RecordCount = 12, 50
			return CommitColumns(root, tr.read, newSnap(), columnsFor(t, tr, root, []validation.ColumnFile{f}))
		},
		want: map[string]string{"added-files-size": "12", "removed-files-size": "9", "retired-column-files": "1", "total-files-size": "962"},
	}, {
		name: "compaction folds a base, its column file and its DV",
		commit: func(root []v4manifest.TrackedFile) (*Result, error) {
			return CommitCompaction(root, tr.read, newSnap(), Compaction{Folds: []Fold{{Base: loc("c1"), ColumnFiles: []string{loc("cf2")},
				DeletionVector: ptrTo(dv(7, 50)), New: v4manifest.TrackedFile{Location: loc("c1-folded"), RecordCount: 43, FileSizeInBytes: 80}}}})
		},
		want: map[string]string{"added-data-files": "1", "deleted-data-files": "1", "added-records": "43", "deleted-records": "50",
			"removed-dvs": "1", "removed-position-deletes": "7", "added-files-size": "80", "removed-files-size": "162",
			"total-records": "214", "total-data-files": "8", "total-delete-files": "1", "total-position-deletes": "0", "total-files-size": "880"},
	}, {
		name: "equality deletes",
		commit: func(root []v4manifest.TrackedFile) (*Result, error) {
			return CommitFiles(root, tr.read, newSnap(), Files{EqualityDeletes: []v4manifest.TrackedFile{eq}})
		},
		want: map[string]string{"added-equality-delete-files": "1", "added-delete-files": "1", "added-equality-deletes": "2",
			"total-delete-files": "2", "total-equality-deletes": "5", "total-files-size": "980"},
	}, {
		name: "remove files",
		commit: func(root []v4manifest.TrackedFile) (*Result, error) {
			return CommitFiles(root, tr.read, newSnap(), Files{Remove: []string{loc("a1"), loc("eq.parquet")}})
		},
		want: map[string]string{"deleted-data-files": "1", "deleted-records": "10", "removed-equality-delete-files": "1",
			"removed-delete-files": "1", "removed-equality-deletes": "3", "removed-files-size": "200",
			"total-records": "204", "total-data-files": "7", "total-delete-files": "1", "total-equality-deletes": "2", "total-files-size": "780"},
	}}
	for i, st := range steps {
		res, err := st.commit(root)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if !res.AddTotals(totals) {
			t.Fatalf("%s: totals refused", st.name)
		}
		root = applied(tr, res, i)
		scanned := Totals(leafRows(root))
		for k, v := range scanned {
			if res.Summary[k] != strconv.FormatInt(v, 10) {
				t.Errorf("%s: %s = %q from the delta, %d from a scan", st.name, k, res.Summary[k], v)
			}
		}
		for k, v := range st.want {
			if res.Summary[k] != v {
				t.Errorf("%s: %s = %q, want %q", st.name, k, res.Summary[k], v)
			}
		}
		totals = scanned
	}
}

// TestSummaryCallerProperties: the caller's snapshot-properties are kept,
// but never the keys the server computes.
func TestSummaryCallerProperties(t *testing.T) {
	tr, root := threeLeaves()
	res, err := CommitFiles(root, tr.read, newSnap(), Files{FirstRowID: 0, Added: []v4manifest.TrackedFile{data("n1", 5)},
		SnapshotProperties: map[string]string{"who": "me", "operation": "delete", "total-records": "1", "added-records": "99",
			"changed-deletion-vectors": "7", "spark.app.id": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.AddTotals(nil) {
		t.Fatal("totals refused")
	}
	want := map[string]string{"who": "me", "spark.app.id": "x", "total-records": "5", "added-records": "5", "changed-deletion-vectors": "0", "removed-files-size": ""}
	for k, v := range want {
		if res.Summary[k] != v {
			t.Errorf("%s = %q, want %q", k, res.Summary[k], v)
		}
	}
	if _, ok := res.Summary["operation"]; ok {
		t.Error("the caller set operation in the summary")
	}
}

// TestParentTotals: a parent without every total (or with a bad one) gives
// none; totals that would go negative are refused, not written.
func TestParentTotals(t *testing.T) {
	full := map[string]string{"total-records": "5", "total-data-files": "1", "total-delete-files": "0", "total-files-size": "10",
		"total-position-deletes": "0", "total-equality-deletes": "0"}
	if got, ok := ParentTotals(full); !ok || got[SummaryTotalRecords] != 5 {
		t.Errorf("full parent: %v %v", got, ok)
	}
	partial := maps.Clone(full)
	delete(partial, "total-files-size")
	if _, ok := ParentTotals(partial); ok {
		t.Error("a parent without total-files-size gave totals")
	}
	partial["total-files-size"] = "ten"
	if _, ok := ParentTotals(partial); ok {
		t.Error("a parent with a bad total gave totals")
	}
	res := &Result{Delta: Delta{DeletedDataFiles: 2}}
	if res.AddTotals(map[string]int64{SummaryTotalDataFiles: 1}) {
		t.Error("a negative total was accepted")
	}
	if _, ok := res.Summary["total-data-files"]; ok {
		t.Errorf("summary %v holds a made-up total", res.Summary)
	}
}

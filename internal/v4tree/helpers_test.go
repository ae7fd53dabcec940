package v4tree

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

const tableLoc = "s3://bucket/wh/ns/t"

// tree is an in-memory manifest tree: leaves by location, and which leaves
// the commit read.
type tree struct {
	leaves map[string][]v4manifest.TrackedFile
	mu     sync.Mutex // guards reads: a commit reads leaves concurrently
	reads  []string
	fail   error // returned by every read when set
}

func newTree() *tree { return &tree{leaves: map[string][]v4manifest.TrackedFile{}} }

// read is the tree's LeafReader; it returns copies, as a real read would.
func (tr *tree) read(rr *v4manifest.TrackedFile, cols []int) ([]v4manifest.TrackedFile, error) {
	tr.mu.Lock()
	tr.reads = append(tr.reads, rr.Location)
	tr.mu.Unlock()
	if tr.fail != nil {
		return nil, tr.fail
	}
	rows, ok := tr.leaves[rr.Location]
	if !ok {
		return nil, fmt.Errorf("no leaf %s", rr.Location)
	}
	return unmasked(rr, rows)
}

// unmasked is what a real leaf read returns for root row rr: copies of the
// rows with their positions, those rr's manifest deletion vector masks
// left out.
func unmasked(rr *v4manifest.TrackedFile, rows []v4manifest.TrackedFile) ([]v4manifest.TrackedFile, error) {
	masked, err := rr.MaskedPositions()
	if err != nil {
		return nil, err
	}
	out := make([]v4manifest.TrackedFile, 0, len(rows))
	for i, r := range rows {
		if !masked[int64(i)] {
			r.Pos = int64(i)
			out = append(out, r)
		}
	}
	return out, nil
}

// addLeaf stores rows as a leaf and returns its live root row.
func (tr *tree) addLeaf(name string, content v4manifest.ContentType, rows ...v4manifest.TrackedFile) v4manifest.TrackedFile {
	loc := tableLoc + "/metadata/" + name
	tr.leaves[loc] = rows
	return v4manifest.TrackedFile{
		Tracking:    v4manifest.Tracking{Status: v4manifest.StatusExisting, SnapshotID: ptrTo(int64(1)), SequenceNumber: ptrTo(int64(1)), FileSequenceNumber: ptrTo(int64(1))},
		ContentType: content, FormatVersion: 4, Location: loc, FileFormat: "parquet", RecordCount: int64(len(rows)),
	}
}

// data is a live data row with explicit tracking at sequence number 1.
func data(name string, records int64) v4manifest.TrackedFile {
	return v4manifest.TrackedFile{
		Tracking: v4manifest.Tracking{Status: v4manifest.StatusExisting, SnapshotID: ptrTo(int64(1)), SequenceNumber: ptrTo(int64(1)),
			FileSequenceNumber: ptrTo(int64(1)), FirstRowID: ptrTo(int64(0))},
		ContentType: v4manifest.ContentData, FormatVersion: 4, Location: tableLoc + "/data/" + name, FileFormat: "parquet",
		RecordCount: records, FileSizeInBytes: 100,
	}
}

func loc(name string) string { return tableLoc + "/data/" + name }

// newSnap is the snapshot under test: id 99, sequence number 7, leaves
// named new-0, new-1, ...
func newSnap() Snapshot {
	n := 0
	return Snapshot{ID: 99, SequenceNumber: 7, TableLocation: tableLoc, LeafLocation: func() string {
		l := fmt.Sprintf("%s/metadata/new-%d.parquet", tableLoc, n)
		n++
		return l
	}}
}

// liveFiles resolves a result's tree (new leaves from res, carried leaves
// from tr, files in the root itself) and returns its live rows by location; it fails the test when
// a location is live twice.
func liveFiles(t *testing.T, tr *tree, res *Result) map[string]v4manifest.TrackedFile {
	t.Helper()
	written := map[string][]v4manifest.TrackedFile{}
	for _, l := range res.Leaves {
		written[l.Location] = l.Rows
	}
	out := map[string]v4manifest.TrackedFile{}
	for _, rr := range res.Root {
		if !rr.Tracking.Status.Live() {
			continue
		}
		var rows []v4manifest.TrackedFile
		if isLeaf(&rr) {
			var ok bool
			if rows, ok = written[rr.Location]; !ok {
				rows = tr.leaves[rr.Location]
			}
			var err error
			if rows, err = unmasked(&rr, rows); err != nil {
				t.Fatal(err)
			}
		} else {
			rows = []v4manifest.TrackedFile{rr} // a file in the root itself
		}
		for _, r := range rows {
			if !r.Tracking.Status.Live() {
				continue
			}
			if _, dup := out[r.Location]; dup {
				t.Fatalf("%s is live twice", r.Location)
			}
			out[r.Location] = r
		}
	}
	return out
}

// statuses lists the statuses of rows, for compact comparisons.
func statuses(rows []v4manifest.TrackedFile) []v4manifest.Status {
	out := make([]v4manifest.Status, len(rows))
	for i, r := range rows {
		out[i] = r.Tracking.Status
	}
	return out
}

var errRead = errors.New("leaf store unavailable")

// columnsFor finds and checks the bases of files in the tree: the Columns
// of a column commit, without stats or sort orders.
func columnsFor(t *testing.T, tr *tree, root []v4manifest.TrackedFile, files []validation.ColumnFile) Columns {
	t.Helper()
	byBase := GroupByBase(files)
	found, deletes, err := FindBases(root, tr.read, byBase)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CheckBases(byBase, found); err != nil {
		t.Fatal(err)
	}
	return Columns{ByBase: byBase, Found: found, Deletes: deletes}
}

// rowIn returns the live row of file base in res: in the root itself or in
// one of the leaves res writes.
func rowIn(t *testing.T, res *Result, base string) v4manifest.TrackedFile {
	t.Helper()
	rows := slices.Clone(res.Root)
	for _, l := range res.Leaves {
		rows = append(rows, l.Rows...)
	}
	for _, r := range rows {
		if r.Location == loc(base) && r.ContentType == v4manifest.ContentData && r.Tracking.Status.Live() {
			return r
		}
	}
	t.Fatalf("no live row of %s in the result", base)
	return v4manifest.TrackedFile{}
}

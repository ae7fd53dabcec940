// Package v4tree is the pure part of a v4 snapshot commit: the rewrite of
// the manifest tree. Given the root rows of the current snapshot, a function
// that reads a leaf and the requested change, it decides which leaves are
// carried unchanged, which are rewritten and which are new, and returns the
// rows of the new leaves, the new root and the snapshot summary.
//
// It does no I/O of its own: leaves are read through the caller's
// LeafReader, and writing the leaves and the root the Result lists is the
// caller's job. Errors a client caused are *RequestError (a bad request) or
// *validation.Error (a rejection with a reason); an error of the LeafReader
// is returned unchanged; anything else is an internal fault.
package v4tree

import (
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/mumbling"
	"github.com/lakehold/catalog/v4manifest"
)

// formatV4 is the format version written in the rows of new leaves.
const formatV4 = 4

// LeafReader reads the rows of the leaf that root row rr references, with
// what the rows inherit from rr applied. cols, when not nil, projects the
// read to those v4manifest field ids (other fields stay zero). Its errors
// are returned by this package unchanged. A commit reads a few leaves at
// a time (readFanOut), so it must be safe for concurrent use.
type LeafReader func(rr *v4manifest.TrackedFile, cols []int) ([]v4manifest.TrackedFile, error)

// Snapshot identifies the snapshot a commit builds.
type Snapshot struct {
	ID             int64
	SequenceNumber int64
	// TableLocation is the table's location; row locations are absolute.
	TableLocation string
	// LeafLocation names the next leaf this commit writes; it is called
	// once per new leaf, in the order of Result.Leaves.
	LeafLocation func() string
	// Name names a file for a client message without a server path; when
	// nil, the location relative to the table is used.
	Name func(loc string) string
}

func (s *Snapshot) name(loc string) string {
	if s.Name != nil {
		return s.Name(loc)
	}
	return v4manifest.Relativize(s.TableLocation, loc)
}

// Leaf is a leaf manifest the commit writes.
type Leaf struct {
	Location string
	Content  v4manifest.Content
	Rows     []v4manifest.TrackedFile
	// RootIndex is the index of the leaf's row in Result.Root.
	RootIndex int
	// Parent is the location (as in the root) of the leaf this one
	// rewrites, "" for a leaf of new files. A rewrite names only files its
	// parent names: the base-file index relies on it.
	Parent string
}

// Result is the rewritten manifest tree of one commit.
type Result struct {
	// Leaves are the new leaves to write before the root.
	Leaves []Leaf
	// Root is the new root manifest's rows, in order. The rows of new
	// leaves have FileSizeInBytes 0 until SetLeafSize is called.
	Root      []v4manifest.TrackedFile
	Operation table.Operation
	Summary   iceberg.Properties
	// AddedRows is the number of rows the commit adds (row lineage).
	AddedRows int64
	// Delta is what the commit changes in the table's live files; the
	// summary's counters are made from it, and AddTotals adds it to the
	// parent's totals.
	Delta Delta
}

// SetLeafSize records the size of leaf i once written.
func (r *Result) SetLeafSize(i int, size int64) {
	r.Root[r.Leaves[i].RootIndex].FileSizeInBytes = size
}

// RequestError is a change that cannot be applied as asked: a bad request.
type RequestError struct{ Message string }

func (e *RequestError) Error() string { return e.Message }

func badRequest(format string, args ...any) error {
	return &RequestError{Message: fmt.Sprintf(format, args...)}
}

// builder gathers the new root of one commit.
type builder struct {
	snap *Snapshot
	res  Result
}

func newBuilder(snap *Snapshot, rootRows int) *builder {
	return &builder{snap: snap, res: Result{Root: make([]v4manifest.TrackedFile, 0, rootRows+2)}}
}

// carry copies a live root row, unchanged, into the new root.
func (b *builder) carry(rr v4manifest.TrackedFile) error {
	cf, err := v4manifest.CarryForward(rr)
	if err != nil {
		return fmt.Errorf("carry forward a root row: %w", err)
	}
	b.res.Root = append(b.res.Root, cf)
	return nil
}

// addLeaf adds a new leaf of the given content holding rows, with its root
// row (ADDED in this snapshot).
func (b *builder) addLeaf(content v4manifest.Content, rows []v4manifest.TrackedFile, firstRowID *int64) error {
	loc := b.snap.LeafLocation()
	row, err := leafRow(loc, rows, b.snap.ID, b.snap.SequenceNumber, firstRowID)
	if err != nil {
		return err
	}
	if content == v4manifest.ContentDeleteLeaf {
		row.ContentType = v4manifest.ContentDeleteManifest
	}
	b.res.Leaves = append(b.res.Leaves, Leaf{Location: loc, Content: content, Rows: rows, RootIndex: len(b.res.Root)})
	b.res.Root = append(b.res.Root, row)
	return nil
}

// replaceLeaf retires leaf root row old (DELETED in this snapshot) and adds
// a rewritten leaf holding rows in its place.
func (b *builder) replaceLeaf(old v4manifest.TrackedFile, rows []v4manifest.TrackedFile) error {
	content := v4manifest.ContentDataLeaf
	if old.ContentType == v4manifest.ContentDeleteManifest {
		content = v4manifest.ContentDeleteLeaf
	}
	b.retire(old)
	if err := b.addLeaf(content, rows, nil); err != nil {
		return err
	}
	b.res.Leaves[len(b.res.Leaves)-1].Parent = old.Location
	return nil
}

// retire drops leaf root row old from the tree (DELETED in this snapshot).
func (b *builder) retire(old v4manifest.TrackedFile) {
	gone := old
	gone.Tracking.Status = v4manifest.StatusDeleted
	gone.Tracking.SnapshotID = ptrTo(b.snap.ID)
	b.res.Root = append(b.res.Root, gone)
}

// mask carries leaf root row old forward with positions added to its
// manifest deletion vector: MODIFIED, with positions as this snapshot's
// replaced_positions. The leaf file and what its rows inherit (the row's
// snapshot id and sequence numbers) are unchanged.
func (b *builder) mask(old v4manifest.TrackedFile, positions []uint32) error {
	row, err := v4manifest.CarryForward(old)
	if err != nil {
		return fmt.Errorf("carry forward a root row: %w", err)
	}
	prev, err := old.MaskedPositions()
	if err != nil {
		return fmt.Errorf("manifest deletion vector of %s: %w", b.snap.name(old.Location), err)
	}
	all := slices.Clone(positions)
	for p := range prev {
		all = append(all, uint32(p))
	}
	dv, err := mumbling.Encode(all)
	if err != nil {
		return err
	}
	delta, err := mumbling.Encode(positions)
	if err != nil {
		return err
	}
	mi := v4manifest.ManifestInfo{}
	if old.ManifestInfo != nil {
		mi = *old.ManifestInfo
	}
	mi.DV = dv
	row.ManifestInfo = &mi
	row.Tracking.Status = v4manifest.StatusModified
	row.Tracking.ReplacedPositions = delta
	row.Tracking.DVSnapshotID = ptrTo(b.snap.ID)
	b.res.Root = append(b.res.Root, row)
	return nil
}

// leafRow is the root row of a leaf written in this commit (size unknown
// until written).
func leafRow(loc string, rows []v4manifest.TrackedFile, snapID, seq int64, firstRowID *int64) (v4manifest.TrackedFile, error) {
	mi := v4manifest.ComputeManifestInfo(rows)
	stats, err := v4manifest.AggregateStats(rows)
	if err != nil {
		return v4manifest.TrackedFile{}, fmt.Errorf("aggregate leaf stats: %w", err)
	}
	return v4manifest.TrackedFile{
		Tracking: v4manifest.Tracking{Status: v4manifest.StatusAdded, SnapshotID: ptrTo(snapID), SequenceNumber: ptrTo(seq),
			FileSequenceNumber: ptrTo(seq), FirstRowID: firstRowID},
		ContentType: v4manifest.ContentDataManifest, FormatVersion: formatV4, Location: loc, FileFormat: "parquet",
		RecordCount: int64(len(rows)), ManifestInfo: &mi, ContentStats: stats,
	}, nil
}

// isLeaf reports whether root row rr references a leaf manifest.
func isLeaf(rr *v4manifest.TrackedFile) bool {
	return rr.ContentType == v4manifest.ContentDataManifest || rr.ContentType == v4manifest.ContentDeleteManifest
}

func ptrTo[T any](v T) *T { return &v }

func deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

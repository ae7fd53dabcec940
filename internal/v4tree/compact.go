package v4tree

import (
	"maps"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// Fold replaces one base data file, its column files and its deletion
// vector by the file a compaction rewrote from them.
type Fold struct {
	// Base is the base file's absolute location.
	Base string
	// ColumnFiles are the absolute locations of the column files the
	// rewrite read; the base must still have exactly these.
	ColumnFiles []string
	// DeletionVector is the one the rewrite applied (nil: none); the base
	// must still have it (same location, offset and size).
	DeletionVector *v4manifest.DeletionVector
	// New is the rewritten file: location, size, record count, format and
	// stats. Its tracking, partition and spec are set here from the base.
	New v4manifest.TrackedFile
}

// Compaction is a commit of folds, validated by the caller.
type Compaction struct {
	Folds []Fold
	// Leaves, when not nil, are the root indexes of the only data leaves
	// that may hold a base or a new location (from the base-file index);
	// the other leaves are carried unread. Nil reads every data leaf.
	Leaves             map[int]bool
	SnapshotProperties map[string]string
}

// ConflictError is a base whose column files or deletion vector changed
// since the rewrite read it: the commit must not land (a 409), and the
// rewrite has to be redone from the new state.
type ConflictError struct{ Message string }

func (e *ConflictError) Error() string { return e.Message }

// compaction is what the leaf rewrite of a compaction found.
type compaction struct {
	folds   map[string]*Fold
	added   map[string]bool // new locations, refused when already live
	found   map[string]bool
	leaves  map[int]bool
	newRows []v4manifest.TrackedFile

	delta            Delta
	columnFiles, dvs int
}

// CommitCompaction rewrites the tree for a compaction: the leaves holding a
// folded base are rewritten with the base DELETED, and the rewritten files
// go into one new leaf, ADDED with the base's first_row_id and data
// sequence number kept (so row ids and equality-delete applicability do not
// change) and no new row ids. It returns a *ConflictError when a base's
// column files or deletion vector are not those the rewrite read, a
// *validation.Error when a base is not a live data file (unknown-data-file)
// or a new file's row count is not the base's minus the deleted rows
// (record-count-mismatch), a *RequestError when a new location is already
// a live file, and the LeafReader's errors unchanged.
func CommitCompaction(root []v4manifest.TrackedFile, read LeafReader, snap Snapshot, c Compaction) (*Result, error) {
	cp := &compaction{folds: map[string]*Fold{}, added: map[string]bool{}, found: map[string]bool{}, leaves: c.Leaves}
	for i := range c.Folds {
		f := &c.Folds[i]
		if cp.folds[f.Base] != nil || cp.added[f.New.Location] {
			return nil, badRequest("compaction: %s is named twice", snap.name(f.Base))
		}
		cp.folds[f.Base] = f
		cp.added[f.New.Location] = true
	}
	b := newBuilder(&snap, len(root))
	if err := cp.rewrite(b, root, read); err != nil {
		return nil, err
	}
	for _, base := range slices.Sorted(maps.Keys(cp.folds)) {
		if !cp.found[base] {
			return nil, &validation.Error{Reason: validation.ReasonUnknownDataFile,
				Message: "compaction: " + snap.name(base) + " is not a live data file of the table"}
		}
	}
	if len(cp.newRows) > 0 {
		if err := b.addLeaf(v4manifest.ContentDataLeaf, cp.newRows, nil); err != nil {
			return nil, err
		}
	}
	b.res.Operation, b.res.Delta = table.OpReplace, cp.delta
	b.res.Summary = cp.summary(c.SnapshotProperties)
	return &b.res, nil
}

// rewrite carries every live root row, rewriting the data leaves (and the
// data rows of the root itself) that hold a folded base (reading only
// cp.leaves when set).
func (cp *compaction) rewrite(b *builder, root []v4manifest.TrackedFile, read LeafReader) error {
	for i := range root {
		rr := &root[i]
		if !rr.Tracking.Status.Live() {
			continue
		}
		if rr.ContentType == v4manifest.ContentData {
			// A file in the root itself: folded there, in place.
			out, hit, err := cp.rewriteLeaf(b.snap, []v4manifest.TrackedFile{*rr})
			if err != nil {
				return err
			}
			if hit {
				b.res.Root = append(b.res.Root, out...)
			} else if err := b.carry(*rr); err != nil {
				return err
			}
			continue
		}
		if rr.ContentType != v4manifest.ContentDataManifest || (cp.leaves != nil && !cp.leaves[i]) {
			if err := b.carry(*rr); err != nil {
				return err
			}
			continue
		}
		rows, err := read(rr, nil)
		if err != nil {
			return err
		}
		out, hit, err := cp.rewriteLeaf(b.snap, rows)
		if err != nil {
			return err
		}
		if !hit {
			err = b.carry(*rr)
		} else {
			err = b.replaceLeaf(*rr, out)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// rewriteLeaf turns each folded base among rows into a DELETED row and
// queues its rewritten file; it reports whether rows held one.
func (cp *compaction) rewriteLeaf(snap *Snapshot, rows []v4manifest.TrackedFile) ([]v4manifest.TrackedFile, bool, error) {
	out := make([]v4manifest.TrackedFile, 0, len(rows))
	hit := false
	for _, r := range rows {
		if !r.Tracking.Status.Live() {
			continue
		}
		if cp.added[r.Location] {
			return nil, false, badRequest("compaction: %s is already a live file of the table", snap.name(r.Location))
		}
		f := cp.folds[r.Location]
		if f == nil || r.ContentType != v4manifest.ContentData {
			cf, err := v4manifest.CarryForward(r)
			if err != nil {
				return nil, false, err
			}
			out = append(out, cf)
			continue
		}
		row, err := cp.fold(snap, r, f)
		if err != nil {
			return nil, false, err
		}
		hit = true
		gone := r
		gone.Tracking.Status = v4manifest.StatusDeleted
		gone.Tracking.SnapshotID = ptrTo(snap.ID)
		out = append(out, gone)
		cp.newRows = append(cp.newRows, row)
	}
	return out, hit, nil
}

// fold checks base r against what the rewrite read and builds the row of
// its rewritten file.
func (cp *compaction) fold(snap *Snapshot, r v4manifest.TrackedFile, f *Fold) (v4manifest.TrackedFile, error) {
	cp.found[r.Location] = true
	if !sameColumnFiles(r.ColumnFiles, f.ColumnFiles) || !sameDV(r.DeletionVector, f.DeletionVector) {
		return v4manifest.TrackedFile{}, &ConflictError{Message: "Commit failed: the column files or deletion vector of " +
			snap.name(r.Location) + " changed after the rewrite read them, nothing was committed; rewrite it again"}
	}
	var deleted int64
	if r.DeletionVector != nil {
		deleted = r.DeletionVector.Cardinality
	}
	if f.New.RecordCount != r.RecordCount-deleted {
		return v4manifest.TrackedFile{}, &validation.Error{Reason: validation.ReasonRecordCountMismatch,
			Message: "compaction: " + snap.name(f.New.Location) + " has " + strconv.FormatInt(f.New.RecordCount, 10) +
				" rows, not the " + strconv.FormatInt(r.RecordCount-deleted, 10) + " live rows of " + snap.name(r.Location)}
	}
	if r.Tracking.FirstRowID == nil || r.Tracking.SequenceNumber == nil {
		return v4manifest.TrackedFile{}, badRequest("compaction: %s has no row lineage to keep", snap.name(r.Location))
	}
	row := r
	row.Location, row.FileFormat, row.FormatVersion = f.New.Location, "parquet", formatV4
	row.RecordCount, row.FileSizeInBytes, row.ContentStats = f.New.RecordCount, f.New.FileSizeInBytes, f.New.ContentStats
	row.ColumnFiles, row.DeletionVector, row.KeyMetadata, row.SplitOffsets = nil, nil, nil, nil
	row.Tracking = v4manifest.Tracking{Status: v4manifest.StatusAdded, SnapshotID: ptrTo(snap.ID),
		SequenceNumber: ptrTo(*r.Tracking.SequenceNumber), FileSequenceNumber: ptrTo(snap.SequenceNumber),
		FirstRowID: ptrTo(*r.Tracking.FirstRowID)}
	cp.delta.removeData(&r)
	cp.delta.addData(&row)
	cp.columnFiles += len(r.ColumnFiles)
	if r.DeletionVector != nil {
		cp.dvs++
	}
	return row, nil
}

func sameColumnFiles(have []v4manifest.ColumnFile, read []string) bool {
	locs := make([]string, len(have))
	for i, cf := range have {
		locs[i] = cf.Location
	}
	slices.Sort(locs)
	want := slices.Sorted(slices.Values(read))
	return slices.Equal(locs, want)
}

func sameDV(have, read *v4manifest.DeletionVector) bool {
	if have == nil || read == nil {
		return have == nil && read == nil
	}
	return have.Location == read.Location && have.Offset == read.Offset && have.SizeInBytes == read.SizeInBytes
}

// summary is the snapshot summary of a compaction.
func (cp *compaction) summary(props map[string]string) iceberg.Properties {
	return summarize(props, &cp.delta, iceberg.Properties{
		"retired-column-files":     strconv.Itoa(cp.columnFiles),
		"removed-deletion-vectors": strconv.Itoa(cp.dvs),
	})
}

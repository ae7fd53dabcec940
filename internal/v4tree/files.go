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

// Files is a files commit, validated by the caller and resolved to absolute
// locations.
type Files struct {
	// FirstRowID is the table's next row id: added data files get
	// consecutive row ids from it.
	FirstRowID int64
	// Added are the added data files; their tracking is set here.
	Added []v4manifest.TrackedFile
	// EqualityDeletes are the added equality-delete files; their tracking
	// is set here.
	EqualityDeletes []v4manifest.TrackedFile
	// Remove are the live data or delete files to remove.
	Remove []string
	// DeletionVectors are the deletion vectors to set, by data file.
	DeletionVectors map[string]v4manifest.DeletionVector
	// DVMaxPositions are the largest deleted positions of DeletionVectors,
	// by data file, as the caller read them from the Puffin files (-1 for
	// an empty vector; a data file missing here is not checked).
	DVMaxPositions map[string]int64
	// MaxLeafEntries bounds the rows of a leaf of added files (0: one leaf).
	MaxLeafEntries     int
	SnapshotProperties map[string]string
}

// filesChange is what the leaf rewrite of a files commit found and did.
type filesChange struct {
	remove  map[string]bool // location -> found live in a leaf
	dvs     map[string]v4manifest.DeletionVector
	dvMax   map[string]int64
	dvFound map[string]bool
	delta   Delta

	removedFiles, changedDV int
}

// CommitFiles rewrites the tree for a files commit: the leaves holding a
// removed file or a file getting a deletion vector are rewritten, every
// other live root row is carried, and the added files go into new leaves
// of at most MaxLeafEntries rows (so that a later change rewrites a
// bounded leaf). It returns a *validation.Error when a named file is not
// live (unknown-data-file) or a deletion vector deletes a position past the
// end of its file (deletion-vector-position-out-of-range), a *RequestError
// when a deletion vector deletes more rows than its file has, and the
// LeafReader's errors unchanged.
func CommitFiles(root []v4manifest.TrackedFile, read LeafReader, snap Snapshot, f Files) (*Result, error) {
	fc := &filesChange{remove: map[string]bool{}, dvs: f.DeletionVectors, dvMax: f.DVMaxPositions, dvFound: map[string]bool{}}
	for _, r := range f.Remove {
		fc.remove[r] = false
	}
	b := newBuilder(&snap, len(root))
	if err := fc.rewrite(b, root, read); err != nil {
		return nil, err
	}
	added, addedRecords := withTracking(f.Added, snap, f.FirstRowID)
	for i := range added {
		fc.delta.addData(&added[i])
	}
	chunk := f.MaxLeafEntries
	if chunk <= 0 {
		chunk = max(len(added), 1)
	}
	for start := 0; start < len(added); start += chunk {
		rows := added[start:min(start+chunk, len(added))]
		if err := b.addLeaf(v4manifest.ContentDataLeaf, rows, rows[0].Tracking.FirstRowID); err != nil {
			return nil, err
		}
	}
	if len(f.EqualityDeletes) > 0 {
		dels, _ := withTracking(f.EqualityDeletes, snap, -1)
		for i := range dels {
			fc.delta.addEqDeletes(&dels[i])
		}
		if err := b.addLeaf(v4manifest.ContentDeleteLeaf, dels, nil); err != nil {
			return nil, err
		}
	}
	b.res.Operation = filesOperation(len(added), fc, len(f.EqualityDeletes))
	b.res.Summary = summarize(f.SnapshotProperties, &fc.delta, iceberg.Properties{"changed-deletion-vectors": strconv.Itoa(fc.changedDV)})
	b.res.AddedRows, b.res.Delta = addedRecords, fc.delta
	return &b.res, nil
}

// withTracking returns copies of rows ADDED in snap; data rows get
// consecutive row ids from firstRowID unless it is negative. It also
// returns the number of records added.
func withTracking(in []v4manifest.TrackedFile, snap Snapshot, firstRowID int64) ([]v4manifest.TrackedFile, int64) {
	out := make([]v4manifest.TrackedFile, len(in))
	next := firstRowID
	var records int64
	for i, r := range in {
		r.Tracking = v4manifest.Tracking{Status: v4manifest.StatusAdded, SnapshotID: ptrTo(snap.ID),
			SequenceNumber: ptrTo(snap.SequenceNumber), FileSequenceNumber: ptrTo(snap.SequenceNumber)}
		if firstRowID >= 0 {
			r.Tracking.FirstRowID = ptrTo(next)
			next += r.RecordCount
		}
		records += r.RecordCount
		out[i] = r
	}
	return out, records
}

// touches reports whether a leaf of the given content may hold a file the
// change removes or sets a deletion vector on.
func (fc *filesChange) touches(content v4manifest.ContentType) bool {
	return len(fc.remove) > 0 || (len(fc.dvs) > 0 && content == v4manifest.ContentDataManifest)
}

// hits reports whether rows hold a live file the change affects.
func (fc *filesChange) hits(rows []v4manifest.TrackedFile) bool {
	for _, r := range rows {
		_, rm := fc.remove[r.Location]
		_, dv := fc.dvs[r.Location]
		if r.Tracking.Status.Live() && (rm || dv) {
			return true
		}
	}
	return false
}

// rewrite carries every live root row into the new root, rewriting the
// leaves (and the rows of the root itself) that hold a file the change
// affects, then checks that every named
// file was found live.
func (fc *filesChange) rewrite(b *builder, root []v4manifest.TrackedFile, read LeafReader) error {
	for i := range root {
		rr := &root[i]
		if !rr.Tracking.Status.Live() {
			continue // DELETED/REPLACED rows live one snapshot only
		}
		if !isLeaf(rr) {
			// A file in the root itself: changed there, in place.
			if one := []v4manifest.TrackedFile{*rr}; fc.hits(one) {
				out, err := fc.rewriteLeaf(b.snap, one)
				if err != nil {
					return err
				}
				b.res.Root = append(b.res.Root, out...)
				continue
			}
		}
		if !isLeaf(rr) || !fc.touches(rr.ContentType) {
			if err := b.carry(*rr); err != nil {
				return err
			}
			continue
		}
		rows, err := read(rr, nil)
		if err != nil {
			return err
		}
		if !fc.hits(rows) {
			if err := b.carry(*rr); err != nil {
				return err
			}
			continue
		}
		out, err := fc.rewriteLeaf(b.snap, rows)
		if err != nil {
			return err
		}
		if err := b.replaceLeaf(*rr, out); err != nil {
			return err
		}
	}
	return fc.checkFound(b.snap)
}

// checkFound refuses a named file that no leaf held live, in location
// order so that the message does not depend on map order.
func (fc *filesChange) checkFound(snap *Snapshot) error {
	for _, loc := range slices.Sorted(maps.Keys(fc.remove)) {
		if !fc.remove[loc] {
			return &validation.Error{Reason: validation.ReasonUnknownDataFile,
				Message: "remove-files: " + snap.name(loc) + " is not a live file of the table"}
		}
	}
	for _, loc := range slices.Sorted(maps.Keys(fc.dvs)) {
		if !fc.dvFound[loc] {
			return &validation.Error{Reason: validation.ReasonUnknownDataFile,
				Message: "set-deletion-vectors: " + snap.name(loc) + " is not a live data file of the table"}
		}
	}
	return nil
}

// rewriteLeaf applies the change to the live rows of one leaf: removed
// files become DELETED, a file with a new deletion vector becomes a
// REPLACED + MODIFIED pair, the rest are carried forward.
func (fc *filesChange) rewriteLeaf(snap *Snapshot, rows []v4manifest.TrackedFile) ([]v4manifest.TrackedFile, error) {
	out := make([]v4manifest.TrackedFile, 0, len(rows)+len(fc.dvs))
	for _, r := range rows {
		if !r.Tracking.Status.Live() {
			continue
		}
		if _, ok := fc.remove[r.Location]; ok {
			fc.remove[r.Location] = true
			r.Tracking.Status = v4manifest.StatusDeleted
			r.Tracking.SnapshotID = ptrTo(snap.ID)
			if r.ContentType == v4manifest.ContentData {
				fc.delta.removeData(&r)
				fc.removedFiles++
			} else {
				fc.delta.removeEqDeletes(&r)
			}
			out = append(out, r)
			continue
		}
		if d, ok := fc.dvs[r.Location]; ok && r.ContentType == v4manifest.ContentData {
			pair, err := fc.setDV(snap, r, d)
			if err != nil {
				return nil, err
			}
			out = append(out, pair...)
			continue
		}
		cf, err := v4manifest.CarryForward(r)
		if err != nil {
			return nil, err
		}
		out = append(out, cf)
	}
	return out, nil
}

// setDV turns data file r into the REPLACED + MODIFIED pair that gives it
// deletion vector d: a *RequestError when d deletes more rows than r has.
func (fc *filesChange) setDV(snap *Snapshot, r v4manifest.TrackedFile, d v4manifest.DeletionVector) ([]v4manifest.TrackedFile, error) {
	fc.dvFound[r.Location] = true
	if d.Cardinality > r.RecordCount {
		return nil, badRequest("set-deletion-vectors: cardinality %d exceeds the %d rows of %s",
			d.Cardinality, r.RecordCount, v4manifest.Relativize(snap.TableLocation, r.Location))
	}
	if m, ok := fc.dvMax[r.Location]; ok {
		if err := validation.CheckDVPositions(v4manifest.Relativize(snap.TableLocation, r.Location), m, r.RecordCount); err != nil {
			return nil, err
		}
	}
	replaced := r
	replaced.Tracking.Status = v4manifest.StatusReplaced
	replaced.Tracking.SnapshotID = ptrTo(snap.ID)
	mod := r
	mod.Tracking.Status = v4manifest.StatusModified
	mod.Tracking.DVSnapshotID = ptrTo(snap.ID)
	mod.DeletionVector = &d
	fc.changedDV++
	if r.DeletionVector != nil {
		fc.delta.removeDV(r.DeletionVector)
	}
	fc.delta.addDV(&d)
	return []v4manifest.TrackedFile{replaced, mod}, nil
}

// filesOperation is the snapshot operation of a files commit.
func filesOperation(added int, fc *filesChange, eqDeletes int) table.Operation {
	switch {
	case added > 0 && (fc.removedFiles > 0 || fc.changedDV > 0 || eqDeletes > 0):
		return table.OpOverwrite
	case added == 0:
		return table.OpDelete
	}
	return table.OpAppend
}

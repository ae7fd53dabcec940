package planning

import (
	"context"
	"slices"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/service/v4read"
	"github.com/lakehold/catalog/v4manifest"
)

// lastUpdatedFieldID is the reserved field id of
// _last_updated_sequence_number.
const lastUpdatedFieldID = 2147483539

// addedColumnFiles are, by base file location, the column files added in
// an incremental plan's range with the data sequence number of the commit
// that added each.
type addedColumnFiles map[string]map[string]int64

// addColumnChanges adds the column-change part of an incremental plan
// (docs/column-files.md, change detection): every base file live at end
// whose column files changed in the range. A base added by an append in
// the range comes back whole, as of end, and p.skip keeps the append part
// from also returning it as it was when added; any other changed base
// comes back flagged, with only the column files added in the range.
// Errors are the manifest readers' and task's.
func (p *scanPlanV4) addColumnChanges(ctx context.Context, res *planBuilder) error {
	chain, err := p.between()
	if err != nil || len(chain) == 0 {
		return err
	}
	added, err := p.columnFilesAdded(ctx, chain)
	if err != nil || len(added) == 0 {
		return err
	}
	appends := map[int64]bool{}
	for _, snap := range chain {
		if snap.Summary == nil || snap.Summary.Operation == table.OpAppend {
			appends[snap.SnapshotID] = true
		}
	}
	start, _ := p.snapshot(p.req.StartSnapshotID)
	rows, err := p.liveRowsWrittenAfter(ctx, chain[len(chain)-1], start.SequenceNumber, added)
	if err != nil {
		return err
	}
	p.skip = map[string]bool{}
	for _, r := range rows {
		appended := appends[v4read.Deref(r.Tracking.SnapshotID)]
		if appended {
			p.skip[r.Location] = true
		}
		if !p.rowMightMatch(r) {
			continue
		}
		t, err := p.task(r)
		if err != nil {
			return err
		}
		if !appended && !p.onlyAddedColumnFiles(&t, added[r.Location], start.SnapshotID) {
			continue
		}
		res.add(t, nil)
	}
	return nil
}

// onlyAddedColumnFiles cuts a task's column files to those added in the
// range and flags it; false when none of them carries a selected field
// (the selected columns did not change).
func (p *scanPlanV4) onlyAddedColumnFiles(t *ScanTask, added map[string]int64, start int64) bool {
	var cfs []v4read.ColumnFileRef
	var seqs []int64
	selected := false
	for _, cf := range t.ColumnFiles {
		seq, ok := added[cf.Location]
		if !ok {
			continue
		}
		cfs, seqs = append(cfs, cf), append(seqs, seq)
		for _, id := range cf.FieldIDs {
			selected = selected || (id != lastUpdatedFieldID && (p.sel == nil || p.sel[id]))
		}
	}
	t.ColumnFiles, t.ColumnFileSequenceNumbers, t.ColumnFilesChangedSince = cfs, seqs, &start
	return selected
}

// columnFilesAdded reads the REPLACED/MODIFIED pairs that the column
// updates of chain wrote: a MODIFIED row whose column files changed in
// its snapshot, against the REPLACED row of the same file (a row of the
// root or of a new leaf, or a row the snapshot masked in an older leaf).
func (p *scanPlanV4) columnFilesAdded(ctx context.Context, chain []*table.Snapshot) (addedColumnFiles, error) {
	added := addedColumnFiles{}
	for _, snap := range chain {
		if snap.Summary != nil && snap.Summary.Properties["added-column-files"] == "" {
			continue // not a column-file commit
		}
		root, err := p.root(ctx, snap)
		if err != nil {
			return nil, err
		}
		rows := slices.Clone(root)
		for i := range root {
			rr := &root[i]
			if rr.ContentType != v4manifest.ContentDataManifest {
				continue
			}
			switch {
			case rr.Tracking.Status == v4manifest.StatusAdded && v4read.Deref(rr.Tracking.SnapshotID) == snap.SnapshotID:
				leaf, err := p.pl.d.Readers.LeafView(ctx, p.w, p.st.location, rr, p.view)
				if err != nil {
					return nil, err
				}
				rows = append(rows, leaf...)
			case rr.Tracking.Status == v4manifest.StatusModified && v4read.Deref(rr.Tracking.DVSnapshotID) == snap.SnapshotID:
				replaced, err := p.replacedRows(ctx, rr)
				if err != nil {
					return nil, err
				}
				rows = append(rows, replaced...)
			}
		}
		added.pairs(rows, snap)
	}
	return added, nil
}

// replacedRows are the rows of the leaf of root row rr that rr's snapshot
// masked as replaced (its replaced_positions), as REPLACED rows: the
// earlier versions of the files that snapshot modified.
func (p *scanPlanV4) replacedRows(ctx context.Context, rr *v4manifest.TrackedFile) ([]v4manifest.TrackedFile, error) {
	positions, err := rr.ReplacedInSnapshot()
	if err != nil || len(positions) == 0 {
		return nil, err
	}
	loc := v4manifest.Resolve(p.st.location, rr.Location)
	out, err := p.pl.d.Readers.ManifestWith(ctx, p.w, loc, v4manifest.ReaderOptions{TableLocation: p.st.location, InheritFrom: rr,
		IncludeMasked: true, Positions: positions})
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Tracking.Status = v4manifest.StatusReplaced
	}
	return out, nil
}

// pairs records the column files that snap's column update added to the
// data rows it wrote (the MODIFIED rows in its root and new leaves),
// against their REPLACED twins (beside them, or masked in their old leaf
// by the snapshot's manifest deletion vectors). A MODIFIED row without a
// twin counts all its column files as added (a superset is safe for
// change detection).
func (a addedColumnFiles) pairs(rows []v4manifest.TrackedFile, snap *table.Snapshot) {
	replaced := map[string]*v4manifest.TrackedFile{}
	for i := range rows {
		if rows[i].ContentType == v4manifest.ContentData && rows[i].Tracking.Status == v4manifest.StatusReplaced {
			replaced[rows[i].Location] = &rows[i]
		}
	}
	for _, r := range rows {
		if r.ContentType != v4manifest.ContentData || r.Tracking.Status != v4manifest.StatusModified ||
			v4read.Deref(r.Tracking.LatestColumnFileSnapshotID) != snap.SnapshotID {
			continue
		}
		var before []string
		if old := replaced[r.Location]; old != nil {
			for _, cf := range old.ColumnFiles {
				before = append(before, cf.Location)
			}
		}
		for _, cf := range r.ColumnFiles {
			if slices.Contains(before, cf.Location) {
				continue
			}
			if a[r.Location] == nil {
				a[r.Location] = map[string]int64{}
			}
			a[r.Location][cf.Location] = snap.SequenceNumber
		}
	}
}

// liveRowsWrittenAfter finds the live data rows of end for the bases in
// added. Only leaves written after sequence number seq can hold them: a
// column update rewrites its base's leaf, and a leaf written earlier holds
// rows as they were then.
func (p *scanPlanV4) liveRowsWrittenAfter(ctx context.Context, end *table.Snapshot, seq int64, added addedColumnFiles) ([]*v4manifest.TrackedFile, error) {
	root, err := p.root(ctx, end)
	if err != nil {
		return nil, err
	}
	var out []*v4manifest.TrackedFile
	keep := func(rows []v4manifest.TrackedFile) {
		for i := range rows {
			r := &rows[i]
			if r.ContentType == v4manifest.ContentData && r.Tracking.Status.Live() && added[r.Location] != nil {
				out = append(out, r)
			}
		}
	}
	keep(root)
	var leaves []*v4manifest.TrackedFile
	for i := range root {
		rr := &root[i]
		if rr.ContentType != v4manifest.ContentDataManifest || !rr.Tracking.Status.Live() || v4read.Deref(rr.Tracking.SequenceNumber) <= seq {
			continue
		}
		leaves = append(leaves, rr)
	}
	err = p.readLeavesInOrder(ctx, leaves, func(_ int, rows []v4manifest.TrackedFile) error {
		keep(rows)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

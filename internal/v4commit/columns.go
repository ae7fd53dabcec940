package v4commit

import (
	"maps"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/parquetstats"
	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// BaseHit is where a base file was found: the index of its leaf's row in
// the root and its (projected) row in that leaf.
type BaseHit struct {
	RootIndex int
	Row       v4manifest.TrackedFile
}

// BaseState is what a base file looked like when a commit first read it; a
// retry that finds it changed is a conflict. Carrying a row forward (ADDED
// → EXISTING) is not a change; a new data sequence number or column-file
// snapshot is.
type BaseState struct {
	Live    bool
	Seq     int64
	LatestC int64
}

// stateOf is the BaseState of row r.
func stateOf(r *v4manifest.TrackedFile) BaseState {
	st := BaseState{Live: r.Tracking.Status.Live()}
	if r.Tracking.SequenceNumber != nil {
		st.Seq = *r.Tracking.SequenceNumber
	}
	if r.Tracking.LatestColumnFileSnapshotID != nil {
		st.LatestC = *r.Tracking.LatestColumnFileSnapshotID
	}
	return st
}

// GroupByBase groups column files by the base data file they update.
func GroupByBase(files []validation.ColumnFile) map[string][]validation.ColumnFile {
	byBase := map[string][]validation.ColumnFile{}
	for _, f := range files {
		byBase[f.DataFile] = append(byBase[f.DataFile], f)
	}
	return byBase
}

// FindBases finds the leaves holding the base files of byBase (a narrow
// projection of every live data leaf; a live row wins over a dead one) and
// collects the live equality deletes. It returns the LeafReader's errors
// unchanged.
func FindBases(root []v4manifest.TrackedFile, read LeafReader, byBase map[string][]validation.ColumnFile) (map[string]*BaseHit, []validation.DeleteFile, error) {
	found := map[string]*BaseHit{}
	var deletes []validation.DeleteFile
	for i := range root {
		rr := &root[i]
		if !rr.Tracking.Status.Live() {
			continue
		}
		switch rr.ContentType {
		case v4manifest.ContentDataManifest:
			rows, err := read(rr, baseCols)
			if err != nil {
				return nil, nil, err
			}
			for _, r := range rows {
				if _, want := byBase[r.Location]; !want {
					continue
				}
				if h := found[r.Location]; h == nil || r.Tracking.Status.Live() {
					found[r.Location] = &BaseHit{RootIndex: i, Row: r}
				}
			}
		case v4manifest.ContentDeleteManifest:
			rows, err := read(rr, nil)
			if err != nil {
				return nil, nil, err
			}
			deletes = append(deletes, liveEqualityDeletes(rows)...)
		}
	}
	return found, deletes, nil
}

// liveEqualityDeletes lists the live equality-delete files of a delete leaf.
func liveEqualityDeletes(rows []v4manifest.TrackedFile) []validation.DeleteFile {
	var out []validation.DeleteFile
	for _, r := range rows {
		if !r.Tracking.Status.Live() || r.ContentType != v4manifest.ContentEqualityDeletes {
			continue
		}
		d := validation.DeleteFile{Location: r.Location, Partition: r.Partition, Unpartitioned: r.SpecID == nil || len(r.Partition) == 0}
		if r.Tracking.SequenceNumber != nil {
			d.SequenceNumber = *r.Tracking.SequenceNumber
		}
		if r.SpecID != nil {
			d.SpecID = int(*r.SpecID)
		}
		out = append(out, d)
	}
	return out
}

// CheckBases validates every base file against its column files and
// returns the bases' states. It returns the first *validation.Error (an
// unknown, dead or non-data base, or a record-count mismatch).
func CheckBases(byBase map[string][]validation.ColumnFile, found map[string]*BaseHit) (map[string]BaseState, error) {
	states := map[string]BaseState{}
	for _, base := range slices.Sorted(maps.Keys(byBase)) {
		h := found[base]
		b := validation.Base{}
		if h != nil {
			b = validation.Base{Found: true, Live: h.Row.Tracking.Status.Live(), IsData: h.Row.ContentType == v4manifest.ContentData, RecordCount: h.Row.RecordCount}
		}
		for _, f := range byBase[base] {
			if err := validation.CheckBase(f, b); err != nil {
				return nil, err
			}
		}
		if h == nil {
			// validation.CheckBase refuses a base that was not found; this
			// guards against that rule changing.
			return nil, &validation.Error{Reason: validation.ReasonUnknownDataFile, Message: "Data file " + base + " is not a file of the table"}
		}
		states[base] = stateOf(&h.Row)
	}
	return states, nil
}

// Columns is a column-file commit, validated and with its bases found.
type Columns struct {
	ByBase  map[string][]validation.ColumnFile
	Found   map[string]*BaseHit
	Deletes []validation.DeleteFile
	// Stats are each column file's typed stats by field id, by column
	// file location; a field without stats gets unknown stats.
	Stats              map[string]map[int]*v4manifest.FieldStats
	SortOrders         []table.SortOrder
	SnapshotProperties map[string]string
}

// columnCounts are the summary counts of a column-file commit.
type columnCounts struct{ added, retired, modified int }

// CommitColumns rewrites the tree for a column-file commit: every leaf
// holding a base file is rewritten in full (the base's row REPLACED, a
// MODIFIED row with the merged column files and stats added), every other
// live root row is carried. It returns a *validation.Error when an
// equality delete could apply to a base file's rows, and the LeafReader's
// errors unchanged.
func CommitColumns(root []v4manifest.TrackedFile, read LeafReader, snap Snapshot, c Columns) (*Result, error) {
	affected := map[int]bool{}
	for _, h := range c.Found {
		affected[h.RootIndex] = true
	}
	b := newBuilder(&snap, len(root))
	var n columnCounts
	for i := range root {
		rr := root[i]
		if !rr.Tracking.Status.Live() {
			continue
		}
		if !affected[i] {
			if err := b.carry(rr); err != nil {
				return nil, err
			}
			continue
		}
		rows, err := read(&rr, nil)
		if err != nil {
			return nil, err
		}
		out, err := c.rewriteLeaf(&snap, rows, &n)
		if err != nil {
			return nil, err
		}
		if err := b.replaceLeaf(rr, out); err != nil {
			return nil, err
		}
	}
	summary := iceberg.Properties{}
	maps.Copy(summary, c.SnapshotProperties)
	summary["added-column-files"] = strconv.Itoa(n.added)
	summary["retired-column-files"] = strconv.Itoa(n.retired)
	summary["modified-data-files"] = strconv.Itoa(n.modified)
	b.res.Operation, b.res.Summary = table.OpOverwrite, summary
	return &b.res, nil
}

// rewriteLeaf turns each base file of one leaf into its REPLACED +
// MODIFIED pair and carries the other live rows forward.
func (c *Columns) rewriteLeaf(snap *Snapshot, rows []v4manifest.TrackedFile, n *columnCounts) ([]v4manifest.TrackedFile, error) {
	eq := func(a, b any) bool { c, err := parquetstats.Compare(a, b); return err == nil && c == 0 }
	out := make([]v4manifest.TrackedFile, 0, len(rows)+len(c.ByBase))
	for _, r := range rows {
		if !r.Tracking.Status.Live() {
			continue
		}
		fs, isBase := c.ByBase[r.Location]
		if !isBase {
			cf, err := v4manifest.CarryForward(r)
			if err != nil {
				return nil, err
			}
			out = append(out, cf)
			continue
		}
		baseSeq, spec := deref(r.Tracking.SequenceNumber), 0
		if r.SpecID != nil {
			spec = int(*r.SpecID)
		}
		for _, f := range fs {
			if err := validation.CheckEqualityDeletes(f, baseSeq, spec, r.Partition, c.Deletes, eq); err != nil {
				return nil, err
			}
		}
		replaced := r
		replaced.Tracking.Status = v4manifest.StatusReplaced
		replaced.Tracking.SnapshotID = ptrTo(snap.ID)
		mod, nAdded, nRetired := modifiedRow(r, fs, c.Stats, snap.ID, snap.SequenceNumber)
		if mod.SortOrderID != nil && sortedBy(c.SortOrders, int(*mod.SortOrderID), fs) {
			// The file is no longer known to be sorted by that order.
			mod.SortOrderID = nil
		}
		out = append(out, replaced, mod)
		n.added += nAdded
		n.retired += nRetired
		n.modified++
	}
	return out, nil
}

// sortedBy reports whether sort order id uses a field the column files
// update.
func sortedBy(orders []table.SortOrder, id int, fs []validation.ColumnFile) bool {
	for _, o := range orders {
		if o.OrderID() != id {
			continue
		}
		for _, f := range o.Fields() {
			for _, c := range fs {
				if slices.Contains(c.FieldIDs, f.SourceID()) {
					return true
				}
			}
		}
	}
	return false
}

// modifiedRow builds the MODIFIED row of a base file: merged column files,
// the commit's data sequence number and column-file snapshot, stats of the
// updated fields replaced by the column files' (unknown when not known),
// everything else kept. It also returns the numbers of column files added
// and retired.
func modifiedRow(r v4manifest.TrackedFile, fs []validation.ColumnFile, colStats map[string]map[int]*v4manifest.FieldStats, snapID, seq int64) (v4manifest.TrackedFile, int, int) {
	old := make([]validation.MergedFile, 0, len(r.ColumnFiles))
	byLoc := map[string]v4manifest.ColumnFile{}
	for _, cf := range r.ColumnFiles {
		ids := make([]int, len(cf.FieldIDs))
		for i, id := range cf.FieldIDs {
			ids[i] = int(id)
		}
		old = append(old, validation.MergedFile{Location: cf.Location, FieldIDs: ids})
		byLoc[cf.Location] = cf
	}
	for _, f := range fs {
		byLoc[f.Location] = v4manifest.ColumnFile{FormatVersion: formatV4, Location: f.Location, FileFormat: "parquet", FileSizeInBytes: f.FileSizeInBytes}
	}
	merged := validation.MergeColumnFiles(old, fs)
	mod := r
	mod.Tracking.Status = v4manifest.StatusModified
	mod.Tracking.SequenceNumber = ptrTo(seq)
	mod.Tracking.LatestColumnFileSnapshotID = ptrTo(snapID)
	mod.ColumnFiles = make([]v4manifest.ColumnFile, 0, len(merged.Files))
	added := 0
	for _, m := range merged.Files {
		cf := byLoc[m.Location]
		cf.FieldIDs = make([]int32, len(m.FieldIDs))
		for i, id := range m.FieldIDs {
			cf.FieldIDs[i] = int32(id)
		}
		mod.ColumnFiles = append(mod.ColumnFiles, cf)
		if m.New {
			added++
		}
	}
	mod.ContentStats = mergedStats(r.ContentStats, fs, colStats)
	return mod, added, merged.Retired
}

// mergedStats are a base's stats with those of the fields the column files
// update replaced by the column files' (dropped when unknown); nil when no
// field has stats.
func mergedStats(base map[int]*v4manifest.FieldStats, fs []validation.ColumnFile, colStats map[string]map[int]*v4manifest.FieldStats) map[int]*v4manifest.FieldStats {
	stats := maps.Clone(base)
	if stats == nil {
		stats = map[int]*v4manifest.FieldStats{}
	}
	for _, f := range fs {
		for _, id := range f.FieldIDs {
			delete(stats, id)
			if s := colStats[f.Location][id]; s != nil {
				stats[id] = s
			}
		}
	}
	if len(stats) == 0 {
		return nil
	}
	return stats
}

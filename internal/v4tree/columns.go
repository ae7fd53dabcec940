package v4tree

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

// FindBases finds the leaves (or root rows) holding the base files of
// byBase (a narrow projection of every live data leaf; a live row wins
// over a dead one) and collects the live equality deletes. It returns the
// LeafReader's errors unchanged.
func FindBases(root []v4manifest.TrackedFile, read LeafReader, byBase map[string][]validation.ColumnFile) (map[string]*BaseHit, []validation.DeleteFile, error) {
	found := rootHits(root, byBase)
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

// rootHits finds the base files of byBase that the root holds itself, live
// (MODIFIED rows of earlier column commits): no leaf read needed.
func rootHits(root []v4manifest.TrackedFile, byBase map[string][]validation.ColumnFile) map[string]*BaseHit {
	found := map[string]*BaseHit{}
	for i := range root {
		rr := &root[i]
		if _, ok := byBase[rr.Location]; ok && rr.Tracking.Status.Live() && rr.ContentType == v4manifest.ContentData {
			found[rr.Location] = &BaseHit{RootIndex: i, Row: *rr}
		}
	}
	return found
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
	// ReadRows, when set, reads only the rows at the given positions of a
	// leaf (in full); the commit then reads each base's leaf narrow and its
	// bases in full, instead of the whole leaf in full.
	ReadRows RowsReader
}

// RowsReader reads the rows at positions of the leaf root row rr
// references, as LeafReader would read them. Its errors are returned by
// this package unchanged. Like LeafReader, it is called concurrently.
type RowsReader func(rr *v4manifest.TrackedFile, positions map[int64]bool) ([]v4manifest.TrackedFile, error)

// columnCounts are the summary counts of a column-file commit and its
// change of the file totals (column files' bytes).
type columnCounts struct {
	added, retired, modified int
	delta                    Delta
}

// CommitColumns rewrites the tree for a column-file commit without
// rewriting the leaves that hold the base files: each base's position in
// its leaf goes into the manifest deletion vector on that leaf's root row
// (which becomes MODIFIED, with the positions as its replaced_positions),
// and the bases' MODIFIED rows (merged column files and stats) go into the
// root itself (placeModified), with the live rows of small leaves when
// enough have piled up (smallLeaves). A base held by the root is replaced
// there. A leaf whose live rows are all bases is rewritten instead
// (REPLACED/MODIFIED pairs, as a copy-on-write commit would). Every other
// live root row is carried. It returns a *validation.Error when an
// equality delete could apply to a base file's rows, and the LeafReader's
// errors unchanged.
func CommitColumns(root []v4manifest.TrackedFile, read LeafReader, snap Snapshot, c Columns) (*Result, error) {
	affected := map[int]bool{}
	for _, h := range c.Found {
		affected[h.RootIndex] = true
	}
	merge := smallLeaves(root, affected)
	reads, err := c.readLeaves(root, read, affected, merge)
	if err != nil {
		return nil, err
	}
	cb := &columnsBuild{c: &c, b: newBuilder(&snap, len(root))}
	for i := range root {
		rr := root[i]
		switch {
		case !rr.Tracking.Status.Live():
		case merge[i]:
			err = cb.fold(rr, reads[i].rows)
		case rr.ContentType == v4manifest.ContentData:
			err = cb.rootRow(rr, affected[i])
		case !affected[i]:
			err = cb.b.carry(rr)
		default:
			err = cb.baseLeaf(rr, reads[i])
		}
		if err != nil {
			return nil, err
		}
	}
	if err := cb.b.placeModified(cb.rootData, cb.modified); err != nil {
		return nil, err
	}
	cb.b.res.Summary = summarize(c.SnapshotProperties, &cb.n.delta, iceberg.Properties{
		"added-column-files":   strconv.Itoa(cb.n.added),
		"retired-column-files": strconv.Itoa(cb.n.retired),
		"modified-data-files":  strconv.Itoa(cb.n.modified),
	})
	cb.b.res.Operation, cb.b.res.Delta = table.OpOverwrite, cb.n.delta
	return &cb.b.res, nil
}

// columnsBuild is a column commit's tree rewrite in progress: the MODIFIED
// (and folded) rows and the root's own data rows wait for placeModified.
type columnsBuild struct {
	c                  *Columns
	b                  *builder
	n                  columnCounts
	modified, rootData []v4manifest.TrackedFile
}

// fold retires small leaf rr, its live rows carried forward with the
// MODIFIED rows.
func (cb *columnsBuild) fold(rr v4manifest.TrackedFile, rows []v4manifest.TrackedFile) error {
	for _, r := range rows {
		if r.Tracking.Status.Live() {
			cf, err := v4manifest.CarryForward(r)
			if err != nil {
				return err
			}
			cb.modified = append(cb.modified, cf)
		}
	}
	cb.b.retire(rr)
	return nil
}

// rootRow handles a data row of the root itself (put there by an earlier
// column commit): kept with the root's data rows, or, when it is a
// base, replaced in this root with its MODIFIED row joining the others.
func (cb *columnsBuild) rootRow(rr v4manifest.TrackedFile, isBase bool) error {
	if !isBase {
		cb.rootData = append(cb.rootData, rr)
		return nil
	}
	pairs, _, err := cb.c.modifyBases(cb.b.snap, []v4manifest.TrackedFile{rr}, &cb.n)
	if err != nil {
		return err
	}
	cb.b.res.Root = append(cb.b.res.Root, pairs[0])
	cb.modified = append(cb.modified, pairs[1])
	return nil
}

// baseLeaf masks the bases in leaf rr, their MODIFIED rows joining the
// others. When every live row of the leaf is a base, a mask would leave a
// leaf of nothing live in the tree, and a rewrite would write the whole
// leaf again: the leaf is retired instead (DELETED) and its bases' REPLACED
// rows go into the root, as for bases the root holds, beside the MODIFIED
// rows (which placeModified moves to a new leaf if the root would hold too
// many).
func (cb *columnsBuild) baseLeaf(rr v4manifest.TrackedFile, read leafRows) error {
	pairs, positions, err := cb.c.modifyBases(cb.b.snap, read.rows, &cb.n)
	if err != nil {
		return err
	}
	for i := 1; i < len(pairs); i += 2 {
		cb.modified = append(cb.modified, pairs[i])
	}
	if len(positions) == read.live {
		cb.b.retire(rr)
		for i := 0; i < len(pairs); i += 2 {
			cb.b.res.Root = append(cb.b.res.Root, pairs[i])
		}
		return nil
	}
	return cb.b.mask(rr, positions)
}

// maxRootData bounds the data rows kept in the root itself. A column
// commit puts its MODIFIED rows there (the v4 single-file commit: the
// root is the only manifest it writes) until they would pass the bound;
// then that commit moves them all into one new leaf. The root is read and
// rewritten by every commit, so it stays small; the bound makes the leaf
// write one commit in about maxRootData/2 for two-file updates.
const maxRootData = 64

// placeModified puts a column commit's MODIFIED rows, and the data rows
// the root already held (carried forward), in the new root, or all of
// them in one new leaf when they would be more than maxRootData.
func (b *builder) placeModified(rootData, modified []v4manifest.TrackedFile) error {
	if len(rootData)+len(modified) <= maxRootData {
		for _, r := range rootData {
			if err := b.carry(r); err != nil {
				return err
			}
		}
		b.res.Root = append(b.res.Root, modified...)
		return nil
	}
	rows := make([]v4manifest.TrackedFile, 0, len(rootData)+len(modified))
	for _, r := range rootData {
		cf, err := v4manifest.CarryForward(r)
		if err != nil {
			return err
		}
		rows = append(rows, cf)
	}
	return b.addLeaf(v4manifest.ContentDataLeaf, append(rows, modified...), nil)
}

// Small leaves accumulate: column commits used to write one for their
// MODIFIED rows, and small files commits still do. Once mergeSmallAt of
// them are live, the next column commit folds their live rows (carried
// forward) in with its MODIFIED rows and retires them, so planning reads
// few small leaves.
const (
	smallLeafRows = 256
	mergeSmallAt  = 8
)

// smallLeaves picks the live data leaves of root to fold into this
// commit's new leaf: none until mergeSmallAt small ones that the commit
// does not otherwise touch are live, then those.
func smallLeaves(root []v4manifest.TrackedFile, affected map[int]bool) map[int]bool {
	pick := map[int]bool{}
	for i := range root {
		rr := &root[i]
		if rr.Tracking.Status.Live() && rr.ContentType == v4manifest.ContentDataManifest && !affected[i] && rr.RecordCount <= smallLeafRows {
			pick[i] = true
		}
	}
	if len(pick) < mergeSmallAt {
		return nil
	}
	return pick
}

// leafRows are the rows a column commit read from one leaf, and how many
// of the leaf's rows are live.
type leafRows struct {
	rows []v4manifest.TrackedFile
	live int
}

// readLeaves reads, a few at a time, the leaves a column commit needs by
// root index: the bases' rows of each affected leaf (baseRows) and every
// row of each small leaf it folds in.
func (c *Columns) readLeaves(root []v4manifest.TrackedFile, read LeafReader, affected, merge map[int]bool) (map[int]leafRows, error) {
	var idx []int
	for i := range root {
		if root[i].Tracking.Status.Live() && isLeaf(&root[i]) && (affected[i] || merge[i]) {
			idx = append(idx, i)
		}
	}
	got := make([]leafRows, len(idx))
	err := readEach(len(idx), func(k int) error {
		rr := &root[idx[k]]
		if merge[idx[k]] {
			rows, err := read(rr, nil)
			got[k] = leafRows{rows: rows}
			return err
		}
		rows, live, err := c.baseRows(rr, read)
		got[k] = leafRows{rows: rows, live: live}
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make(map[int]leafRows, len(idx))
	for k, i := range idx {
		out[i] = got[k]
	}
	return out, nil
}

// baseRows reads the rows of the leaf rr references that a column commit
// needs (the live base files, at least) and counts the leaf's live rows.
// With ReadRows it reads the leaf narrow (cached by the base lookup), then
// only the bases' rows in full.
func (c *Columns) baseRows(rr *v4manifest.TrackedFile, read LeafReader) ([]v4manifest.TrackedFile, int, error) {
	if c.ReadRows == nil {
		rows, err := read(rr, nil)
		return rows, countLive(rows), err
	}
	narrow, err := read(rr, baseCols)
	if err != nil {
		return nil, 0, err
	}
	positions := map[int64]bool{}
	for _, r := range narrow {
		if _, isBase := c.ByBase[r.Location]; isBase && r.Tracking.Status.Live() {
			positions[r.Pos] = true
		}
	}
	rows, err := c.ReadRows(rr, positions)
	return rows, countLive(narrow), err
}

func countLive(rows []v4manifest.TrackedFile) int {
	n := 0
	for i := range rows {
		if rows[i].Tracking.Status.Live() {
			n++
		}
	}
	return n
}

// modifyBases builds, for each base file among one leaf's rows (read for
// its root row: masked rows left out, positions set), its REPLACED row and
// its MODIFIED row, in that order, and returns the pairs with the bases'
// positions.
func (c *Columns) modifyBases(snap *Snapshot, rows []v4manifest.TrackedFile, n *columnCounts) (pairs []v4manifest.TrackedFile, positions []uint32, err error) {
	eq := func(a, b any) bool { c, err := parquetstats.Compare(a, b); return err == nil && c == 0 }
	for _, r := range rows {
		if !r.Tracking.Status.Live() {
			continue
		}
		fs, isBase := c.ByBase[r.Location]
		if !isBase {
			continue
		}
		baseSeq, spec := deref(r.Tracking.SequenceNumber), 0
		if r.SpecID != nil {
			spec = int(*r.SpecID)
		}
		for _, f := range fs {
			if err := validation.CheckEqualityDeletes(f, baseSeq, spec, r.Partition, c.Deletes, eq); err != nil {
				return nil, nil, err
			}
		}
		mod, nAdded, nRetired := modifiedRow(r, fs, c.Stats, snap.ID, snap.SequenceNumber)
		if mod.SortOrderID != nil && sortedBy(c.SortOrders, int(*mod.SortOrderID), fs) {
			// The file is no longer known to be sorted by that order.
			mod.SortOrderID = nil
		}
		replaced := r
		replaced.Tracking.Status = v4manifest.StatusReplaced
		replaced.Tracking.SnapshotID = ptrTo(snap.ID)
		replaced.Pos, mod.Pos = 0, 0
		pairs = append(pairs, replaced, mod)
		positions = append(positions, uint32(r.Pos))
		n.added += nAdded
		n.retired += nRetired
		n.modified++
		columnFilesDelta(&n.delta, r.ColumnFiles, mod.ColumnFiles)
	}
	return pairs, positions, nil
}

// columnFilesDelta counts the column files of a base that a commit adds
// (in after, not before) and retires (in before, not after), by location.
func columnFilesDelta(d *Delta, before, after []v4manifest.ColumnFile) {
	has := func(fs []v4manifest.ColumnFile, loc string) bool {
		return slices.ContainsFunc(fs, func(cf v4manifest.ColumnFile) bool { return cf.Location == loc })
	}
	for _, cf := range after {
		if !has(before, cf.Location) {
			d.addColumnFile(cf.FileSizeInBytes)
		}
	}
	for _, cf := range before {
		if !has(after, cf.Location) {
			d.removeColumnFile(cf.FileSizeInBytes)
		}
	}
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

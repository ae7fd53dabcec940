package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// ColumnFileInput is one requested column file.
type ColumnFileInput struct {
	DataFile        string
	Location        string
	FileFormat      string
	FieldIDs        []int
	FileSizeInBytes int64
	RecordCount     int64
}

// ColumnFilesCommit updates some columns of some base data files of a v4
// table with column files.
type ColumnFilesCommit struct {
	Ident              Ident
	Requirements       json.RawMessage
	ColumnFiles        []ColumnFileInput
	SnapshotProperties map[string]string
}

// relativizeValidation rewrites the file locations in a validation
// rejection relative to the table, so that no server path reaches a client.
func relativizeValidation(err error, tableLoc string) error {
	var ve *validation.Error
	if !errors.As(err, &ve) {
		return err
	}
	rel := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, tableLoc+"/", ""), tableLoc, "<table>")
	}
	out := &validation.Error{Reason: ve.Reason, Message: rel(ve.Message), Details: map[string]any{}}
	for k, v := range ve.Details {
		if str, ok := v.(string); ok {
			v = rel(str)
		}
		out.Details[k] = v
	}
	return out
}

// validationErr turns a validation rejection into a 400 ValidationException.
func validationErr(err error) error {
	var ve *validation.Error
	if errors.As(err, &ve) {
		e := newErr(KindValidation, "%s", ve.Message)
		e.Reason = ve.Reason
		e.Details = ve.Details
		return e
	}
	return err
}

// baseState is what a base file looked like when a commit first read it;
// a retry that finds it changed is a conflict.
// Carrying a row forward (ADDED → EXISTING) is not a change; a new data
// sequence number or column-file snapshot is.
type baseState struct {
	live    bool
	seq     int64
	latestC int64
}

func stateOf(r *v4manifest.TrackedFile) baseState {
	st := baseState{live: r.Tracking.Status.Live()}
	if r.Tracking.SequenceNumber != nil {
		st.seq = *r.Tracking.SequenceNumber
	}
	if r.Tracking.LatestColumnFileSnapshotID != nil {
		st.latestC = *r.Tracking.LatestColumnFileSnapshotID
	}
	return st
}

// CommitColumnFiles validates a column-file commit (every rule a 400 with a
// reason, nothing changed), rewrites only the leaves that hold affected base
// files (old row REPLACED, new row MODIFIED with the merged column files and
// stats) and commits an overwrite snapshot. Concurrent commits on other base
// files are re-based; a concurrent change to one of ours is a 409.
func (s *Service) CommitColumnFiles(ctx context.Context, warehouse string, c ColumnFilesCommit) (*TableResult, error) {
	w, reqs, err := s.v4Target(ctx, warehouse, c.Ident, c.Requirements)
	if err != nil {
		return nil, err
	}
	if len(c.ColumnFiles) == 0 {
		return nil, newErr(KindBadRequest, "A column-files commit needs at least one column file")
	}
	cc := &columnsCommit{ColumnFilesCommit: c, reqs: reqs, footers: map[string]*footerInfo{}}
	var res *TableResult
	err = s.runCommit(ctx, w, "table", func(ctx context.Context) (*attempt, error) {
		a := &attempt{}
		var err error
		res, err = s.stageColumns(ctx, w, cc, a)
		return a, validationErr(err)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// columnsCommit is a column-file commit with what its attempts share: the
// base files' states seen by the first attempt (a retry that finds one
// changed is a conflict) and the footers read so far.
type columnsCommit struct {
	ColumnFilesCommit
	reqs    []requirement
	first   map[string]baseState
	footers map[string]*footerInfo // by column file location; owned by the commit's goroutine
}

// baseHit is where a base file was found: the root row of its leaf and its
// row in that leaf.
type baseHit struct {
	rootIdx int
	row     v4manifest.TrackedFile
}

// stageColumns stages one attempt of a column-file commit into a.
// Validation messages name files relative to the table.
func (s *Service) stageColumns(ctx context.Context, w *store.Warehouse, cc *columnsCommit, a *attempt) (_ *TableResult, err error) {
	st, err := s.loadV4(ctx, w, cc.Ident)
	if err != nil {
		return nil, err
	}
	defer func() { err = relativizeValidation(err, st.location) }()
	if err := checkRequirements(cc.reqs, st.meta); err != nil {
		return nil, err
	}
	vt := validation.Table{Location: st.location, Schema: st.meta.CurrentSchema(), Specs: st.meta.PartitionSpecs()}
	files := resolveColumnFiles(st.location, cc.ColumnFiles)
	for _, f := range files {
		if err := fileInTable(w, st, f.Location, "column file"); err != nil {
			return nil, err
		}
	}
	if err := validation.CheckRequest(vt, files); err != nil {
		return nil, err
	}
	byBase := map[string][]validation.ColumnFile{}
	for _, f := range files {
		byBase[f.DataFile] = append(byBase[f.DataFile], f)
	}
	found, deletes, err := s.findBases(ctx, w, st, byBase)
	if err != nil {
		return nil, err
	}
	if err := cc.checkBases(byBase, found); err != nil {
		return nil, err
	}
	if err := s.readFooters(ctx, w, files, vt, cc.footers); err != nil {
		return nil, err
	}
	t := s.newV4Tx(w, st, a)
	n, err := s.rewriteForColumns(ctx, t, &columnRewrite{byBase: byBase, found: found, deletes: deletes, footers: cc.footers})
	if err != nil {
		return nil, err
	}
	summary := iceberg.Properties{}
	maps.Copy(summary, cc.SnapshotProperties)
	summary["added-column-files"] = strconv.Itoa(n.added)
	summary["retired-column-files"] = strconv.Itoa(n.retired)
	summary["modified-data-files"] = strconv.Itoa(n.modified)
	firstRowID := st.meta.NextRowID()
	return s.stageV4Snapshot(ctx, t, table.OpOverwrite, summary, &firstRowID, ptrTo(int64(0)))
}

// resolveColumnFiles resolves the requested column files against the
// table location.
func resolveColumnFiles(tableLoc string, in []ColumnFileInput) []validation.ColumnFile {
	files := make([]validation.ColumnFile, len(in))
	for i, f := range in {
		files[i] = validation.ColumnFile{
			DataFile: v4manifest.Resolve(tableLoc, f.DataFile), Location: v4manifest.Resolve(tableLoc, f.Location),
			FileFormat: f.FileFormat, FieldIDs: f.FieldIDs, FileSizeInBytes: f.FileSizeInBytes, RecordCount: f.RecordCount,
		}
	}
	return files
}

// findBases finds the leaves holding the base files (a narrow projection
// of every live data leaf) and collects the live equality deletes.
func (s *Service) findBases(ctx context.Context, w *store.Warehouse, st *v4State, byBase map[string][]validation.ColumnFile) (map[string]*baseHit, []validation.DeleteFile, error) {
	found := map[string]*baseHit{}
	var deletes []validation.DeleteFile
	for i := range st.rootRows {
		rr := &st.rootRows[i]
		if !rr.Tracking.Status.Live() {
			continue
		}
		switch rr.ContentType {
		case v4manifest.ContentDataManifest:
			rows, err := s.readLeaf(ctx, w, st, rr, []int{v4manifest.IDLocation, v4manifest.IDTracking, v4manifest.IDRecordCount})
			if err != nil {
				return nil, nil, err
			}
			for _, r := range rows {
				if _, want := byBase[r.Location]; !want {
					continue
				}
				if h := found[r.Location]; h == nil || r.Tracking.Status.Live() {
					found[r.Location] = &baseHit{rootIdx: i, row: r}
				}
			}
		case v4manifest.ContentDeleteManifest:
			rows, err := s.readLeaf(ctx, w, st, rr, nil)
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

// checkBases validates every base file and compares its state with the
// first attempt's: a base changed by a concurrent commit is a 409.
func (cc *columnsCommit) checkBases(byBase map[string][]validation.ColumnFile, found map[string]*baseHit) error {
	states := map[string]baseState{}
	for base, fs := range byBase {
		h := found[base]
		b := validation.Base{}
		if h != nil {
			b = validation.Base{Found: true, Live: h.row.Tracking.Status.Live(), IsData: h.row.ContentType == v4manifest.ContentData, RecordCount: h.row.RecordCount}
		}
		for _, f := range fs {
			if err := validation.CheckBase(f, b); err != nil {
				return err
			}
		}
		states[base] = stateOf(&h.row)
	}
	if cc.first == nil {
		cc.first = states
		return nil
	}
	for base, st := range states {
		if cc.first[base] != st {
			return newErr(KindCommitFailed, "Commit failed: data file %s was changed by a concurrent commit, nothing was committed; retry", base)
		}
	}
	return nil
}

// footerReaders bounds the concurrent footer reads of one commit.
const footerReaders = 8

// readFooters reads the footers of the column files not read by an earlier
// attempt (one ranged read each, at most footerReaders at a time) into
// footers, then validates each: 400 for an unreadable or mismatched file.
// Workers return results by index; only this goroutine touches the map.
func (s *Service) readFooters(ctx context.Context, w *store.Warehouse, files []validation.ColumnFile, vt validation.Table, footers map[string]*footerInfo) error {
	var todo []string
	for _, f := range files {
		if footers[f.Location] == nil && !slices.Contains(todo, f.Location) {
			todo = append(todo, f.Location)
		}
	}
	results := make([]*footerInfo, len(todo))
	var g errgroup.Group
	g.SetLimit(footerReaders)
	for i, loc := range todo {
		g.Go(func() error {
			results[i] = s.readColumnFooter(ctx, w, loc, vt.Schema)
			return nil
		})
	}
	_ = g.Wait() // workers report failures in their result, never as an error
	for i, loc := range todo {
		footers[loc] = results[i]
	}
	for _, f := range files {
		fi := footers[f.Location]
		vf := validation.Footer{Readable: fi.err == "", Err: fi.err, NumRows: fi.NumRows, Size: fi.Size, Nodes: fi.Nodes}
		if err := validation.CheckFooter(vt, f, vf); err != nil {
			return err
		}
	}
	return nil
}

// readColumnFooter reads one column file's footer; a failure is recorded in
// the result for validation to report.
func (s *Service) readColumnFooter(ctx context.Context, w *store.Warehouse, loc string, sc *iceberg.Schema) *footerInfo {
	io, err := s.fileIO(ctx, w, loc)
	if err == nil {
		var fi *footerInfo
		if fi, err = readFooter(ctx, io, loc, sc); err == nil {
			return fi
		}
	}
	return &footerInfo{NumRows: -1, Size: -1, Nodes: map[int]validation.FooterColumn{}, Columns: map[int]footerColumn{}, err: "cannot read the file's Parquet footer"}
}

// columnRewrite is what the leaf rewrite of a column-file commit needs.
type columnRewrite struct {
	byBase  map[string][]validation.ColumnFile
	found   map[string]*baseHit
	deletes []validation.DeleteFile
	footers map[string]*footerInfo
}

// columnCounts are the summary counts of a column-file commit.
type columnCounts struct{ added, retired, modified int }

// rewriteForColumns carries every live root row into the new root and
// rewrites, in full, only the leaves that hold a base file.
func (s *Service) rewriteForColumns(ctx context.Context, t *v4Tx, cr *columnRewrite) (columnCounts, error) {
	var n columnCounts
	affected := map[int]bool{}
	for _, h := range cr.found {
		affected[h.rootIdx] = true
	}
	for i, rr := range t.st.rootRows {
		if !rr.Tracking.Status.Live() {
			continue
		}
		if !affected[i] {
			if err := t.carry(rr); err != nil {
				return n, err
			}
			continue
		}
		rows, err := s.readLeaf(ctx, t.w, t.st, &rr, nil)
		if err != nil {
			return n, err
		}
		out, err := cr.rewriteLeaf(t, rows, &n)
		if err != nil {
			return n, err
		}
		if err := s.replaceLeaf(ctx, t, rr, out); err != nil {
			return n, err
		}
	}
	return n, nil
}

// rewriteLeaf turns each base file of one leaf into its REPLACED +
// MODIFIED pair and carries the other live rows forward. 400 when an
// equality delete could apply to a base file's rows.
func (cr *columnRewrite) rewriteLeaf(t *v4Tx, rows []v4manifest.TrackedFile, n *columnCounts) ([]v4manifest.TrackedFile, error) {
	eq := func(a, b any) bool { c, err := compareAny(a, b); return err == nil && c == 0 }
	out := make([]v4manifest.TrackedFile, 0, len(rows)+len(cr.byBase))
	for _, r := range rows {
		if !r.Tracking.Status.Live() {
			continue
		}
		fs, isBase := cr.byBase[r.Location]
		if !isBase {
			cf, err := v4manifest.CarryForward(r)
			if err != nil {
				return nil, wrapErr(KindInternal, err, "carry forward a leaf row")
			}
			out = append(out, cf)
			continue
		}
		baseSeq, spec := deref(r.Tracking.SequenceNumber), 0
		if r.SpecID != nil {
			spec = int(*r.SpecID)
		}
		for _, f := range fs {
			if err := validation.CheckEqualityDeletes(f, baseSeq, spec, r.Partition, cr.deletes, eq); err != nil {
				return nil, err
			}
		}
		replaced := r
		replaced.Tracking.Status = v4manifest.StatusReplaced
		replaced.Tracking.SnapshotID = ptrTo(t.snapID)
		mod, nAdded, nRetired := modifiedRow(r, fs, cr.footers, t.snapID, t.seq)
		if mod.SortOrderID != nil && sortedBy(t.st.meta.SortOrders(), int(*mod.SortOrderID), fs) {
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
// updated fields replaced by the column files' (unknown when not derivable),
// everything else kept.
func modifiedRow(r v4manifest.TrackedFile, fs []validation.ColumnFile, footers map[string]*footerInfo, snapID, seq int64) (v4manifest.TrackedFile, int, int) {
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
		byLoc[f.Location] = v4manifest.ColumnFile{FormatVersion: FormatV4, Location: f.Location, FileFormat: "parquet", FileSizeInBytes: f.FileSizeInBytes}
	}
	merged := validation.MergeColumnFiles(old, fs)
	mod := r
	mod.Tracking.Status = v4manifest.StatusModified
	mod.Tracking.SequenceNumber = ptrTo(seq)
	mod.Tracking.LatestColumnFileSnapshotID = ptrTo(snapID)
	mod.ColumnFiles = make([]v4manifest.ColumnFile, 0, len(merged.Files))
	for _, m := range merged.Files {
		cf := byLoc[m.Location]
		cf.FieldIDs = make([]int32, len(m.FieldIDs))
		for i, id := range m.FieldIDs {
			cf.FieldIDs[i] = int32(id)
		}
		mod.ColumnFiles = append(mod.ColumnFiles, cf)
	}
	stats := map[int]*v4manifest.FieldStats{}
	for id, v := range r.ContentStats {
		stats[id] = v
	}
	for _, f := range fs {
		fi := footers[f.Location]
		for _, id := range f.FieldIDs {
			delete(stats, id)
			if c, ok := fi.Columns[id]; ok && c.Stats != nil {
				stats[id] = c.Stats
			}
		}
	}
	mod.ContentStats = stats
	if len(stats) == 0 {
		mod.ContentStats = nil
	}
	added := 0
	for _, m := range merged.Files {
		if m.New {
			added++
		}
	}
	return mod, added, merged.Retired
}

// readLeaf reads a leaf referenced by root row rr with inheritance applied.
// Narrow reads (a column projection) are cached: manifests are immutable
// once written, so a cached read never goes stale and replicas need not
// agree on it; the key includes what the rows inherit from rr.
func (s *Service) readLeaf(ctx context.Context, w *store.Warehouse, st *v4State, rr *v4manifest.TrackedFile, cols []int) ([]v4manifest.TrackedFile, error) {
	loc := v4manifest.Resolve(st.location, rr.Location)
	if cols == nil {
		return s.readManifest(ctx, w, loc, st.location, rr, nil)
	}
	key := fmt.Sprintf("%s|%v|%d|%d|%d|%d", loc, cols, deref(rr.Tracking.SnapshotID), deref(rr.Tracking.SequenceNumber),
		deref(rr.Tracking.FileSequenceNumber), deref(rr.Tracking.FirstRowID))
	if rows, ok := s.leafCache.Get(key); ok {
		return rows, nil
	}
	rows, err := s.readManifest(ctx, w, loc, st.location, rr, cols)
	if err != nil {
		return nil, err
	}
	s.leafCache.Add(key, rows)
	return rows, nil
}

func deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// loadV4At loads a v4 table with the root rows of a snapshot (the current
// one when snapshotID is nil): 404 for an unknown snapshot.
func (s *Service) loadV4At(ctx context.Context, warehouse string, id Ident, snapshotID *int64) (*store.Warehouse, *v4State, error) {
	if err := s.authorize(ctx, PrivTableReadData, tableResource(warehouse, id)); err != nil {
		return nil, nil, err
	}
	w, err := s.warehouse(ctx, warehouse)
	if err != nil {
		return nil, nil, err
	}
	st, err := s.loadV4(ctx, w, id)
	if err != nil {
		return nil, nil, validationErr(err)
	}
	if snapshotID != nil {
		snap := st.meta.SnapshotByID(*snapshotID)
		if snap == nil {
			return nil, nil, newErr(KindNotFound, "Snapshot %d does not exist in %s", *snapshotID, id)
		}
		if st.rootRows, err = s.readManifest(ctx, w, snap.ManifestList, st.location, nil, nil); err != nil {
			return nil, nil, err
		}
	}
	return w, st, nil
}

// LiveColumnFiles lists, per base data file with column files, its live
// column files at a snapshot (the current one when snapshotID is nil).
func (s *Service) LiveColumnFiles(ctx context.Context, warehouse string, id Ident, snapshotID *int64) ([]BaseColumnFiles, error) {
	w, st, err := s.loadV4At(ctx, warehouse, id, snapshotID)
	if err != nil {
		return nil, err
	}
	var out []BaseColumnFiles
	for i := range st.rootRows {
		rr := &st.rootRows[i]
		if !rr.Tracking.Status.Live() || rr.ContentType != v4manifest.ContentDataManifest {
			continue
		}
		rows, err := s.readLeaf(ctx, w, st, rr, []int{v4manifest.IDLocation, v4manifest.IDTracking, v4manifest.IDColumnFiles})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.Tracking.Status.Live() && len(r.ColumnFiles) > 0 {
				out = append(out, BaseColumnFiles{DataFile: r.Location, ColumnFiles: columnFileRefs(r.ColumnFiles)})
			}
		}
	}
	slices.SortFunc(out, func(a, b BaseColumnFiles) int { return strings.Compare(a.DataFile, b.DataFile) })
	return out, nil
}

// ScanTask is one data file to read, with the column files that override
// some of its columns.
type ScanTask struct {
	Location   string
	FileFormat string
	SpecID     int32
	Partition  map[int]any
	// PartitionValues are the partition values in the spec's field order.
	PartitionValues []any
	RecordCount     int64
	FileSizeInBytes int64
	FirstRowID      *int64
	ColumnFiles     []ColumnFileRef
	DeletionVector  *DeletionVectorRef
}

// PlanScan lists the live data files of a v4 table at a snapshot (default:
// current). When any of them has column files and the client did not say it
// understands them, it fails with 400 reason column-files-unsupported-by-client:
// a reader that ignored them would return stale values.
func (s *Service) PlanScan(ctx context.Context, warehouse string, id Ident, snapshotID *int64, columnFilesOK bool) ([]ScanTask, error) {
	w, st, err := s.loadV4At(ctx, warehouse, id, snapshotID)
	if err != nil {
		return nil, err
	}
	tasks := []ScanTask{}
	for i := range st.rootRows {
		rr := &st.rootRows[i]
		if !rr.Tracking.Status.Live() || rr.ContentType != v4manifest.ContentDataManifest {
			continue
		}
		rows, err := s.readLeaf(ctx, w, st, rr, nil)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if !r.Tracking.Status.Live() || r.ContentType != v4manifest.ContentData {
				continue
			}
			if len(r.ColumnFiles) > 0 && !columnFilesOK {
				e := newErr(KindBadRequest, "Table %s has column files; send X-Iceberg-Column-Files: true to receive them", id)
				e.Reason = validation.ReasonColumnFilesUnsupported
				return nil, e
			}
			t := ScanTask{Location: r.Location, FileFormat: r.FileFormat, Partition: r.Partition, RecordCount: r.RecordCount,
				FileSizeInBytes: r.FileSizeInBytes, FirstRowID: r.Tracking.FirstRowID, ColumnFiles: columnFileRefs(r.ColumnFiles),
				DeletionVector: deletionVectorRef(r.DeletionVector)}
			if r.SpecID != nil {
				t.SpecID = *r.SpecID
			}
			t.PartitionValues = []any{}
			if spec := st.meta.PartitionSpecByID(int(t.SpecID)); spec != nil {
				for _, pf := range spec.Fields() {
					t.PartitionValues = append(t.PartitionValues, r.Partition[pf.FieldID])
				}
			}
			tasks = append(tasks, t)
		}
	}
	return tasks, nil
}

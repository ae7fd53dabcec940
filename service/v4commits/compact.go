package v4commits

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/lakehold/catalog/internal/compact"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/parquetstats"
	"github.com/lakehold/catalog/internal/requirements"
	"github.com/lakehold/catalog/internal/stitch"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/internal/v4tree"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/service/v4read"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// CompactionCandidate is a base data file the plan picks for folding, with
// what a rewrite reads and why it was picked.
type CompactionCandidate struct {
	DataFile        string
	RecordCount     int64
	FileSizeInBytes int64
	FirstRowID      int64
	ColumnFiles     []v4read.ColumnFileRef
	DeletionVector  *v4read.DeletionVectorRef
	// RetiredBytes are bytes no read uses (see compact.Retired).
	RetiredBytes int64
	RetiredRatio float64
	Reasons      []string
}

// CompactionPlan lists the bases of the current snapshot worth folding.
type CompactionPlan struct {
	SnapshotID      *int64
	MaxFiles        int
	MaxRetiredRatio float64
	Candidates      []CompactionCandidate
}

// compactCols are the leaf columns planning reads.
var compactCols = []int{v4manifest.IDLocation, v4manifest.IDTracking, v4manifest.IDContentType, v4manifest.IDRecordCount,
	v4manifest.IDFileSize, v4manifest.IDColumnFiles, v4manifest.IDDeletionVector}

// PlanCompaction picks the base files of a v4 table's current snapshot
// whose column files or retired bytes pass the thresholds in the table
// properties (compact.PropMaxFiles, compact.PropMaxRetiredRatio). It
// needs write-data: 403 when denied, 404 for an unknown table, 400
// (table-not-v4) for another format version or a bad threshold property,
// 500 when a footer of a candidate's file cannot be read.
func (cm *Committer) PlanCompaction(ctx context.Context, warehouse string, id ident.Ident) (*CompactionPlan, error) {
	return cm.planCompaction(ctx, warehouse, id, nil)
}

// planCompaction is PlanCompaction with the thresholds given (nil: the
// table's).
func (cm *Committer) planCompaction(ctx context.Context, warehouse string, id ident.Ident, given *compact.Thresholds) (*CompactionPlan, error) {
	w, err := cm.writeTarget(ctx, warehouse, id)
	if err != nil {
		return nil, err
	}
	st, err := cm.Load(ctx, w, id)
	if err != nil {
		return nil, validationErr(err)
	}
	th, err := compact.ThresholdsFrom(tableaccess.WithWarehouseDefaults(w, st.meta.Properties(), compact.PropMaxFiles, compact.PropMaxRetiredRatio))
	if err != nil {
		return nil, fault.New(fault.BadRequest, "%s", err.Error())
	}
	if given != nil {
		th = *given
	}
	plan := &CompactionPlan{MaxFiles: th.MaxFiles, MaxRetiredRatio: th.MaxRetiredRatio, Candidates: []CompactionCandidate{}}
	if cur := st.meta.CurrentSnapshot(); cur != nil {
		plan.SnapshotID = ptrTo(cur.SnapshotID)
	}
	rows, err := cm.foldableRows(ctx, w, st)
	if err != nil {
		return nil, err
	}
	bases, err := cm.measureBases(ctx, w, st, rows)
	if err != nil {
		return nil, err
	}
	byLoc := map[string]*v4manifest.TrackedFile{}
	for i := range rows {
		byLoc[rows[i].Location] = &rows[i]
	}
	for _, p := range compact.Select(bases, th) {
		r := byLoc[p.Location]
		plan.Candidates = append(plan.Candidates, CompactionCandidate{
			DataFile: r.Location, RecordCount: r.RecordCount, FileSizeInBytes: r.FileSizeInBytes,
			FirstRowID: v4read.Deref(r.Tracking.FirstRowID), ColumnFiles: v4read.ColumnFileRefs(r.ColumnFiles),
			DeletionVector: v4read.DeletionVectorRefOf(r.DeletionVector), RetiredBytes: p.Retired, RetiredRatio: p.RetiredRatio, Reasons: p.Reasons,
		})
	}
	return plan, nil
}

// foldableRows are the live data files of st's current snapshot that have
// column files or a deletion vector.
func (cm *Committer) foldableRows(ctx context.Context, w *store.Warehouse, st *State) ([]v4manifest.TrackedFile, error) {
	var out []v4manifest.TrackedFile
	for i := range st.rootRows {
		rr := &st.rootRows[i]
		rows, err := cm.readers.DataRows(ctx, w, st.location, rr, compactCols)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.Tracking.Status.Live() && r.ContentType == v4manifest.ContentData && (len(r.ColumnFiles) > 0 || r.DeletionVector != nil) {
				r.Location = v4manifest.Resolve(st.location, r.Location)
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// measureBases reads the footers of each row's base and column files (at
// most footerReaders at a time) to count its retired bytes.
func (cm *Committer) measureBases(ctx context.Context, w *store.Warehouse, st *State, rows []v4manifest.TrackedFile) ([]compact.Base, error) {
	out := make([]compact.Base, len(rows))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(footerReaders)
	for i := range rows {
		g.Go(func() error {
			b, err := cm.measureBase(gctx, w, st, &rows[i])
			out[i] = b
			return err
		})
	}
	return out, g.Wait()
}

func (cm *Committer) measureBase(ctx context.Context, w *store.Warehouse, st *State, r *v4manifest.TrackedFile) (compact.Base, error) {
	b := compact.Base{Location: r.Location, RecordCount: r.RecordCount, SizeInBytes: r.FileSizeInBytes, ColumnFiles: len(r.ColumnFiles)}
	if r.DeletionVector != nil {
		b.Deleted = r.DeletionVector.Cardinality
	}
	base, err := cm.columnBytes(ctx, w, st, r.Location)
	if err != nil {
		return b, err
	}
	files := make([]compact.FileColumns, len(r.ColumnFiles))
	for i, cf := range r.ColumnFiles {
		loc := v4manifest.Resolve(st.location, cf.Location)
		if files[i].Bytes, err = cm.columnBytes(ctx, w, st, loc); err != nil {
			return b, err
		}
		for _, id := range cf.FieldIDs {
			files[i].Live = append(files[i].Live, int(id))
		}
	}
	b.Retired = compact.Retired(base, files, r.RecordCount, b.Deleted)
	return b, nil
}

// columnBytes reads the per-field compressed bytes of the Parquet file at
// loc: a 500 naming the file (relative to the table) when it cannot.
func (cm *Committer) columnBytes(ctx context.Context, w *store.Warehouse, st *State, loc string) (map[int]int64, error) {
	io, err := cm.d.Tables.FileIO(ctx, w, loc)
	if err != nil {
		return nil, err
	}
	f, err := io.Open(ctx, loc)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "cannot open %s to plan compaction", locations.TableFileName(st.location, loc))
	}
	defer f.Close()
	// Planning only: an invalid mapping counts as none (the fold reports it).
	nm, _ := parquetstats.ParseNameMapping(st.meta.Properties()[table.DefaultNameMappingKey])
	out, err := compact.ColumnBytes(f, nm)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "cannot read the footer of %s to plan compaction", locations.TableFileName(st.location, loc))
	}
	return out, nil
}

// CompactionRewrite is one folded base: what the rewrite read and the file
// it wrote.
type CompactionRewrite struct {
	DataFile string
	// ColumnFiles are the column files the rewrite read (all of the base's).
	ColumnFiles []string
	// DeletionVector is the one it applied; nil when the base had none.
	DeletionVector *v4read.DeletionVectorRef
	// Location, FileSizeInBytes and RecordCount describe the new file.
	Location        string
	FileSizeInBytes int64
	RecordCount     int64
}

// CompactionCommit replaces base data files (with their column files and
// deletion vectors) by rewritten files.
type CompactionCommit struct {
	Ident              ident.Ident
	Requirements       json.RawMessage
	Rewrites           []CompactionRewrite
	SnapshotProperties map[string]string
}

// CommitCompaction replaces each named base by its rewritten file in one
// replace snapshot: the base's first_row_id and data sequence number are
// kept and no row ids are assigned. 400 ValidationException with a reason
// for a new file that is unreadable, outside the table, of the wrong size
// or row count (base rows − deleted rows) or without a _row_id column, or
// a base that is not live; 409 when a base's column files or deletion
// vector are not those the rewrite read (someone updated it meanwhile),
// when requirements fail or retries run out.
func (cm *Committer) CommitCompaction(ctx context.Context, warehouse string, c CompactionCommit) (*Result, error) {
	w, reqs, err := cm.v4Target(ctx, warehouse, c.Ident, c.Requirements)
	if err != nil {
		return nil, err
	}
	if len(c.Rewrites) == 0 {
		return nil, fault.New(fault.BadRequest, "A compaction commit needs at least one rewrite")
	}
	footers := map[string]*columnFooter{}
	var res *Result
	err = cm.engine.Run(ctx, w, "table", func(ctx context.Context) (*commitengine.Attempt, error) {
		a := &commitengine.Attempt{}
		var err error
		res, err = cm.stageCompaction(ctx, w, c, reqs, footers, a)
		return a, validationErr(err)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// stageCompaction stages one attempt of a compaction commit into a.
func (cm *Committer) stageCompaction(ctx context.Context, w *store.Warehouse, c CompactionCommit, reqs []requirements.Requirement, footers map[string]*columnFooter, a *commitengine.Attempt) (_ *Result, err error) {
	st, err := cm.Load(ctx, w, c.Ident)
	if err != nil {
		return nil, err
	}
	defer func() { err = relativizeValidation(err, st.location) }()
	if err := requirements.Check(reqs, st.meta); err != nil {
		return nil, err
	}
	folds := make([]v4tree.Fold, 0, len(c.Rewrites))
	for _, rw := range c.Rewrites {
		f, err := cm.foldOf(ctx, w, st, rw, footers)
		if err != nil {
			return nil, err
		}
		folds = append(folds, f)
	}
	t := cm.NewTx(w, st, a)
	read := cm.leafReader(ctx, t)
	leaves, err := cm.compactionLeaves(ctx, t, read, folds)
	if err != nil {
		return nil, err
	}
	res, err := v4tree.CommitCompaction(st.rootRows, read, t.Snapshot(),
		v4tree.Compaction{Folds: folds, Leaves: leaves, SnapshotProperties: c.SnapshotProperties})
	var ce *v4tree.ConflictError
	if errors.As(err, &ce) {
		return nil, fault.New(fault.CommitFailed, "%s", ce.Message)
	}
	if err != nil {
		return nil, engineErr(err)
	}
	return cm.StageSnapshot(ctx, t, res)
}

// compactionLeaves finds, through the base-file index, the data leaves
// that may hold a folded base or name a new file, so that the tree
// rewrite reads only those. A 400 for a new file that is already a live
// column file or equality-delete file (the rewrite refuses one that is a
// live data file): once the folded base's files are expired, it would be
// deleted under its other reference.
func (cm *Committer) compactionLeaves(ctx context.Context, t *Tx, read v4tree.LeafReader, folds []v4tree.Fold) (map[int]bool, error) {
	want := map[string][]validation.ColumnFile{}
	for _, f := range folds {
		want[f.Base], want[f.New.Location] = nil, nil
	}
	live, err := cm.findLive(ctx, t, read, want)
	if err != nil {
		return nil, err
	}
	for _, f := range folds {
		name := locations.TableFileName(t.st.location, f.New.Location)
		if owner, ok := live.columnOwner[f.New.Location]; ok {
			return nil, fault.New(fault.BadRequest, "compaction: %s is already a live column file of %s", name, locations.TableFileName(t.st.location, owner))
		}
		if slices.ContainsFunc(live.deletes, func(d validation.DeleteFile) bool { return t.resolve(d.Location) == f.New.Location }) {
			return nil, fault.New(fault.BadRequest, "compaction: %s is already a live equality-delete file", name)
		}
	}
	leaves := map[int]bool{}
	for _, h := range live.data {
		leaves[h.RootIndex] = true
	}
	return leaves, nil
}

// foldOf validates one rewrite's new file (its footer read once per
// commit, kept in footers) and resolves its locations.
func (cm *Committer) foldOf(ctx context.Context, w *store.Warehouse, st *State, rw CompactionRewrite, footers map[string]*columnFooter) (v4tree.Fold, error) {
	if rw.DataFile == "" || rw.Location == "" {
		return v4tree.Fold{}, fault.New(fault.BadRequest, "Compaction: data-file and location are required")
	}
	f := v4tree.Fold{Base: v4manifest.Resolve(st.location, rw.DataFile)}
	for _, cf := range rw.ColumnFiles {
		f.ColumnFiles = append(f.ColumnFiles, v4manifest.Resolve(st.location, cf))
	}
	if d := rw.DeletionVector; d != nil {
		f.DeletionVector = &v4manifest.DeletionVector{Location: v4manifest.Resolve(st.location, d.Location), Offset: d.Offset, SizeInBytes: d.SizeInBytes, Cardinality: d.Cardinality}
	}
	loc := v4manifest.Resolve(st.location, rw.Location)
	if err := cm.fileInTable(w, st, loc, "rewritten data file"); err != nil {
		return f, err
	}
	name := locations.TableFileName(st.location, loc)
	sc := st.meta.CurrentSchema()
	if footers[loc] == nil {
		footers[loc] = cm.readColumnFooter(ctx, w, loc, sc)
	}
	fi := footers[loc].fi
	switch {
	case fi == nil:
		return f, Reject(validation.ReasonDataFileUnreadable, "Rewritten data file %s: cannot read its Parquet footer", name)
	case fi.NumRows != rw.RecordCount:
		return f, Reject(validation.ReasonRecordCountMismatch, "Rewritten data file %s has %d rows, not record-count %d", name, fi.NumRows, rw.RecordCount)
	case fi.Size != rw.FileSizeInBytes:
		return f, Reject(validation.ReasonFileSizeMismatch, "Rewritten data file %s is %d bytes, not file-size-in-bytes %d", name, fi.Size, rw.FileSizeInBytes)
	}
	if err := checkFileSchema(st.fileCheck(validation.UseData, "Rewritten data file", name, nil), fi.Tree); err != nil {
		return f, err
	}
	if _, ok := fi.Nodes[v4manifest.FieldRowID]; !ok {
		return f, Reject(validation.ReasonRowIDsNotMaterialized, "Rewritten data file %s has no _row_id column (field id %d)", name, v4manifest.FieldRowID)
	}
	f.New = v4manifest.TrackedFile{Location: loc, RecordCount: rw.RecordCount, FileSizeInBytes: rw.FileSizeInBytes,
		ContentStats: map[int]*v4manifest.FieldStats{}}
	for id, col := range fi.Columns {
		if _, known := sc.FindFieldByID(id); known && col.Stats != nil {
			f.New.ContentStats[id] = col.Stats
		}
	}
	return f, nil
}

// CompactOptions tune Compact.
type CompactOptions struct {
	// DryRun plans only: nothing is written or committed.
	DryRun bool
	// Thresholds, when set, replace the table's (compact.ThresholdsFrom):
	// MaxFiles 0 picks every base with column files.
	Thresholds *compact.Thresholds
}

// FoldReport is what Compact did to one base.
type FoldReport struct {
	DataFile string
	NewFile  string
	// RowsBefore counts the base's rows, deleted ones included.
	RowsBefore, RowsAfter int64
	// BytesBefore is the base plus its column files; BytesAfter the new file.
	BytesBefore, BytesAfter int64
	// Error is why this base was not folded ("" when it was).
	Error string
	// err is the failure behind Error, for callers that answer with it.
	err error
}

// CompactionReport is the outcome of Compact.
type CompactionReport struct {
	Plan  *CompactionPlan
	Folds []FoldReport
}

// Compact plans a v4 table's compaction and runs it in this process: each
// picked base is rewritten with package compact (row ids kept, deleted
// rows dropped) into a new file in the table's data location (dataLocation) and
// committed on its own, so that one base updated meanwhile (a 409, its new
// file deleted again) does not undo the others. Errors are those of
// PlanCompaction; a failed fold is reported in its FoldReport.
func (cm *Committer) Compact(ctx context.Context, warehouse string, id ident.Ident, opt CompactOptions) (*CompactionReport, error) {
	plan, err := cm.planCompaction(ctx, warehouse, id, opt.Thresholds)
	if err != nil {
		return nil, err
	}
	rep := &CompactionReport{Plan: plan, Folds: []FoldReport{}}
	if opt.DryRun || len(plan.Candidates) == 0 {
		return rep, nil
	}
	w, err := cm.d.Tables.Warehouse(ctx, warehouse)
	if err != nil {
		return nil, err
	}
	st, err := cm.Load(ctx, w, id)
	if err != nil {
		return nil, validationErr(err)
	}
	for _, c := range plan.Candidates {
		rep.Folds = append(rep.Folds, cm.foldOne(ctx, w, st, id, warehouse, c))
	}
	return rep, nil
}

// foldOne rewrites and commits one candidate; failures land in the report
// with a client-safe message.
func (cm *Committer) foldOne(ctx context.Context, w *store.Warehouse, st *State, id ident.Ident, warehouse string, c CompactionCandidate) FoldReport {
	fr := FoldReport{DataFile: v4manifest.Relativize(st.location, c.DataFile), RowsBefore: c.RecordCount, BytesBefore: c.FileSizeInBytes}
	task := stitch.Task{DataFile: c.DataFile, RecordCount: c.RecordCount}
	nm, err := parquetstats.ParseNameMapping(st.meta.Properties()[table.DefaultNameMappingKey])
	if err != nil {
		fr.Error = "the table's schema.name-mapping.default is not a name mapping"
		fr.err = fault.New(fault.BadRequest, "%s", fr.Error)
		return fr
	}
	// A base written without field ids is read through the mapping (the
	// folded file carries the ids).
	task.NameMapping = nm
	rw := CompactionRewrite{DataFile: c.DataFile, DeletionVector: c.DeletionVector}
	for _, cf := range c.ColumnFiles {
		loc := v4manifest.Resolve(st.location, cf.Location)
		task.ColumnFiles = append(task.ColumnFiles, stitch.ColumnFile{Location: loc, FieldIDs: cf.FieldIDs})
		rw.ColumnFiles = append(rw.ColumnFiles, loc)
		fr.BytesBefore += cf.FileSizeInBytes
	}
	if d := c.DeletionVector; d != nil {
		task.DeletionVector = &stitch.DeletionVector{Location: v4manifest.Resolve(st.location, d.Location), Offset: d.Offset,
			SizeInBytes: d.SizeInBytes, Cardinality: d.Cardinality}
	}
	var buf bytes.Buffer
	out, err := compact.Rewrite(ctx, cm.stitchOpener(w), &buf, compact.Input{Task: task, FirstRowID: c.FirstRowID, Schema: st.meta.CurrentSchema()})
	if err != nil {
		cm.log.WarnContext(ctx, "compaction rewrite failed", "table", id.String(), "file", fr.DataFile, "error", strings.ReplaceAll(storage.PathFree(err).Error(), st.location, "<table>"))
		fr.err = rewriteFailure(err, fr.DataFile)
		fr.Error = fault.ClientText(fr.err)
		return fr
	}
	newLoc := locations.DataLocation(st.location, st.meta.Properties()) + "/compacted-" + uuid.NewString() + ".parquet"
	if !locations.TablePrefixes(w, st.location).Contains(newLoc) {
		// Commits vet write.data.path; metadata from before that rule may
		// still name a place outside the table.
		fr.Error = "the table's data location (write.data.path) lies outside the table"
		fr.err = fault.New(fault.BadRequest, "%s", fr.Error)
		return fr
	}
	if err := cm.d.Tables.WriteFile(ctx, w, newLoc, buf.Bytes()); err != nil {
		fr.Error, fr.err = "cannot write the rewritten file", err
		return fr
	}
	rw.Location, rw.FileSizeInBytes, rw.RecordCount = newLoc, out.Bytes, out.Rows
	if _, err := cm.CommitCompaction(ctx, warehouse, CompactionCommit{Ident: id, Rewrites: []CompactionRewrite{rw}}); err != nil {
		cm.engine.DropUnlanded(ctx, w, err, newLoc)
		fr.Error, fr.err = fault.ClientText(err), err
		return fr
	}
	fr.NewFile, fr.RowsAfter, fr.BytesAfter = v4manifest.Relativize(st.location, newLoc), out.Rows, out.Bytes
	return fr
}

// stitchOpener opens the files of w for package stitch.
func (cm *Committer) stitchOpener(w *store.Warehouse) stitch.Opener {
	return func(ctx context.Context, loc string) (stitch.File, error) {
		io, err := cm.d.Tables.FileIO(ctx, w, loc)
		if err != nil {
			return nil, err
		}
		return io.Open(ctx, loc)
	}
}

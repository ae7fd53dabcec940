package v4commits

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"golang.org/x/sync/errgroup"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/parquetstats"
	"github.com/lakehold/catalog/internal/requirements"
	"github.com/lakehold/catalog/internal/v4tree"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/v4read"
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
	Ident              ident.Ident
	Requirements       json.RawMessage
	ColumnFiles        []ColumnFileInput
	SnapshotProperties map[string]string
}

// BaseColumnFiles is a base data file with its live column files.
type BaseColumnFiles struct {
	DataFile    string
	ColumnFiles []v4read.ColumnFileRef
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
		e := fault.New(fault.Validation, "%s", ve.Message)
		e.Reason = ve.Reason
		e.Details = ve.Details
		return e
	}
	return err
}

// CommitColumnFiles validates a column-file commit (every rule a 400 with a
// reason, nothing changed), marks each base's old row REPLACED through its
// leaf's manifest deletion vector (or rewrites a leaf whose live rows are
// all bases), puts the MODIFIED rows with the merged column files and
// stats in the root manifest (v4tree.CommitColumns) and commits an
// overwrite snapshot. Concurrent commits on other base files are
// re-based; a concurrent change to one of ours is a 409.
func (cm *Committer) CommitColumnFiles(ctx context.Context, warehouse string, c ColumnFilesCommit) (*Result, error) {
	w, reqs, err := cm.v4Target(ctx, warehouse, c.Ident, c.Requirements)
	if err != nil {
		return nil, err
	}
	if len(c.ColumnFiles) == 0 {
		e := fault.New(fault.BadRequest, "A column-files commit needs at least one column file")
		e.Reason = validation.ReasonEmptyCommit
		return nil, e
	}
	cc := &columnsCommit{ColumnFilesCommit: c, reqs: reqs, footers: map[string]*columnFooter{}}
	var res *Result
	err = cm.engine.Run(ctx, w, "table", func(ctx context.Context) (*commitengine.Attempt, error) {
		a := &commitengine.Attempt{}
		var err error
		res, err = cm.stageColumns(ctx, w, cc, a)
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
	reqs    []requirements.Requirement
	first   map[string]v4tree.BaseState
	footers map[string]*columnFooter // by column file location; owned by the commit's goroutine
}

// columnFooter is a column file's footer, or why it could not be read.
type columnFooter struct {
	fi  *parquetstats.Footer
	err string
}

// stageColumns stages one attempt of a column-file commit into a.
// Validation messages name files relative to the table.
func (cm *Committer) stageColumns(ctx context.Context, w *store.Warehouse, cc *columnsCommit, a *commitengine.Attempt) (_ *Result, err error) {
	st, err := cm.Load(ctx, w, cc.Ident)
	if err != nil {
		return nil, err
	}
	defer func() { err = relativizeValidation(err, st.location) }()
	if err := requirements.Check(cc.reqs, st.meta); err != nil {
		return nil, err
	}
	vt := validation.Table{Location: st.location, Schema: st.meta.CurrentSchema(), Specs: st.meta.PartitionSpecs()}
	files := resolveColumnFiles(st.location, cc.ColumnFiles)
	for _, f := range files {
		if err := cm.fileInTable(w, st, f.Location, "column file"); err != nil {
			return nil, err
		}
	}
	if err := uniqueColumnFiles(st, files); err != nil {
		return nil, err
	}
	if err := validation.CheckRequest(vt, files); err != nil {
		return nil, err
	}
	byBase := v4tree.GroupByBase(files)
	t := cm.NewTx(w, st, a)
	read := cm.leafReader(ctx, t)
	found, deletes, err := cm.findColumnTargets(ctx, t, read, files, byBase)
	if err != nil {
		return nil, err
	}
	if err := cc.checkBases(byBase, found); err != nil {
		return nil, err
	}
	if err := cm.readFooters(ctx, w, files, vt, cc.footers); err != nil {
		return nil, err
	}
	bases, owners, err := cm.baseDetails(ctx, t, read, found)
	if err != nil {
		return nil, err
	}
	if err := cm.checkColumnSchemas(ctx, w, st, files, bases, owners, cc.footers); err != nil {
		return nil, err
	}
	res, err := v4tree.CommitColumns(st.rootRows, read, t.Snapshot(), v4tree.Columns{
		ByBase: byBase, Found: found, Deletes: deletes, Stats: cc.columnStats(files),
		SortOrders: st.meta.SortOrders(), SnapshotProperties: cc.SnapshotProperties,
		ReadRows: func(rr *v4manifest.TrackedFile, positions map[int64]bool) ([]v4manifest.TrackedFile, error) {
			return cm.readers.ManifestWith(ctx, w, v4manifest.Resolve(st.location, rr.Location),
				v4manifest.ReaderOptions{TableLocation: st.location, InheritFrom: rr, Positions: positions})
		},
	})
	if err != nil {
		return nil, engineErr(err)
	}
	return cm.StageSnapshot(ctx, t, res)
}

// columnStats are the typed stats of the column files, by location and
// field id, from their footers.
func (cc *columnsCommit) columnStats(files []validation.ColumnFile) map[string]map[int]*v4manifest.FieldStats {
	out := map[string]map[int]*v4manifest.FieldStats{}
	for _, f := range files {
		cf := cc.footers[f.Location]
		if cf == nil || cf.fi == nil || out[f.Location] != nil {
			continue
		}
		stats := map[int]*v4manifest.FieldStats{}
		for id, c := range cf.fi.Columns {
			if c.Stats != nil {
				stats[id] = c.Stats
			}
		}
		out[f.Location] = stats
	}
	return out
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

// checkBases validates every base file and compares its state with the
// first attempt's: 400 for an invalid base, 409 for a base changed by a
// concurrent commit.
func (cc *columnsCommit) checkBases(byBase map[string][]validation.ColumnFile, found map[string]*v4tree.BaseHit) error {
	states, err := v4tree.CheckBases(byBase, found)
	if err != nil {
		return err
	}
	if cc.first == nil {
		cc.first = states
		return nil
	}
	for base, st := range states {
		if cc.first[base] != st {
			return fault.New(fault.CommitFailed, "Commit failed: data file %s was changed by a concurrent commit, nothing was committed; retry", base)
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
func (cm *Committer) readFooters(ctx context.Context, w *store.Warehouse, files []validation.ColumnFile, vt validation.Table, footers map[string]*columnFooter) error {
	var todo []string
	for _, f := range files {
		if footers[f.Location] == nil && !slices.Contains(todo, f.Location) {
			todo = append(todo, f.Location)
		}
	}
	results := make([]*columnFooter, len(todo))
	var g errgroup.Group
	g.SetLimit(footerReaders)
	for i, loc := range todo {
		g.Go(func() error {
			results[i] = cm.readColumnFooter(ctx, w, loc, vt.Schema)
			return nil
		})
	}
	_ = g.Wait() // workers report failures in their result, never as an error
	for i, loc := range todo {
		footers[loc] = results[i]
	}
	for _, f := range files {
		cf := footers[f.Location]
		vf := validation.Footer{Err: cf.err, NumRows: -1, Size: -1, Nodes: map[int]validation.FooterColumn{}}
		if cf.fi != nil {
			vf = validation.Footer{Readable: true, NumRows: cf.fi.NumRows, Size: cf.fi.Size, Nodes: cf.fi.Nodes}
			// Same reason as the files route: a column without a field id
			// (column files get no name mapping: readers find their
			// columns by id only).
			if err := validation.CheckFieldIDs("Column file", f.Location, cf.fi.Unidentified); err != nil {
				return err
			}
		}
		if err := validation.CheckFooter(vt, f, vf); err != nil {
			return err
		}
	}
	return nil
}

// readColumnFooter reads one column file's footer; a failure is recorded in
// the result for validation to report.
func (cm *Committer) readColumnFooter(ctx context.Context, w *store.Warehouse, loc string, sc *iceberg.Schema) *columnFooter {
	io, err := cm.d.Tables.FileIO(ctx, w, loc)
	if err == nil {
		var fi *parquetstats.Footer
		if fi, err = readFooter(ctx, io, loc, sc); err == nil {
			return &columnFooter{fi: fi}
		}
	}
	return &columnFooter{err: "cannot read the file's Parquet footer"}
}

// LoadAt loads a v4 table with the root rows of a snapshot (the current
// one when snapshotID is nil), authorizing table-read-data first: 403
// when denied, 404 for an unknown warehouse, table or snapshot, 400
// (table-not-v4) for another format version.
func (cm *Committer) LoadAt(ctx context.Context, warehouse string, id ident.Ident, snapshotID *int64) (*store.Warehouse, *State, error) {
	if err := cm.authorizeRead(ctx, warehouse, id); err != nil {
		return nil, nil, err
	}
	w, err := cm.d.Tables.Warehouse(ctx, warehouse)
	if err != nil {
		return nil, nil, err
	}
	st, err := cm.Load(ctx, w, id)
	if err != nil {
		return nil, nil, validationErr(err)
	}
	if snapshotID != nil {
		snap := st.meta.SnapshotByID(*snapshotID)
		if snap == nil {
			return nil, nil, fault.New(fault.NotFound, "Snapshot %d does not exist in %s", *snapshotID, id)
		}
		if st.rootRows, err = cm.readers.Root(ctx, w, snap.ManifestList, st.location); err != nil {
			return nil, nil, err
		}
	}
	return w, st, nil
}

// LiveColumnFiles lists, per base data file with column files, its live
// column files at a snapshot (the current one when snapshotID is nil).
// Errors are LoadAt's and those of the leaf reads.
func (cm *Committer) LiveColumnFiles(ctx context.Context, warehouse string, id ident.Ident, snapshotID *int64) ([]BaseColumnFiles, error) {
	w, st, err := cm.LoadAt(ctx, warehouse, id, snapshotID)
	if err != nil {
		return nil, err
	}
	var out []BaseColumnFiles
	for i := range st.rootRows {
		rr := &st.rootRows[i]
		rows, err := cm.readers.DataRows(ctx, w, st.location, rr, []int{v4manifest.IDLocation, v4manifest.IDTracking, v4manifest.IDColumnFiles})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.Tracking.Status.Live() && len(r.ColumnFiles) > 0 {
				out = append(out, BaseColumnFiles{DataFile: r.Location, ColumnFiles: v4read.ColumnFileRefs(r.ColumnFiles)})
			}
		}
	}
	slices.SortFunc(out, func(a, b BaseColumnFiles) int { return strings.Compare(a.DataFile, b.DataFile) })
	return out, nil
}

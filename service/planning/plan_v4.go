package planning

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/scanplan"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/v4read"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// ScanTask is one data file to read, with the column files that override
// some of its columns.
type ScanTask struct {
	Location   string
	FileFormat string
	SpecID     int32
	Partition  map[int]any
	// PartitionValues are the partition values in the spec's field order,
	// PartitionTypes their types (nil when unknown).
	PartitionValues []any
	PartitionTypes  []iceberg.Type
	RecordCount     int64
	FileSizeInBytes int64
	FirstRowID      *int64
	SortOrderID     *int32
	SplitOffsets    []int64
	// ValueCounts, NullValueCounts and NaNValueCounts are the file's
	// trusted column counts by field id (stale ones are left out).
	ValueCounts, NullValueCounts, NaNValueCounts map[int]int64
	ColumnFiles                                  []v4read.ColumnFileRef
	DeletionVector                               *v4read.DeletionVectorRef
	// DeleteRefs index Result.DeleteFiles: the delete files this task
	// applies (a v4 deletion vector is also listed there, as a Puffin
	// position-delete file).
	DeleteRefs []int
	// DataSequenceNumber is the entry's data sequence number, the
	// _last_updated_sequence_number its rows inherit; a column update
	// raises it to the update's (docs/column-files.md, row lineage).
	DataSequenceNumber int64
	// LatestColumnFileSnapshotID is the snapshot of the entry's last
	// column update (nil when it has no column files).
	LatestColumnFileSnapshotID *int64
	// ColumnFilesChangedSince is set, to the start snapshot, on a task of
	// an incremental plan for a base file whose columns changed in the
	// range: ColumnFiles then lists only the column files added in the
	// range, and only their fields (and the row-lineage columns) may be
	// read from the task.
	ColumnFilesChangedSince *int64
	// ColumnFileSequenceNumbers parallel ColumnFiles on such a task: the
	// data sequence number of the commit that added each column file.
	ColumnFileSequenceNumbers []int64
}

// PlanScan plans a scan of a table: the data files (and the delete files
// they need) that might hold rows matching req. It authorizes
// table-read-data, then plans v4 tables here and v1–v3 tables from their
// Avro manifests (planAvro); so are snapshots of a v4 table older than its
// upgrade (plansFromAvro). It fails with 400 for a bad filter, select or
// snapshot range, 404 for an unknown table or snapshot, and 400 reason
// column-files-unsupported-by-client when a planned file has column files
// for the selected columns and the client did not say it understands them.
// A plan with more than Deps.MaxPlanTasks tasks comes back as plan tasks
// (Result.PlanTasks) to fetch with FetchScanTasks.
func (pl *Planner) PlanScan(ctx context.Context, warehouse string, id ident.Ident, req Request) (Result, error) {
	w, md, version, err := pl.planTarget(ctx, warehouse, id)
	if err != nil {
		return Result{}, err
	}
	var res Result
	if version < tablemeta.FormatV4 || plansFromAvro(md, req) {
		res, err = pl.planAvro(ctx, w, md, req)
	} else {
		var p *scanPlanV4
		if p, err = pl.newV4Plan(w, id, md, req); err == nil {
			res, err = p.plan(ctx)
		}
	}
	res.Residual = residual(req.Filter)
	return res, err
}

// residual is the residual filter of a plan: the request's filter, which
// every returned file might match only in part (nil for none).
func residual(filter json.RawMessage) json.RawMessage {
	if f := bytes.TrimSpace(filter); len(f) > 0 && !bytes.Equal(f, []byte("null")) {
		return f
	}
	return nil
}

// planTarget authorizes table-read-data and loads the table to plan: 403
// (404 when hidden) when refused, 404 for an unknown warehouse or table.
func (pl *Planner) planTarget(ctx context.Context, warehouse string, id ident.Ident) (*store.Warehouse, table.Metadata, int, error) {
	if err := pl.authorizeRead(ctx, warehouse, id); err != nil {
		return nil, nil, 0, err
	}
	w, err := pl.d.Tables.Warehouse(ctx, warehouse)
	if err != nil {
		return nil, nil, 0, err
	}
	md, version, err := pl.loadTable(ctx, w, id)
	if err != nil {
		return nil, nil, 0, err
	}
	return w, md, version, nil
}

// scanPlanV4 is one scan plan (or one plan task) of a v4 table.
type scanPlanV4 struct {
	pl     *Planner
	w      *store.Warehouse
	id     ident.Ident
	st     *tableState // meta and location
	req    Request
	sc     *iceberg.Schema
	filter *scanplan.Filter
	parts  map[int]*scanplan.Filter // projected filters by spec id
	top    map[int]int              // field id → its top-level field id
	sel    map[int]bool             // selected top-level ids; nil = all
	stats  map[int]bool             // fields whose counts tasks carry; nil = all
	view   v4read.View              // what the plan reads from a leaf
	roots  map[int64][]v4manifest.TrackedFile
	// skip are the locations the append part of an incremental plan
	// leaves out: the column-change part returns them as of end.
	skip map[string]bool
	// leavesRead counts the leaf manifests read (for benchmarks).
	leavesRead int
}

// newV4Plan binds the request to the schema it names: 400 for a bad
// filter or select, 404 for an unknown snapshot.
func (pl *Planner) newV4Plan(w *store.Warehouse, id ident.Ident, md table.Metadata, req Request) (*scanPlanV4, error) {
	p := &scanPlanV4{pl: pl, w: w, id: id, st: &tableState{meta: md, location: md.Location()}, req: req,
		parts: map[int]*scanplan.Filter{}, roots: map[int64][]v4manifest.TrackedFile{}}
	sc := md.CurrentSchema()
	if req.UseSnapshotSchema {
		snap, err := p.snapshot(req.SnapshotID, req.EndSnapshotID)
		if err != nil {
			return nil, err
		}
		if snap != nil && snap.SchemaID != nil {
			if sc = schemaByID(md, *snap.SchemaID); sc == nil {
				return nil, fault.New(fault.Internal, "schema %d of snapshot %d is missing", *snap.SchemaID, snap.SnapshotID)
			}
		}
	}
	return p, p.bind(sc)
}

// bind binds the request's filter and select to sc.
func (p *scanPlanV4) bind(sc *iceberg.Schema) error {
	var err error
	p.sc = sc
	if p.filter, err = scanplan.Bind(p.req.Filter, sc, p.req.CaseSensitive); err != nil {
		return fault.New(fault.BadRequest, "%s", err.Error())
	}
	p.top = scanplan.TopLevel(sc)
	if p.sel, err = scanplan.TopLevelIDs(sc, p.req.Select, p.req.CaseSensitive, p.filter.FieldIDs()); err != nil {
		return fault.New(fault.BadRequest, "%s", err.Error())
	}
	return p.bindStats(sc)
}

// bindStats resolves the requested stats fields (400 for a name sc does
// not have) and sets what the plan reads from its leaves: every column but
// the stats, plus the stats of the requested and filtered fields. With no
// stats fields requested, it reads them all.
func (p *scanPlanV4) bindStats(sc *iceberg.Schema) error {
	p.stats, p.view = nil, v4read.View{}
	if p.req.StatsFields == nil {
		return nil
	}
	p.stats = map[int]bool{}
	for _, name := range p.req.StatsFields {
		f, ok := sc.FindFieldByName(name)
		if !p.req.CaseSensitive {
			f, ok = sc.FindFieldByNameCaseInsensitive(name)
		}
		if !ok {
			return fault.New(fault.BadRequest, "stats-fields: no field %q in the table schema", name)
		}
		p.stats[f.ID] = true
	}
	read := maps.Clone(p.stats)
	for _, id := range p.filter.FieldIDs() {
		read[id] = true
	}
	p.view = v4read.View{Stats: slices.Sorted(maps.Keys(read))}
	if p.view.Stats == nil {
		p.view.Stats = []int{}
	}
	return nil
}

func schemaByID(md table.Metadata, id int) *iceberg.Schema {
	for _, sc := range md.Schemas() {
		if sc.ID == id {
			return sc
		}
	}
	return nil
}

// snapshot is the snapshot a plan reads: the first of ids given, else the
// current one (nil for a table without snapshots). 404 when unknown.
func (p *scanPlanV4) snapshot(ids ...*int64) (*table.Snapshot, error) {
	for _, id := range ids {
		if id != nil {
			snap := p.st.meta.SnapshotByID(*id)
			if snap == nil {
				return nil, fault.New(fault.NotFound, "Snapshot %d does not exist in %s", *id, p.id)
			}
			return snap, nil
		}
	}
	return p.st.meta.CurrentSnapshot(), nil
}

// root reads (once per plan) the root manifest of a snapshot.
func (p *scanPlanV4) root(ctx context.Context, snap *table.Snapshot) ([]v4manifest.TrackedFile, error) {
	if rows, ok := p.roots[snap.SnapshotID]; ok {
		return rows, nil
	}
	rows, err := p.pl.d.Readers.Root(ctx, p.w, snap.ManifestList, p.st.location)
	if err != nil {
		return nil, err
	}
	p.roots[snap.SnapshotID] = rows
	return rows, nil
}

// planUnit is a piece of a plan: a leaf manifest referenced from the root
// of Snapshot, or (Leaf nil) the root's own data rows. Added restricts it
// to the rows ADDED by Snapshot (incremental append scans).
type planUnit struct {
	Snapshot int64
	Leaf     *v4manifest.TrackedFile
	Added    bool
}

// estimate is how many tasks a leaf may yield: its live files.
func (u planUnit) estimate() int {
	mi := u.Leaf.ManifestInfo
	if mi == nil {
		return 1
	}
	if u.Added {
		return int(mi.AddedFiles)
	}
	return int(mi.AddedFiles + mi.ExistingFiles + mi.ModifiedFiles)
}

// plan runs the plan: the units the root pruning keeps, then either their
// tasks or, for a large plan, plan tasks naming them.
func (p *scanPlanV4) plan(ctx context.Context) (Result, error) {
	units, direct, dels, err := p.units(ctx)
	if err != nil {
		return Result{}, err
	}
	res := &planBuilder{deletes: dels, refs: map[int]int{}}
	if p.req.StartSnapshotID != nil && p.req.ColumnFilesOK {
		// Only a client that reads column files can use column changes.
		if err := p.addColumnChanges(ctx, res); err != nil {
			return Result{}, err
		}
	}
	if err := p.addRows(res, direct); err != nil {
		return Result{}, err
	}
	total := 0
	for _, u := range units {
		total += u.estimate()
	}
	if total+len(res.out.Tasks) > p.pl.d.MaxPlanTasks {
		tokens, err := p.tokens(units)
		if err != nil {
			return Result{}, err
		}
		res.out.PlanTasks = tokens
		return res.result(), nil
	}
	if err := p.planLeaves(ctx, res, units); err != nil {
		return Result{}, err
	}
	return res.result(), nil
}

// units lists the leaves to read after root pruning, the data rows that
// sit in the root itself (already planned as tasks' sources) and the live
// equality deletes of the planned snapshot.
func (p *scanPlanV4) units(ctx context.Context) ([]planUnit, []planRow, []eqDelete, error) {
	if p.req.StartSnapshotID != nil || p.req.EndSnapshotID != nil {
		return p.incrementalUnits(ctx)
	}
	snap, err := p.snapshot(p.req.SnapshotID)
	if err != nil || snap == nil || snap.ManifestList == "" {
		return nil, nil, nil, err
	}
	rows, err := p.root(ctx, snap)
	if err != nil {
		return nil, nil, nil, err
	}
	dels, err := p.eqDeletes(ctx, snap, rows)
	if err != nil {
		return nil, nil, nil, err
	}
	var units []planUnit
	var direct []planRow
	for i := range rows {
		rr := &rows[i]
		switch {
		case !rr.Tracking.Status.Live():
		case rr.ContentType == v4manifest.ContentData:
			direct = append(direct, planRow{row: rr})
		case rr.ContentType == v4manifest.ContentDataManifest && p.leafMightMatch(rr):
			units = append(units, planUnit{Snapshot: snap.SnapshotID, Leaf: rr})
		}
	}
	return units, direct, dels, nil
}

// incrementalUnits are the leaves and root data rows ADDED by the append
// snapshots after start (exclusive) up to end (inclusive). 400 when start
// is not an ancestor of end, 404 for an unknown snapshot. Incremental
// append scans carry no equality deletes (as in Java's
// IncrementalAppendScan).
func (p *scanPlanV4) incrementalUnits(ctx context.Context) ([]planUnit, []planRow, []eqDelete, error) {
	chain, err := p.appendsBetween()
	if err != nil {
		return nil, nil, nil, err
	}
	var units []planUnit
	var direct []planRow
	for _, snap := range chain {
		rows, err := p.root(ctx, snap)
		if err != nil {
			return nil, nil, nil, err
		}
		for i := range rows {
			rr := &rows[i]
			if rr.Tracking.Status != v4manifest.StatusAdded || v4read.Deref(rr.Tracking.SnapshotID) != snap.SnapshotID {
				continue
			}
			switch {
			case rr.ContentType == v4manifest.ContentData:
				direct = append(direct, planRow{row: rr, added: snap.SnapshotID})
			case rr.ContentType == v4manifest.ContentDataManifest && p.leafMightMatch(rr):
				units = append(units, planUnit{Snapshot: snap.SnapshotID, Leaf: rr, Added: true})
			}
		}
	}
	return units, direct, nil, nil
}

// appendsBetween is the append snapshots of between, oldest first.
func (p *scanPlanV4) appendsBetween() ([]*table.Snapshot, error) {
	all, err := p.between()
	if err != nil {
		return nil, err
	}
	var chain []*table.Snapshot
	for _, snap := range all {
		if snap.Summary == nil || snap.Summary.Operation == table.OpAppend {
			chain = append(chain, snap)
		}
	}
	return chain, nil
}

// between walks end's ancestry back to start: the snapshots after start
// up to end, oldest first. 400 when start is not an ancestor of end or
// either id is missing, 404 for an unknown snapshot.
func (p *scanPlanV4) between() ([]*table.Snapshot, error) {
	if p.req.StartSnapshotID == nil || p.req.EndSnapshotID == nil {
		return nil, fault.New(fault.BadRequest, "An incremental scan needs both start-snapshot-id and end-snapshot-id")
	}
	start, err := p.snapshot(p.req.StartSnapshotID)
	if err != nil {
		return nil, err
	}
	snap, err := p.snapshot(p.req.EndSnapshotID)
	if err != nil {
		return nil, err
	}
	var chain []*table.Snapshot
	for snap.SnapshotID != start.SnapshotID {
		chain = append([]*table.Snapshot{snap}, chain...)
		if snap.ParentSnapshotID == nil {
			return nil, fault.New(fault.BadRequest, "Snapshot %d is not an ancestor of snapshot %d", start.SnapshotID, *p.req.EndSnapshotID)
		}
		if snap = p.st.meta.SnapshotByID(*snap.ParentSnapshotID); snap == nil {
			return nil, fault.New(fault.BadRequest, "Snapshot %d is not an ancestor of snapshot %d", start.SnapshotID, *p.req.EndSnapshotID)
		}
	}
	return chain, nil
}

// leafMightMatch prunes a leaf by its root row's aggregate stats. Root rows
// carry no partition summaries; their aggregates are trusted for
// top-level fields only: a column file replaces a whole top-level field
// and the commit path refreshes only that field's own stats, so a nested
// field's aggregate may still include a replaced base file's values.
func (p *scanPlanV4) leafMightMatch(rr *v4manifest.TrackedFile) bool {
	if mi := rr.ManifestInfo; mi != nil && mi.AddedFiles+mi.ExistingFiles+mi.ModifiedFiles == 0 {
		return false
	}
	return p.filter.MightMatch(scanplan.Stats{RecordCount: -1, Fields: rr.ContentStats,
		Usable: func(id int) bool { return p.top[id] == id }})
}

// planLeaves reads the units' leaves (several at a time) and adds the
// tasks of their matching rows, unit by unit in order.
func (p *scanPlanV4) planLeaves(ctx context.Context, res *planBuilder, units []planUnit) error {
	leaves := make([]*v4manifest.TrackedFile, len(units))
	for i, u := range units {
		leaves[i] = u.Leaf
	}
	return p.readLeavesInOrder(ctx, leaves, func(i int, rows []v4manifest.TrackedFile) error {
		return p.planLeafRows(res, units[i], rows)
	})
}

// planLeafRows adds the tasks of the matching rows of unit u's leaf.
func (p *scanPlanV4) planLeafRows(res *planBuilder, u planUnit, rows []v4manifest.TrackedFile) error {
	p.leavesRead++
	prs := make([]planRow, 0, len(rows))
	for i := range rows {
		pr := planRow{row: &rows[i]}
		if u.Added {
			pr.added = u.Snapshot
		}
		prs = append(prs, pr)
	}
	return p.addRows(res, prs)
}

// planRow is a candidate data row; added, when set, keeps it only if it
// was ADDED by that snapshot.
type planRow struct {
	row   *v4manifest.TrackedFile
	added int64
}

// addRows adds the tasks of the rows that are live data files matching the
// filter.
func (p *scanPlanV4) addRows(res *planBuilder, rows []planRow) error {
	for _, pr := range rows {
		r := pr.row
		if !r.Tracking.Status.Live() || r.ContentType != v4manifest.ContentData {
			continue
		}
		if pr.added != 0 && (r.Tracking.Status != v4manifest.StatusAdded || v4read.Deref(r.Tracking.SnapshotID) != pr.added || p.skip[r.Location]) {
			continue
		}
		if !p.rowMightMatch(r) {
			continue
		}
		t, err := p.task(r)
		if err != nil {
			return err
		}
		res.add(t, p.applicable(res.deletes, r))
	}
	return nil
}

// rowMightMatch evaluates the filter on a row's partition tuple and stats.
func (p *scanPlanV4) rowMightMatch(r *v4manifest.TrackedFile) bool {
	if p.filter.AlwaysTrue() {
		return true
	}
	if r.SpecID != nil && !p.partFilter(int(*r.SpecID)).MatchPartition(r.Partition) {
		return false
	}
	return p.filter.MightMatch(scanplan.Stats{RecordCount: r.RecordCount, Fields: r.ContentStats, Usable: p.usable(r)})
}

// partFilter is the filter projected onto a partition spec (true for an
// unknown spec).
func (p *scanPlanV4) partFilter(specID int) *scanplan.Filter {
	if f, ok := p.parts[specID]; ok {
		return f
	}
	f, _ := scanplan.Bind(nil, p.sc, true)
	if spec := p.st.meta.PartitionSpecByID(specID); spec != nil {
		f = p.filter.Project(*spec, p.sc)
	}
	p.parts[specID] = f
	return f
}

// usable is the stats precedence rule for one row: the stats of a field
// carried by a column file are the column file's (the commit replaced the
// top-level field's own stats), but stats of fields nested inside a
// carried field are the base file's, stale, and never used.
func (p *scanPlanV4) usable(r *v4manifest.TrackedFile) func(int) bool {
	if len(r.ColumnFiles) == 0 {
		return nil
	}
	carried := map[int]bool{}
	for _, cf := range r.ColumnFiles {
		for _, id := range cf.FieldIDs {
			carried[int(id)] = true
		}
	}
	return func(id int) bool {
		top, ok := p.top[id]
		return !ok || top == id || !carried[top]
	}
}

// task builds the scan task of a matching row: its column files cut to
// those carrying selected fields. 400 reason column-files-unsupported-by-
// client when any remain and the client did not accept column files.
func (p *scanPlanV4) task(r *v4manifest.TrackedFile) (ScanTask, error) {
	t := ScanTask{Location: r.Location, FileFormat: r.FileFormat, Partition: r.Partition, RecordCount: r.RecordCount,
		FileSizeInBytes: r.FileSizeInBytes, FirstRowID: r.Tracking.FirstRowID, SortOrderID: r.SortOrderID, SplitOffsets: r.SplitOffsets,
		ColumnFiles: v4read.ColumnFileRefs(p.selectedColumnFiles(r.ColumnFiles)), DeletionVector: v4read.DeletionVectorRefOf(r.DeletionVector)}
	if len(t.ColumnFiles) > 0 && !p.req.ColumnFilesOK {
		e := fault.New(fault.BadRequest, "Table %s has column files; send X-Iceberg-Column-Files: true to receive them", p.id)
		e.Reason = validation.ReasonColumnFilesUnsupported
		return ScanTask{}, e
	}
	if r.SpecID != nil {
		t.SpecID = *r.SpecID
	}
	t.PartitionValues, t.PartitionTypes = p.partitionTuple(int(t.SpecID), r.Partition)
	t.ValueCounts, t.NullValueCounts, t.NaNValueCounts = p.counts(r)
	if r.Tracking.SequenceNumber != nil {
		t.DataSequenceNumber = *r.Tracking.SequenceNumber
	}
	t.LatestColumnFileSnapshotID = r.Tracking.LatestColumnFileSnapshotID
	return t, nil
}

// selectedColumnFiles keeps the column files that carry a selected field
// and, for a client that reads column files, the one that carries
// _last_updated_sequence_number (row lineage is always readable).
func (p *scanPlanV4) selectedColumnFiles(cfs []v4manifest.ColumnFile) []v4manifest.ColumnFile {
	if p.sel == nil {
		return cfs
	}
	var out []v4manifest.ColumnFile
	for _, cf := range cfs {
		for _, id := range cf.FieldIDs {
			if p.sel[int(id)] || (id == lastUpdatedFieldID && p.req.ColumnFilesOK) {
				out = append(out, cf)
				break
			}
		}
	}
	return out
}

// partitionTuple orders a partition map by the spec's fields, with the
// fields' result types.
func (p *scanPlanV4) partitionTuple(specID int, part map[int]any) ([]any, []iceberg.Type) {
	vals, types := []any{}, []iceberg.Type{}
	spec := p.st.meta.PartitionSpecByID(specID)
	if spec == nil {
		return vals, types
	}
	for _, pf := range spec.Fields() {
		vals = append(vals, part[pf.FieldID])
		var typ iceberg.Type
		if src, ok := p.sc.FindTypeByID(firstSource(pf)); ok {
			typ = pf.Transform.ResultType(src)
		}
		types = append(types, typ)
	}
	return vals, types
}

func firstSource(pf iceberg.PartitionField) int {
	if len(pf.SourceIDs) == 0 {
		return -1
	}
	return pf.SourceIDs[0]
}

// counts are a row's trusted value, null and NaN counts by field id.
func (p *scanPlanV4) counts(r *v4manifest.TrackedFile) (vc, nc, nan map[int]int64) {
	ok := p.usable(r)
	put := func(m *map[int]int64, id int, v *int64) {
		if v == nil {
			return
		}
		if *m == nil {
			*m = map[int]int64{}
		}
		(*m)[id] = *v
	}
	for id, fs := range r.ContentStats {
		if fs == nil || (ok != nil && !ok(id)) || (p.stats != nil && !p.stats[id]) {
			continue
		}
		put(&vc, id, fs.ValueCount)
		put(&nc, id, fs.NullValueCount)
		put(&nan, id, fs.NaNValueCount)
	}
	return vc, nc, nan
}

// errNoPlanTask is the answer for a plan task that is not one of the
// table's: malformed, for another table, or naming a leaf its snapshot does
// not reference.
func errNoPlanTask(id ident.Ident) error {
	return fault.New(fault.NoSuchPlanTask, "Plan task does not exist for table %s", id)
}

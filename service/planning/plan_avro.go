package planning

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storagepath"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/v4read"
	"github.com/lakehold/catalog/store"
)

// ErrOutsideTable is returned by the planning IO (Planner.IO) for a
// manifest list or manifest outside the table's prefixes: it is refused,
// not read.
var ErrOutsideTable = errors.New("file outside the table location")

// planAvro plans a scan of a format v1–v3 table from its Avro manifests
// with iceberg-go: manifest pruning by partition summaries, partition and
// metrics evaluation, and matching of position deletes, equality deletes
// and deletion vectors. md is the table's current metadata; the caller has
// authorized the read.
//
// It returns 400 for an invalid filter, select or snapshot combination, or
// an incremental range with an overwrite or delete snapshot; 404 for an
// unknown snapshot; 500 when a manifest cannot be read or lies outside the
// table (refused, never read).
func (pl *Planner) planAvro(ctx context.Context, w *store.Warehouse, md table.Metadata, req Request) (Result, error) {
	incremental := req.StartSnapshotID != nil || req.EndSnapshotID != nil
	if req.SnapshotID != nil && incremental {
		return Result{}, fault.New(fault.BadRequest, "Invalid scan: snapshot-id cannot be combined with start-snapshot-id or end-snapshot-id")
	}
	if req.StartSnapshotID != nil && req.EndSnapshotID == nil {
		return Result{}, fault.New(fault.BadRequest, "Invalid scan: end-snapshot-id is required with start-snapshot-id")
	}
	for _, id := range []*int64{req.SnapshotID, req.StartSnapshotID, req.EndSnapshotID} {
		if id != nil && md.SnapshotByID(*id) == nil {
			return Result{}, fault.New(fault.NotFound, "Cannot find snapshot with ID %d", *id)
		}
	}
	opts, err := planScanOptions(md, req)
	if err != nil {
		return Result{}, err
	}
	target := req.SnapshotID
	if incremental {
		target = req.EndSnapshotID
	}
	planned := md
	if target != nil && !req.UseSnapshotSchema {
		if planned, err = headAt(md, *target); err != nil {
			return Result{}, fault.Wrap(fault.Internal, err, "Cannot plan the scan")
		}
		target = nil
	}
	tbl := table.New(nil, planned, "", pl.IO(w, md.Location()), nil)
	var tasks []table.FileScanTask
	if incremental {
		tasks, err = planIncremental(ctx, tbl, req.StartSnapshotID, target, opts)
	} else {
		if target != nil {
			opts = append(opts, table.WithSnapshotID(*target))
		}
		tasks, err = tbl.Scan(opts...).PlanFiles(ctx)
	}
	if err != nil {
		return Result{}, planFailure(err)
	}
	return planResult(md, tasks), nil
}

// planScanOptions validates filter and select against the schema they bind
// to and returns the scan options: 400 naming what is wrong.
func planScanOptions(md table.Metadata, req Request) ([]table.ScanOption, error) {
	schema := md.CurrentSchema()
	snapID := req.SnapshotID
	if snapID == nil {
		snapID = req.EndSnapshotID
	}
	if req.UseSnapshotSchema && snapID != nil {
		if sn := md.SnapshotByID(*snapID); sn != nil && sn.SchemaID != nil {
			for _, sc := range md.Schemas() {
				if sc.ID == *sn.SchemaID {
					schema = sc
				}
			}
		}
	}
	opts := []table.ScanOption{table.WithCaseSensitive(req.CaseSensitive)}
	if f := strings.TrimSpace(string(req.Filter)); f != "" && f != "null" {
		parseSchema := schema
		if !req.CaseSensitive {
			// ParseExpr resolves names case-sensitively; literals are then
			// typed when the expression is bound below.
			parseSchema = nil
		}
		expr, err := iceberg.ParseExpr([]byte(f), parseSchema)
		if err != nil {
			return nil, fault.New(fault.BadRequest, "Invalid filter: %s", fault.ClientText(err))
		}
		if _, err := iceberg.BindExpr(schema, expr, req.CaseSensitive); err != nil {
			return nil, fault.New(fault.BadRequest, "Invalid filter: %s", fault.ClientText(err))
		}
		opts = append(opts, table.WithRowFilter(expr))
	}
	if len(req.Select) > 0 {
		if _, err := schema.Select(req.CaseSensitive, req.Select...); err != nil {
			return nil, fault.New(fault.BadRequest, "Invalid select: %s", fault.ClientText(err))
		}
		opts = append(opts, table.WithSelectedFields(req.Select...))
	}
	return opts, nil
}

// headAt returns md with main at snapshot id, in memory only. Planning
// that snapshot as the head of main binds filter and select to the current
// schema, as a REST plan with use-snapshot-schema false asks; iceberg-go
// binds a scan of an explicit snapshot to that snapshot's schema.
func headAt(md table.Metadata, id int64) (table.Metadata, error) {
	if cur := md.CurrentSnapshot(); cur != nil && cur.SnapshotID == id {
		return md, nil
	}
	b, err := table.MetadataBuilderFromBase(md, "")
	if err != nil {
		return nil, err
	}
	if err := b.SetSnapshotRef(table.MainBranch, id, table.BranchRef); err != nil {
		return nil, err
	}
	return b.Build()
}

// planIncremental plans the data files appended after start (exclusive)
// up to end (inclusive). Compactions (replace) in the range are skipped, as
// they change no rows; an overwrite or delete is refused with 400: an
// append-only plan would silently miss its changes.
// end is the end snapshot, nil for the head of main.
func planIncremental(ctx context.Context, tbl *table.Table, start, end *int64, opts []table.ScanOption) ([]table.FileScanTask, error) {
	md := tbl.Metadata()
	head := md.CurrentSnapshot()
	if end != nil {
		head = md.SnapshotByID(*end)
	}
	found := start == nil
	for sn := head; sn != nil; {
		if start != nil && sn.SnapshotID == *start {
			found = true
			break
		}
		op := table.Operation("")
		if sn.Summary != nil {
			op = sn.Summary.Operation
		}
		switch op {
		case table.OpAppend, table.OpReplace:
		default:
			return nil, fault.New(fault.BadRequest, "Cannot plan an incremental append scan: snapshot %d in the range is a %q, not an append; plan the snapshot instead", sn.SnapshotID, string(op))
		}
		if sn.ParentSnapshotID == nil {
			break
		}
		sn = md.SnapshotByID(*sn.ParentSnapshotID)
	}
	if !found {
		return nil, fault.New(fault.BadRequest, "Cannot plan an incremental append scan: start snapshot %d is not an ancestor of end snapshot %d", *start, head.SnapshotID)
	}
	scan := tbl.NewIncrementalAppendScan(opts...)
	if end != nil {
		// An explicit end binds to the end snapshot's schema.
		scan = scan.ToSnapshot(*end)
	}
	if start != nil {
		scan = scan.FromSnapshotExclusive(*start)
	}
	return scan.PlanFiles(ctx)
}

// planResult turns iceberg-go tasks into the plan: one task per data file
// (iceberg-go splits large Parquet files; REST clients split themselves),
// delete files listed once and referenced by index.
func planResult(md table.Metadata, tasks []table.FileScanTask) Result {
	out := Result{Tasks: []ScanTask{}, DeleteFiles: []DeleteFile{}}
	seenData := map[string]bool{}
	deleteIdx := map[string]int{}
	for _, t := range tasks {
		f := t.File
		if seenData[f.FilePath()] {
			continue
		}
		seenData[f.FilePath()] = true
		st := ScanTask{Location: f.FilePath(), FileFormat: strings.ToLower(string(f.FileFormat())), SpecID: f.SpecID(),
			Partition: f.Partition(), PartitionValues: planPartitionValues(md, f), RecordCount: f.Count(),
			FileSizeInBytes: f.FileSizeBytes(), FirstRowID: t.FirstRowID, DeleteRefs: []int{}}
		if st.FirstRowID == nil {
			st.FirstRowID = f.FirstRowID()
		}
		for _, group := range [][]iceberg.DataFile{t.DeleteFiles, t.EqualityDeleteFiles, t.DeletionVectorFiles} {
			for _, d := range group {
				key := d.FilePath()
				if off := d.ContentOffset(); off != nil {
					key = fmt.Sprintf("%s#%d", key, *off)
				}
				i, ok := deleteIdx[key]
				if !ok {
					i = len(out.DeleteFiles)
					deleteIdx[key] = i
					out.DeleteFiles = append(out.DeleteFiles, deleteFile(md, d))
				}
				st.DeleteRefs = append(st.DeleteRefs, i)
			}
		}
		out.Tasks = append(out.Tasks, st)
	}
	return out
}

func deleteFile(md table.Metadata, d iceberg.DataFile) DeleteFile {
	content := "position-deletes"
	if d.ContentType() == iceberg.EntryContentEqDeletes {
		content = "equality-deletes"
	}
	return DeleteFile{Content: content, Location: d.FilePath(), FileFormat: strings.ToLower(string(d.FileFormat())),
		SpecID: d.SpecID(), PartitionValues: planPartitionValues(md, d), RecordCount: d.Count(), FileSizeInBytes: d.FileSizeBytes(),
		EqualityIDs: d.EqualityFieldIDs(), ReferencedDataFile: d.ReferencedDataFile(), ContentOffset: d.ContentOffset(),
		ContentSize: d.ContentSizeInBytes()}
}

// planPartitionValues lists a file's partition values in its spec's field
// order, each in the REST single-value JSON form of the field's result
// type (dates and timestamps as ISO strings, decimals as strings, binary
// as hex), which Java's ContentFileParser requires.
func planPartitionValues(md table.Metadata, f iceberg.DataFile) []any {
	out := []any{}
	spec := md.PartitionSpecByID(int(f.SpecID()))
	if spec == nil {
		return out
	}
	ptype := spec.PartitionType(md.CurrentSchema())
	part := f.Partition()
	for i, pf := range spec.Fields() {
		var typ iceberg.Type
		if ptype != nil && i < len(ptype.FieldList) {
			typ = ptype.FieldList[i].Type
		}
		out = append(out, PartitionValueJSON(part[pf.FieldID], typ))
	}
	return out
}

// IO is the iceberg-go IO planning (and the upgrade to v4 in package
// service) reads manifests through: every file must lie inside the
// table's prefixes (location policy) and the warehouse, and is opened with
// the warehouse's storage properties. A file outside the table is
// ErrOutsideTable, an error of IOProps or the storage provider is returned
// as is.
func (pl *Planner) IO(w *store.Warehouse, tableLoc string) table.FSysF {
	return func(ctx context.Context) (icebergio.IO, error) {
		return tableIO{pl: pl, ctx: context.WithoutCancel(ctx), w: w, prefixes: locations.TablePrefixes(w, tableLoc)}, nil
	}
}

// tableIO opens files for planning; see IO.
type tableIO struct {
	pl       *Planner
	ctx      context.Context
	w        *store.Warehouse
	prefixes storagepath.Set
}

// Open refuses a file outside the table before anything is read.
func (t tableIO) Open(name string) (icebergio.File, error) {
	if !t.prefixes.Contains(name) {
		return nil, ErrOutsideTable
	}
	props, err := t.pl.d.Tables.IOProps(t.ctx, t.w, name)
	if err != nil {
		return nil, err
	}
	fio, err := t.pl.d.Tables.Files().IcebergIO(t.ctx, name, props)
	if err != nil {
		return nil, err
	}
	return fio.Open(name)
}

// Remove is refused: planning only reads.
func (t tableIO) Remove(string) error { return errors.New("planning IO is read-only") }

// uriOrPath matches locations in an iceberg-go error text.
var uriOrPath = regexp.MustCompile(`(?:[a-zA-Z][a-zA-Z0-9+.-]*://|/)[^\s:"']+`)

// WithoutPaths is text (an iceberg-go error's) with every location in it
// replaced by <file>, fit for a client or a log.
func WithoutPaths(text string) string { return uriOrPath.ReplaceAllString(text, "<file>") }

// planFailure maps an iceberg-go planning error: our own errors keep their
// kind; a file outside the table and unreadable manifests are 500 with a
// message and log text free of paths.
func planFailure(err error) error {
	var se *fault.Error
	if errors.As(err, &se) {
		return err
	}
	if errors.Is(err, ErrOutsideTable) {
		return fault.New(fault.Internal, "Refusing to plan: the table references a manifest list or manifest outside its location")
	}
	if errors.Is(err, iceberg.ErrInvalidArgument) {
		return fault.New(fault.BadRequest, "Invalid scan: %s", uriOrPath.ReplaceAllString(fault.ClientText(err), "<file>"))
	}
	return fault.Wrap(fault.Internal, errors.New(uriOrPath.ReplaceAllString(err.Error(), "<file>")), "Cannot plan the scan: a manifest of the table cannot be read")
}

// plansFromAvro reports whether a plan of md (a v4 table) reads a pre-v4
// snapshot and so goes to the Avro planner: the snapshot planned (or the
// end of an incremental range) has an Avro manifest list.
func plansFromAvro(md table.Metadata, req Request) bool {
	id := req.SnapshotID
	if id == nil {
		id = req.EndSnapshotID
	}
	snap := md.CurrentSnapshot()
	if id != nil {
		snap = md.SnapshotByID(*id)
	}
	return snap != nil && v4read.LegacyManifestList(snap.ManifestList)
}

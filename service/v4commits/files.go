package v4commits

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/parquetstats"
	"github.com/lakehold/catalog/internal/requirements"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/internal/v4tree"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// DataFileInput is one add-data-files entry of a files commit.
type DataFileInput struct {
	Location        string
	FileFormat      string
	RecordCount     int64
	FileSizeInBytes int64
	SpecID          int
	SortOrderID     *int
	Partition       map[string]json.RawMessage
	// ContentStats is optional; when absent the server reads the footer.
	ContentStats json.RawMessage
	// Stats, for in-process Go callers that wrote the file themselves
	// (tests and benchmarks over files that need not exist), are typed
	// stats used as given: the footer is not read, so the file is not
	// checked against the schema. The HTTP route never sets it.
	Stats map[int]*v4manifest.FieldStats
}

// FilesCommit is a commit of whole files to a v4 table; the server writes
// the leaf and root manifests.
type FilesCommit struct {
	Ident                  ident.Ident
	Requirements           json.RawMessage
	AddDataFiles           []DataFileInput
	RemoveFiles            []string
	SnapshotProperties     map[string]string
	AddEqualityDeleteFiles []EqualityDeleteInput
	SetDeletionVectors     []DeletionVectorInput
}

// EqualityDeleteInput is one add-equality-delete-files entry.
type EqualityDeleteInput struct {
	Location        string
	FileFormat      string
	RecordCount     int64
	FileSizeInBytes int64
	EqualityIDs     []int
	SpecID          int
	Partition       map[string]json.RawMessage
}

// DeletionVectorInput sets (or replaces) the deletion vector of a live
// data file: a deletion-vector-v1 blob in a Puffin file.
type DeletionVectorInput struct {
	DataFile    string
	Location    string
	Offset      int64
	SizeInBytes int64
	Cardinality int64
}

// badEntry builds a 400 BadRequestException for a malformed files-commit
// entry, with reason validation.ReasonInvalidFileEntry.
func badEntry(format string, args ...any) *fault.Error {
	e := fault.New(fault.BadRequest, format, args...)
	e.Reason = validation.ReasonInvalidFileEntry
	return e
}

// Reject builds a 400 ValidationException with a reason code.
func Reject(reason string, format string, args ...any) *fault.Error {
	e := fault.New(fault.Validation, format, args...)
	e.Reason = reason
	return e
}

// State is a loaded v4 table.
type State struct {
	obj      *store.Object
	entry    *tablemeta.Entry // the cached, parsed metadata; meta is its metadata
	meta     table.Metadata
	location string
	rootRows []v4manifest.TrackedFile
}

// Load loads v4 table id of w with its current snapshot's root rows: 404
// when the table does not exist, 400 ValidationException (table-not-v4)
// for another format version; the root read's errors as they are.
func (cm *Committer) Load(ctx context.Context, w *store.Warehouse, id ident.Ident) (*State, error) {
	obj, e, err := cm.d.Tables.ReadTable(ctx, w.Name, id)
	if err != nil {
		return nil, err
	}
	meta, version := e.Meta, e.Version
	if version != FormatV4 {
		e := Reject(validation.ReasonTableNotV4, "Table %s has format version %d; this route needs format version 4", id, version)
		e.Details = map[string]any{"table": id.String(), "format-version": version}
		return nil, e
	}
	st := &State{obj: obj, entry: e, meta: meta, location: meta.Location()}
	if cur := meta.CurrentSnapshot(); cur != nil && cur.ManifestList != "" {
		if st.rootRows, err = cm.readers.Root(ctx, w, cur.ManifestList, st.location); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// writeManifest writes rows as a manifest at loc (locations under the
// table stored relative) and returns its size.
func (cm *Committer) writeManifest(ctx context.Context, w *store.Warehouse, st *State, loc string, content v4manifest.Content, rows []v4manifest.TrackedFile) (int64, error) {
	var buf bytes.Buffer
	mw, err := v4manifest.NewWriter(&buf, v4manifest.WriterOptions{
		Content: content, Schema: st.meta.CurrentSchema(), SchemaID: st.meta.CurrentSchema().ID,
		Specs: st.meta.PartitionSpecs(), RowLineage: true, TableLocation: st.location,
	})
	if err != nil {
		return 0, fault.Wrap(fault.Internal, err, "manifest writer")
	}
	for i := range rows {
		if err := mw.Write(&rows[i]); err != nil {
			_ = mw.Close()
			return 0, fault.Wrap(fault.Internal, err, "write manifest row")
		}
	}
	if err := mw.Close(); err != nil {
		return 0, fault.Wrap(fault.Internal, err, "close manifest")
	}
	if err := cm.d.Tables.WriteFile(ctx, w, loc, buf.Bytes()); err != nil {
		if fault.KindOf(err) == fault.Unavailable {
			return 0, fault.Wrap(fault.Unavailable, err, "Storage unavailable: cannot write manifest %s, nothing was committed; retry later", v4manifest.Relativize(st.location, loc))
		}
		return 0, fault.Wrap(fault.CommitFailed, err, "Commit failed: cannot write manifest %s, nothing was committed", v4manifest.Relativize(st.location, loc))
	}
	return int64(buf.Len()), nil
}

// dataFileRow validates one added data file and builds its row (tracking
// filled in later).
func (cm *Committer) dataFileRow(ctx context.Context, w *store.Warehouse, st *State, in DataFileInput) (*v4manifest.TrackedFile, error) {
	if in.Location == "" {
		return nil, badEntry("Data file: location is required")
	}
	loc := v4manifest.Resolve(st.location, in.Location)
	name := locations.TableFileName(st.location, loc) // messages never show server paths
	if err := cm.fileInTable(w, st, loc, "data file"); err != nil {
		return nil, err
	}
	if in.FileFormat != "parquet" && in.FileFormat != "PARQUET" {
		return nil, Reject(validation.ReasonUnsupportedFileFormat, "Data file %s: file format %q is not supported (parquet only)", name, in.FileFormat)
	}
	spec := st.meta.PartitionSpecByID(in.SpecID)
	if spec == nil {
		return nil, badEntry("Data file %s: unknown spec-id %d", name, in.SpecID)
	}
	sc := st.meta.CurrentSchema()
	row := &v4manifest.TrackedFile{
		ContentType: v4manifest.ContentData, FormatVersion: FormatV4, Location: loc, FileFormat: "parquet",
		RecordCount: in.RecordCount, FileSizeInBytes: in.FileSizeInBytes, SpecID: ptrTo(int32(in.SpecID)),
	}
	if in.SortOrderID != nil {
		known := false
		for _, o := range st.meta.SortOrders() {
			known = known || o.OrderID() == *in.SortOrderID
		}
		if !known {
			return nil, badEntry("Data file %s: unknown sort-order-id %d", name, *in.SortOrderID)
		}
		row.SortOrderID = ptrTo(int32(*in.SortOrderID))
	}
	part, err := partitionValues(sc, spec, name, in.Partition)
	if err != nil {
		return nil, err
	}
	row.Partition = part
	if in.Stats != nil {
		row.ContentStats = in.Stats
		return row, nil
	}
	// Given stats are kept, but the footer is read either way: field ids,
	// row count and size are checked for every added file, so the two
	// routes agree on what a readable file is.
	var given map[int]*v4manifest.FieldStats
	if len(in.ContentStats) > 0 && string(in.ContentStats) != "null" {
		if given, err = parquetstats.ParseContentStats(sc, in.ContentStats, in.RecordCount); err != nil {
			return nil, fileRejection("Data file "+name, err)
		}
	}
	io, err := cm.d.Tables.FileIO(ctx, w, loc)
	if err != nil {
		return nil, err
	}
	nm, err := parquetstats.ParseNameMapping(st.meta.Properties()[table.DefaultNameMappingKey])
	if err != nil {
		return nil, fileRejection("Data file "+name, err)
	}
	fi, err := readFooterMapped(ctx, io, loc, sc, nm)
	if err != nil && given != nil {
		// With stats the answer for an absent file was always file-missing.
		if err := cm.requireFile(ctx, w, loc, "Data file "+name); err != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, Reject(validation.ReasonDataFileUnreadable, "Data file %s: cannot read its Parquet footer", name)
	}
	if err := validation.CheckFieldIDs("Data file", name, fi.Unidentified); err != nil {
		return nil, validationErr(err)
	}
	if fi.NumRows != in.RecordCount {
		return nil, Reject(validation.ReasonRecordCountMismatch, "Data file %s has %d rows, not record-count %d", name, fi.NumRows, in.RecordCount)
	}
	if fi.Size != in.FileSizeInBytes {
		return nil, Reject(validation.ReasonFileSizeMismatch, "Data file %s is %d bytes, not file-size-in-bytes %d", name, fi.Size, in.FileSizeInBytes)
	}
	if err := checkFileSchema(st.fileCheck(validation.UseData, "Data file", name, nil), fi.Tree); err != nil {
		return nil, err
	}
	if given != nil {
		row.ContentStats = given
		return row, nil
	}
	row.ContentStats = map[int]*v4manifest.FieldStats{}
	for id, c := range fi.Columns {
		if c.Stats != nil {
			row.ContentStats[id] = c.Stats
		}
	}
	return row, nil
}

// partitionValues types a file's partition values (by partition field
// name) for spec; nil for an unpartitioned spec.
func partitionValues(sc *iceberg.Schema, spec *iceberg.PartitionSpec, loc string, in map[string]json.RawMessage) (map[int]any, error) {
	if spec.NumFields() == 0 {
		if len(in) > 0 {
			return nil, badEntry("File %s: spec %d is unpartitioned but a partition was given", loc, spec.ID())
		}
		return nil, nil
	}
	out := map[int]any{}
	names := map[string]bool{}
	for _, pf := range spec.Fields() {
		names[pf.Name] = true
		src, ok := sc.FindFieldByID(pf.SourceID())
		if !ok {
			return nil, badEntry("Partition field %s: source column %d is not in the current schema", pf.Name, pf.SourceID())
		}
		v, err := parquetstats.JSONValue(pf.Transform.ResultType(src.Type), in[pf.Name])
		if err != nil {
			return nil, badEntry("File %s: partition value %s: %v", loc, pf.Name, err)
		}
		out[pf.FieldID] = v
	}
	for k := range in {
		if !names[k] {
			return nil, badEntry("File %s: %q is not a field of partition spec %d", loc, k, spec.ID())
		}
	}
	return out, nil
}

func ptrTo[T any](v T) *T { return &v }

// NewSnapshotID returns a positive random snapshot id.
func NewSnapshotID() int64 { return rand.Int64N(1<<62) + 1 }

// CommitFiles adds and removes whole files of a v4 table. The server writes
// a new leaf for the added files, rewrites only the leaves holding removed
// files, carries every other leaf into a new root manifest and commits a
// snapshot pointing at it. 400 ValidationException (with a reason) for bad
// input, 409 when requirements fail or retries run out.
func (cm *Committer) CommitFiles(ctx context.Context, warehouse string, c FilesCommit) (*Result, error) {
	w, reqs, err := cm.v4Target(ctx, warehouse, c.Ident, c.Requirements)
	if err != nil {
		return nil, err
	}
	if len(c.AddDataFiles) == 0 && len(c.RemoveFiles) == 0 && len(c.AddEqualityDeleteFiles) == 0 && len(c.SetDeletionVectors) == 0 {
		e := fault.New(fault.BadRequest, "A files commit needs at least one non-empty list")
		e.Reason = validation.ReasonEmptyCommit
		return nil, e
	}
	var res *Result
	err = cm.engine.Run(ctx, w, "table", func(ctx context.Context) (*commitengine.Attempt, error) {
		a := &commitengine.Attempt{}
		var err error
		res, err = cm.stageFiles(ctx, w, c, reqs, a)
		return a, err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// v4Target resolves the warehouse a v4 commit writes to and parses its
// requirements, authorizing first: 400 for a bad requirement or
// identifier, 403 when the write is denied, 404 for an unknown warehouse.
func (cm *Committer) v4Target(ctx context.Context, warehouse string, id ident.Ident, rawReqs json.RawMessage) (*store.Warehouse, []requirements.Requirement, error) {
	// Authorize before looking at the request's content: a caller without
	// write-data learns nothing from validation messages.
	w, err := cm.writeTarget(ctx, warehouse, id)
	if err != nil {
		return nil, nil, err
	}
	reqs, err := requirements.Parse(rawReqs)
	if err != nil {
		return nil, nil, err
	}
	return w, reqs, nil
}

// resolveFilesChange resolves the remove and deletion-vector lists against
// the table: 400 for a base named twice or an invalid deletion vector, or
// a deletion vector file outside the table.
func (cm *Committer) resolveFilesChange(w *store.Warehouse, st *State, c FilesCommit) ([]string, map[string]v4manifest.DeletionVector, error) {
	remove := make([]string, 0, len(c.RemoveFiles))
	for _, r := range c.RemoveFiles {
		remove = append(remove, v4manifest.Resolve(st.location, r))
	}
	dvs := map[string]v4manifest.DeletionVector{}
	for _, d := range c.SetDeletionVectors {
		base := v4manifest.Resolve(st.location, d.DataFile)
		if _, dup := dvs[base]; dup {
			return nil, nil, badEntry("set-deletion-vectors: %s appears twice", locations.TableFileName(st.location, base))
		}
		if d.Cardinality < 0 || d.SizeInBytes <= 0 || d.Offset < 0 || d.Location == "" {
			return nil, nil, badEntry("set-deletion-vectors: invalid deletion vector for %s", locations.TableFileName(st.location, base))
		}
		loc := v4manifest.Resolve(st.location, d.Location)
		if err := cm.fileInTable(w, st, loc, "deletion vector file"); err != nil {
			return nil, nil, err
		}
		dvs[base] = v4manifest.DeletionVector{Location: loc, Offset: d.Offset, SizeInBytes: d.SizeInBytes, Cardinality: d.Cardinality}
	}
	return remove, dvs, nil
}

// stageFiles stages one attempt of a files commit into a: validates the
// added files (reading footers), lets v4commit rewrite the tree and writes
// the result.
func (cm *Committer) stageFiles(ctx context.Context, w *store.Warehouse, c FilesCommit, reqs []requirements.Requirement, a *commitengine.Attempt) (*Result, error) {
	st, err := cm.Load(ctx, w, c.Ident)
	if err != nil {
		return nil, err
	}
	if err := requirements.Check(reqs, st.meta); err != nil {
		return nil, err
	}
	remove, dvs, err := cm.resolveFilesChange(w, st, c)
	if err != nil {
		return nil, err
	}
	dvMax, err := cm.checkDeletionVectors(ctx, w, st, dvs)
	if err != nil {
		return nil, validationErr(err)
	}
	added, err := cm.addedDataRows(ctx, w, st, c.AddDataFiles)
	if err != nil {
		return nil, err
	}
	dels, err := cm.equalityDeleteRows(ctx, w, st, c.AddEqualityDeleteFiles)
	if err != nil {
		return nil, err
	}
	t := cm.NewTx(w, st, a)
	if err := cm.checkAddedNotLive(ctx, t, cm.leafReader(ctx, t), added, dels, remove); err != nil {
		return nil, err
	}
	res, err := v4tree.CommitFiles(st.rootRows, cm.leafReader(ctx, t), t.Snapshot(), v4tree.Files{
		FirstRowID: st.meta.NextRowID(), Added: added, EqualityDeletes: dels, Remove: remove, DeletionVectors: dvs,
		DVMaxPositions: dvMax, MaxLeafEntries: cm.d.MaxLeafEntries, SnapshotProperties: c.SnapshotProperties,
	})
	if err != nil {
		return nil, validationErr(engineErr(err))
	}
	return cm.StageSnapshot(ctx, t, res)
}

// addedDataRows validates the added data files and builds their rows
// (tracking is the tree rewrite's): 400 for an invalid or repeated file.
func (cm *Committer) addedDataRows(ctx context.Context, w *store.Warehouse, st *State, in []DataFileInput) ([]v4manifest.TrackedFile, error) {
	// Each file costs a footer read, a storage round trip or more on S3:
	// read them a few at a time rather than one after another.
	rows := make([]*v4manifest.TrackedFile, len(in))
	errs := make([]error, len(in))
	var g errgroup.Group
	g.SetLimit(footerReaders)
	for i, f := range in {
		g.Go(func() error {
			rows[i], errs[i] = cm.dataFileRow(ctx, w, st, f)
			return nil
		})
	}
	_ = g.Wait()
	added := make([]v4manifest.TrackedFile, 0, len(in))
	names := make([]string, 0, len(in))
	for i, row := range rows {
		// The first failing entry in request order answers, as before.
		if errs[i] != nil {
			return nil, errs[i]
		}
		names = append(names, locations.TableFileName(st.location, row.Location))
		added = append(added, *row)
	}
	if err := validation.CheckUniqueFiles("Data file", names); err != nil {
		return nil, validationErr(err)
	}
	return added, nil
}

// equalityDeleteRows validates the added equality-delete files and builds
// their rows: 400 for an invalid or missing file.
func (cm *Committer) equalityDeleteRows(ctx context.Context, w *store.Warehouse, st *State, in []EqualityDeleteInput) ([]v4manifest.TrackedFile, error) {
	dels := make([]v4manifest.TrackedFile, 0, len(in))
	for _, f := range in {
		row, err := cm.equalityDeleteRow(w, st, f)
		if err != nil {
			return nil, err
		}
		name := "Delete file " + locations.TableFileName(st.location, row.Location)
		if err := cm.requireFile(ctx, w, row.Location, name); err != nil {
			return nil, err
		}
		if err := cm.checkDeleteSchema(ctx, w, st, row, f.EqualityIDs); err != nil {
			return nil, err
		}
		dels = append(dels, *row)
	}
	return dels, nil
}

// equalityDeleteRow validates one added equality-delete file.
func (cm *Committer) equalityDeleteRow(w *store.Warehouse, st *State, in EqualityDeleteInput) (*v4manifest.TrackedFile, error) {
	if in.Location == "" {
		return nil, badEntry("Delete file: location is required")
	}
	loc := v4manifest.Resolve(st.location, in.Location)
	if err := cm.fileInTable(w, st, loc, "delete file"); err != nil {
		return nil, err
	}
	name := locations.TableFileName(st.location, loc) // messages never show server paths
	if in.FileFormat != "parquet" && in.FileFormat != "PARQUET" {
		return nil, Reject(validation.ReasonUnsupportedFileFormat, "Delete file %s: file format %q is not supported (parquet only)", name, in.FileFormat)
	}
	if len(in.EqualityIDs) == 0 {
		return nil, badEntry("Delete file %s: equality-ids are required", name)
	}
	sc := st.meta.CurrentSchema()
	ids := make([]int32, len(in.EqualityIDs))
	for i, id := range in.EqualityIDs {
		if _, ok := sc.FindFieldByID(id); !ok {
			return nil, badEntry("Delete file %s: equality id %d is not in the schema", name, id)
		}
		ids[i] = int32(id)
	}
	spec := st.meta.PartitionSpecByID(in.SpecID)
	if spec == nil {
		return nil, badEntry("Delete file %s: unknown spec-id %d", name, in.SpecID)
	}
	part, err := partitionValues(sc, spec, name, in.Partition)
	if err != nil {
		return nil, err
	}
	return &v4manifest.TrackedFile{
		ContentType: v4manifest.ContentEqualityDeletes, FormatVersion: FormatV4, Location: loc, FileFormat: "parquet",
		RecordCount: in.RecordCount, FileSizeInBytes: in.FileSizeInBytes, SpecID: ptrTo(int32(in.SpecID)),
		Partition: part, EqualityIDs: ids,
	}, nil
}

// fileInTable refuses (400 ValidationException, location-outside-table) a
// file of a v4 commit that is not inside the table's prefixes; what names
// its role, the message never the path.
func (cm *Committer) fileInTable(w *store.Warehouse, st *State, loc, what string) error {
	if err := locations.CheckFileInTable(w, st.location, loc, what); err != nil {
		e := Reject(validation.ReasonLocationOutsideTable, "%s", err.Error())
		e.Details = map[string]any{"file": locations.FileName(w, st.location, loc)}
		return e
	}
	return nil
}

// requireFile refuses (400 ValidationException, file-missing) a file a
// commit references without the server reading it, when it does not exist.
func (cm *Committer) requireFile(ctx context.Context, w *store.Warehouse, loc, what string) error {
	io, err := cm.d.Tables.FileIO(ctx, w, loc)
	if err != nil {
		return err
	}
	ok, err := io.Exists(ctx, loc)
	if err != nil {
		return fault.Wrap(fault.Unavailable, err, "%s: cannot check that it exists", what)
	}
	if !ok {
		return Reject(validation.ReasonFileMissing, "%s does not exist", what)
	}
	return nil
}

// readFooter opens the Parquet file at location and reads its footer (see
// parquetstats.Read): an error when the file cannot be opened or its
// footer read.
func readFooter(ctx context.Context, io storage.FileIO, location string, sc *iceberg.Schema) (*parquetstats.Footer, error) {
	return readFooterMapped(ctx, io, location, sc, nil)
}

// readFooterMapped is readFooter resolving columns without field ids
// through the name mapping nm (nil: none).
func readFooterMapped(ctx context.Context, io storage.FileIO, location string, sc *iceberg.Schema, nm iceberg.NameMapping) (*parquetstats.Footer, error) {
	f, err := io.Open(ctx, location)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return parquetstats.ReadMapped(f, st.Size(), sc, nm)
}

// fileRejection turns a validation rejection about one file (content
// stats, name mapping) into a 400 ValidationException whose message
// starts with what (e.g. "Data file data/a.parquet"); other errors pass.
func fileRejection(what string, err error) error {
	var ve *validation.Error
	if !errors.As(err, &ve) {
		return err
	}
	e := Reject(ve.Reason, "%s: %s", what, ve.Message)
	e.Details = ve.Details
	return e
}

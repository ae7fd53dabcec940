package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
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
	// Stats, for Go callers, are typed stats used as given (no footer read).
	Stats map[int]*v4manifest.FieldStats
}

// FilesCommit is a commit of whole files to a v4 table; the server writes
// the leaf and root manifests.
type FilesCommit struct {
	Ident                  Ident
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

// rejectV4 builds a 400 ValidationException with a reason code.
func rejectV4(reason string, format string, args ...any) *Error {
	e := newErr(KindValidation, format, args...)
	e.Reason = reason
	return e
}

// v4State is a loaded v4 table.
type v4State struct {
	obj      *store.Object
	meta     table.Metadata
	location string
	rootRows []v4manifest.TrackedFile
}

func (s *Service) loadV4(ctx context.Context, w *store.Warehouse, id Ident) (*v4State, error) {
	obj, err := s.store.ObjectGet(ctx, id.ref(w.Name, store.KindTable))
	if errors.Is(err, store.ErrNotFound) {
		return nil, tableNotFound(err, id)
	}
	if err != nil {
		return nil, storeErr(err, w.Name)
	}
	meta, version, err := parseTableMetadata(obj.Metadata)
	if err != nil {
		return nil, wrapErr(KindInternal, err, "stored metadata of %s does not parse", id)
	}
	if version != FormatV4 {
		e := rejectV4("table-not-v4", "Table %s has format version %d; this route needs format version 4", id, version)
		e.Details = map[string]any{"table": id.String(), "format-version": version}
		return nil, e
	}
	st := &v4State{obj: obj, meta: meta, location: meta.Location()}
	if cur := meta.CurrentSnapshot(); cur != nil && cur.ManifestList != "" {
		if st.rootRows, err = s.readManifest(ctx, w, cur.ManifestList, st.location, nil, nil); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// readManifest reads a manifest (only the columns cols when given),
// resolving locations against tableLoc and inheriting from the root row.
func (s *Service) readManifest(ctx context.Context, w *store.Warehouse, loc, tableLoc string, inherit *v4manifest.TrackedFile, cols []int) ([]v4manifest.TrackedFile, error) {
	io, err := s.fileIO(ctx, w, loc)
	if err != nil {
		return nil, err
	}
	f, err := io.Open(ctx, loc)
	if err != nil {
		return nil, wrapErr(KindInternal, err, "open manifest %s", loc)
	}
	defer f.Close()
	r, err := v4manifest.NewReader(f, v4manifest.ReaderOptions{Columns: cols, TableLocation: tableLoc, InheritFrom: inherit})
	if err != nil {
		return nil, wrapErr(KindInternal, err, "read manifest %s", loc)
	}
	defer r.Close()
	rows, err := r.All(ctx)
	if err != nil {
		return nil, wrapErr(KindInternal, err, "read manifest %s", loc)
	}
	return rows, nil
}

// writeManifest writes rows as a manifest at loc (locations under the
// table stored relative) and returns its size.
func (s *Service) writeManifest(ctx context.Context, w *store.Warehouse, st *v4State, loc string, content v4manifest.Content, rows []v4manifest.TrackedFile) (int64, error) {
	var buf bytes.Buffer
	mw, err := v4manifest.NewWriter(&buf, v4manifest.WriterOptions{
		Content: content, Schema: st.meta.CurrentSchema(), SchemaID: st.meta.CurrentSchema().ID,
		Specs: st.meta.PartitionSpecs(), RowLineage: true, TableLocation: st.location,
	})
	if err != nil {
		return 0, wrapErr(KindInternal, err, "manifest writer")
	}
	for i := range rows {
		if err := mw.Write(&rows[i]); err != nil {
			_ = mw.Close()
			return 0, wrapErr(KindInternal, err, "write manifest row")
		}
	}
	if err := mw.Close(); err != nil {
		return 0, wrapErr(KindInternal, err, "close manifest")
	}
	if err := s.writeMetadataFile(ctx, w, loc, buf.Bytes()); err != nil {
		return 0, wrapErr(KindCommitFailed, err, "Commit failed: cannot write manifest %s, nothing was committed", loc)
	}
	return int64(buf.Len()), nil
}

// dataFileRow validates one added data file and builds its row (tracking
// filled in later).
func (s *Service) dataFileRow(ctx context.Context, w *store.Warehouse, st *v4State, in DataFileInput) (*v4manifest.TrackedFile, error) {
	loc := v4manifest.Resolve(st.location, in.Location)
	if in.FileFormat != "parquet" && in.FileFormat != "PARQUET" {
		return nil, rejectV4("unsupported-file-format", "Data file %s: file format %q is not supported (parquet only)", loc, in.FileFormat)
	}
	spec := st.meta.PartitionSpecByID(in.SpecID)
	if spec == nil {
		return nil, newErr(KindBadRequest, "Data file %s: unknown spec-id %d", loc, in.SpecID)
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
			return nil, newErr(KindBadRequest, "Data file %s: unknown sort-order-id %d", loc, *in.SortOrderID)
		}
		row.SortOrderID = ptrTo(int32(*in.SortOrderID))
	}
	part, err := partitionValues(sc, spec, loc, in.Partition)
	if err != nil {
		return nil, err
	}
	row.Partition = part
	if in.Stats != nil {
		row.ContentStats = in.Stats
		return row, nil
	}
	if len(in.ContentStats) > 0 && string(in.ContentStats) != "null" {
		stats, err := parseContentStats(sc, in.ContentStats)
		if err != nil {
			return nil, newErr(KindBadRequest, "Data file %s: %v", loc, err)
		}
		row.ContentStats = stats
		return row, nil
	}
	io, err := s.fileIO(ctx, w, loc)
	if err != nil {
		return nil, err
	}
	fi, err := readFooter(ctx, io, loc, sc)
	if err != nil {
		return nil, rejectV4("file-unreadable", "Data file %s: cannot read its Parquet footer: %v", loc, err)
	}
	if fi.NumRows != in.RecordCount {
		return nil, rejectV4("record-count-mismatch", "Data file %s has %d rows, not record-count %d", loc, fi.NumRows, in.RecordCount)
	}
	if fi.Size != in.FileSizeInBytes {
		return nil, rejectV4("file-size-mismatch", "Data file %s is %d bytes, not file-size-in-bytes %d", loc, fi.Size, in.FileSizeInBytes)
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
			return nil, newErr(KindBadRequest, "File %s: spec %d is unpartitioned but a partition was given", loc, spec.ID())
		}
		return nil, nil
	}
	out := map[int]any{}
	names := map[string]bool{}
	for _, pf := range spec.Fields() {
		names[pf.Name] = true
		src, ok := sc.FindFieldByID(pf.SourceID())
		if !ok {
			return nil, newErr(KindBadRequest, "Partition field %s: source column %d is not in the current schema", pf.Name, pf.SourceID())
		}
		v, err := jsonToValue(pf.Transform.ResultType(src.Type), in[pf.Name])
		if err != nil {
			return nil, newErr(KindBadRequest, "File %s: partition value %s: %v", loc, pf.Name, err)
		}
		out[pf.FieldID] = v
	}
	for k := range in {
		if !names[k] {
			return nil, newErr(KindBadRequest, "File %s: %q is not a field of partition spec %d", loc, k, spec.ID())
		}
	}
	return out, nil
}

func ptrTo[T any](v T) *T { return &v }

// newSnapshotID returns a positive random snapshot id.
func newSnapshotID() int64 { return rand.Int64N(1<<62) + 1 }

// CommitFiles adds and removes whole files of a v4 table. The server writes
// a new leaf for the added files, rewrites only the leaves holding removed
// files, carries every other leaf into a new root manifest and commits a
// snapshot pointing at it. 400 ValidationException (with a reason) for bad
// input, 409 when requirements fail or retries run out.
func (s *Service) CommitFiles(ctx context.Context, warehouse string, c FilesCommit) (*TableResult, error) {
	if len(c.AddDataFiles) == 0 && len(c.RemoveFiles) == 0 && len(c.AddEqualityDeleteFiles) == 0 && len(c.SetDeletionVectors) == 0 {
		return nil, newErr(KindBadRequest, "A files commit needs at least one non-empty list")
	}
	w, reqs, err := s.v4Target(ctx, warehouse, c.Ident, c.Requirements)
	if err != nil {
		return nil, err
	}
	return s.retryV4(ctx, w, func() (*TableResult, []string, error) {
		return s.commitFilesOnce(ctx, w, c, reqs)
	})
}

// v4Target resolves the warehouse a v4 commit writes to and parses its
// requirements: 400 for a bad requirement or identifier, 403 when the write
// is denied, 404 for an unknown warehouse.
func (s *Service) v4Target(ctx context.Context, warehouse string, id Ident, rawReqs json.RawMessage) (*store.Warehouse, []requirement, error) {
	reqs, err := parseRequirements(rawReqs)
	if err != nil {
		return nil, nil, err
	}
	w, err := s.writeTarget(ctx, warehouse, id)
	if err != nil {
		return nil, nil, err
	}
	return w, reqs, nil
}

// retryV4 runs one attempt of a v4 commit until it lands, fails for good,
// or loses too many races. A failed attempt's files are deleted unless the
// outcome is unknown (the commit may reference them).
func (s *Service) retryV4(ctx context.Context, w *store.Warehouse, once func() (*TableResult, []string, error)) (*TableResult, error) {
	for attempt := 1; ; attempt++ {
		res, written, err := once()
		if err == nil {
			s.commitOutcome("committed")
			return res, nil
		}
		if !errors.Is(err, store.ErrOutcomeUnknown) {
			for _, f := range written {
				s.deleteOrphan(ctx, w, f)
			}
		}
		if errors.Is(err, store.ErrConflict) && attempt < s.opts.MaxCommitAttempts {
			if berr := conflictBackoff(ctx, attempt); berr != nil {
				return nil, wrapErr(KindCommitFailed, berr, "Commit failed: request cancelled while retrying, nothing was committed")
			}
			continue
		}
		return nil, s.swapErr(validationErr(err), attempt)
	}
}

// swapErr maps a failed pointer swap (or a staging error) to its outcome.
func (s *Service) swapErr(err error, attempt int) error {
	var se *Error
	switch {
	case errors.As(err, &se):
		if se.Kind == KindCommitFailed {
			s.commitOutcome("requirement_failed")
		} else {
			s.commitOutcome("error")
		}
		return err
	case errors.Is(err, store.ErrOutcomeUnknown):
		s.commitOutcome("unknown")
		return wrapErr(KindCommitStateUnknown, err, "Commit state unknown: the catalog database failed while committing")
	case errors.Is(err, store.ErrConflict):
		s.commitOutcome("conflict")
		return wrapErr(KindCommitFailed, err, "Commit failed: the table changed concurrently %d times; retry", attempt)
	}
	s.commitOutcome("error")
	return wrapErr(KindCommitFailed, err, "Commit failed: catalog database error before commit, nothing was committed: %v", err)
}

// commitFilesOnce stages and swaps one attempt. It returns the files it
// wrote so that a failed attempt can remove them.
func (s *Service) commitFilesOnce(ctx context.Context, w *store.Warehouse, c FilesCommit, reqs []requirement) (*TableResult, []string, error) {
	st, err := s.loadV4(ctx, w, c.Ident)
	if err != nil {
		return nil, nil, err
	}
	if err := checkRequirements(reqs, st.meta); err != nil {
		return nil, nil, err
	}
	var written []string
	snapID := newSnapshotID()
	seq := st.meta.LastSequenceNumber() + 1
	firstRowID := st.meta.NextRowID()
	commitUUID := uuid.NewString()

	// Added files: one new leaf, explicit tracking.
	added := make([]v4manifest.TrackedFile, 0, len(c.AddDataFiles))
	next := firstRowID
	var addedRecords int64
	seen := map[string]bool{}
	for _, in := range c.AddDataFiles {
		row, err := s.dataFileRow(ctx, w, st, in)
		if err != nil {
			return nil, written, err
		}
		if seen[row.Location] {
			return nil, written, newErr(KindBadRequest, "Data file %s is added twice", row.Location)
		}
		seen[row.Location] = true
		row.Tracking = v4manifest.Tracking{Status: v4manifest.StatusAdded, SnapshotID: ptrTo(snapID), SequenceNumber: ptrTo(seq),
			FileSequenceNumber: ptrTo(seq), FirstRowID: ptrTo(next)}
		next += row.RecordCount
		addedRecords += row.RecordCount
		added = append(added, *row)
	}

	remove := map[string]bool{}
	for _, r := range c.RemoveFiles {
		remove[v4manifest.Resolve(st.location, r)] = false
	}
	dvs := map[string]*DeletionVectorInput{}
	dvDone := map[string]bool{}
	for i := range c.SetDeletionVectors {
		d := &c.SetDeletionVectors[i]
		base := v4manifest.Resolve(st.location, d.DataFile)
		if dvs[base] != nil {
			return nil, written, newErr(KindBadRequest, "set-deletion-vectors: %s appears twice", base)
		}
		if d.Cardinality < 0 || d.SizeInBytes <= 0 || d.Offset < 0 || d.Location == "" {
			return nil, written, newErr(KindBadRequest, "set-deletion-vectors: invalid deletion vector for %s", base)
		}
		dvs[base] = d
	}
	var removedRecords, deletedRows int64
	var removedFiles, removedDeleteFiles, changedDVs int
	newRoot := make([]v4manifest.TrackedFile, 0, len(st.rootRows)+3)
	leafN := 0
	nextLeaf := func() string {
		loc := fmt.Sprintf("%s/metadata/%s-m%d.parquet", st.location, commitUUID, leafN)
		leafN++
		return loc
	}
	for _, rr := range st.rootRows {
		if !rr.Tracking.Status.Live() {
			continue // DELETED/REPLACED rows live one snapshot only
		}
		isLeaf := rr.ContentType == v4manifest.ContentDataManifest || rr.ContentType == v4manifest.ContentDeleteManifest
		if isLeaf && (len(remove) > 0 || (len(dvs) > 0 && rr.ContentType == v4manifest.ContentDataManifest)) {
			rows, err := s.readLeaf(ctx, w, st, &rr, nil)
			if err != nil {
				return nil, written, err
			}
			hit := false
			for _, r := range rows {
				_, rm := remove[r.Location]
				if r.Tracking.Status.Live() && (rm || dvs[r.Location] != nil) {
					hit = true
					break
				}
			}
			if hit {
				out := make([]v4manifest.TrackedFile, 0, len(rows)+len(dvs))
				for _, r := range rows {
					if !r.Tracking.Status.Live() {
						continue
					}
					if _, ok := remove[r.Location]; ok {
						remove[r.Location] = true
						r.Tracking.Status = v4manifest.StatusDeleted
						r.Tracking.SnapshotID = ptrTo(snapID)
						if r.ContentType == v4manifest.ContentData {
							removedRecords += r.RecordCount
							removedFiles++
						} else {
							removedDeleteFiles++
						}
						out = append(out, r)
						continue
					}
					if d := dvs[r.Location]; d != nil && r.ContentType == v4manifest.ContentData {
						dvDone[r.Location] = true
						if d.Cardinality > r.RecordCount {
							return nil, written, newErr(KindBadRequest, "set-deletion-vectors: cardinality %d exceeds the %d rows of %s", d.Cardinality, r.RecordCount, r.Location)
						}
						replaced := r
						replaced.Tracking.Status = v4manifest.StatusReplaced
						replaced.Tracking.SnapshotID = ptrTo(snapID)
						mod := r
						mod.Tracking.Status = v4manifest.StatusModified
						mod.Tracking.DVSnapshotID = ptrTo(snapID)
						mod.DeletionVector = &v4manifest.DeletionVector{Location: v4manifest.Resolve(st.location, d.Location),
							Offset: d.Offset, SizeInBytes: d.SizeInBytes, Cardinality: d.Cardinality}
						out = append(out, replaced, mod)
						changedDVs++
						deletedRows += d.Cardinality
						continue
					}
					cf, _ := v4manifest.CarryForward(r)
					out = append(out, cf)
				}
				content := v4manifest.ContentDataLeaf
				if rr.ContentType == v4manifest.ContentDeleteManifest {
					content = v4manifest.ContentDeleteLeaf
				}
				newLeaf := nextLeaf()
				size, err := s.writeManifest(ctx, w, st, newLeaf, content, out)
				if err != nil {
					return nil, written, err
				}
				written = append(written, newLeaf)
				gone := rr
				gone.Tracking.Status = v4manifest.StatusDeleted
				gone.Tracking.SnapshotID = ptrTo(snapID)
				mrow := manifestRow(newLeaf, out, size, snapID, seq, nil)
				mrow.ContentType = rr.ContentType
				newRoot = append(newRoot, gone, mrow)
				continue
			}
		}
		cf, _ := v4manifest.CarryForward(rr)
		newRoot = append(newRoot, cf)
	}
	for loc, found := range remove {
		if !found {
			return nil, written, rejectV4("unknown-data-file", "remove-files: %s is not a live file of the table", loc)
		}
	}
	for loc := range dvs {
		if !dvDone[loc] {
			return nil, written, rejectV4("unknown-data-file", "set-deletion-vectors: %s is not a live data file of the table", loc)
		}
	}
	// Added files go into leaves of at most MaxLeafEntries rows, so that a
	// later change rewrites a bounded leaf: its cost follows the change.
	for start := 0; start < len(added); start += s.opts.MaxLeafEntries {
		chunk := added[start:min(start+s.opts.MaxLeafEntries, len(added))]
		leafLoc := nextLeaf()
		size, err := s.writeManifest(ctx, w, st, leafLoc, v4manifest.ContentDataLeaf, chunk)
		if err != nil {
			return nil, written, err
		}
		written = append(written, leafLoc)
		newRoot = append(newRoot, manifestRow(leafLoc, chunk, size, snapID, seq, chunk[0].Tracking.FirstRowID))
	}
	if len(c.AddEqualityDeleteFiles) > 0 {
		dels := make([]v4manifest.TrackedFile, 0, len(c.AddEqualityDeleteFiles))
		for _, in := range c.AddEqualityDeleteFiles {
			row, err := s.equalityDeleteRow(st, in)
			if err != nil {
				return nil, written, err
			}
			row.Tracking = v4manifest.Tracking{Status: v4manifest.StatusAdded, SnapshotID: ptrTo(snapID), SequenceNumber: ptrTo(seq), FileSequenceNumber: ptrTo(seq)}
			dels = append(dels, *row)
		}
		leafLoc := nextLeaf()
		size, err := s.writeManifest(ctx, w, st, leafLoc, v4manifest.ContentDeleteLeaf, dels)
		if err != nil {
			return nil, written, err
		}
		written = append(written, leafLoc)
		mrow := manifestRow(leafLoc, dels, size, snapID, seq, nil)
		mrow.ContentType = v4manifest.ContentDeleteManifest
		newRoot = append(newRoot, mrow)
	}
	rootLoc := fmt.Sprintf("%s/metadata/snap-%d-%s.parquet", st.location, snapID, commitUUID)
	if _, err := s.writeManifest(ctx, w, st, rootLoc, v4manifest.ContentRoot, newRoot); err != nil {
		return nil, written, err
	}
	written = append(written, rootLoc)

	op := table.OpAppend
	switch {
	case len(added) > 0 && (removedFiles > 0 || changedDVs > 0 || len(c.AddEqualityDeleteFiles) > 0):
		op = table.OpOverwrite
	case len(added) == 0 && removedFiles == 0 && removedDeleteFiles == 0 && changedDVs == 0:
		op = table.OpDelete // equality deletes only
	case len(added) == 0:
		op = table.OpDelete
	}
	summary := iceberg.Properties{}
	for k, v := range c.SnapshotProperties {
		summary[k] = v
	}
	summary["added-data-files"] = strconv.Itoa(len(added))
	summary["added-records"] = strconv.FormatInt(addedRecords, 10)
	summary["deleted-data-files"] = strconv.Itoa(removedFiles)
	summary["deleted-records"] = strconv.FormatInt(removedRecords, 10)
	summary["added-delete-files"] = strconv.Itoa(len(c.AddEqualityDeleteFiles))
	summary["removed-delete-files"] = strconv.Itoa(removedDeleteFiles)
	summary["changed-deletion-vectors"] = strconv.Itoa(changedDVs)
	summary["added-position-deletes"] = strconv.FormatInt(deletedRows, 10)
	res, err := s.commitV4Snapshot(ctx, w, st, &table.Snapshot{
		SnapshotID: snapID, SequenceNumber: seq, TimestampMs: time.Now().UnixMilli(), ManifestList: rootLoc,
		Summary: &table.Summary{Operation: op, Properties: summary}, SchemaID: ptrTo(st.meta.CurrentSchema().ID),
		FirstRowID: ptrTo(firstRowID), AddedRows: ptrTo(next - firstRowID),
	})
	if err != nil {
		return nil, written, err
	}
	return res, nil, nil
}

// equalityDeleteRow validates one added equality-delete file.
func (s *Service) equalityDeleteRow(st *v4State, in EqualityDeleteInput) (*v4manifest.TrackedFile, error) {
	loc := v4manifest.Resolve(st.location, in.Location)
	if in.FileFormat != "parquet" && in.FileFormat != "PARQUET" {
		return nil, rejectV4("unsupported-file-format", "Delete file %s: file format %q is not supported (parquet only)", loc, in.FileFormat)
	}
	if len(in.EqualityIDs) == 0 {
		return nil, newErr(KindBadRequest, "Delete file %s: equality-ids are required", loc)
	}
	sc := st.meta.CurrentSchema()
	ids := make([]int32, len(in.EqualityIDs))
	for i, id := range in.EqualityIDs {
		if _, ok := sc.FindFieldByID(id); !ok {
			return nil, newErr(KindBadRequest, "Delete file %s: equality id %d is not in the schema", loc, id)
		}
		ids[i] = int32(id)
	}
	spec := st.meta.PartitionSpecByID(in.SpecID)
	if spec == nil {
		return nil, newErr(KindBadRequest, "Delete file %s: unknown spec-id %d", loc, in.SpecID)
	}
	part, err := partitionValues(sc, spec, loc, in.Partition)
	if err != nil {
		return nil, err
	}
	return &v4manifest.TrackedFile{
		ContentType: v4manifest.ContentEqualityDeletes, FormatVersion: FormatV4, Location: loc, FileFormat: "parquet",
		RecordCount: in.RecordCount, FileSizeInBytes: in.FileSizeInBytes, SpecID: ptrTo(int32(in.SpecID)),
		Partition: part, EqualityIDs: ids,
	}, nil
}

// manifestRow is the root row of a leaf written in this commit.
func manifestRow(loc string, rows []v4manifest.TrackedFile, size, snapID, seq int64, firstRowID *int64) v4manifest.TrackedFile {
	mi := v4manifest.ComputeManifestInfo(rows)
	stats, _ := v4manifest.AggregateStats(rows)
	return v4manifest.TrackedFile{
		Tracking: v4manifest.Tracking{Status: v4manifest.StatusAdded, SnapshotID: ptrTo(snapID), SequenceNumber: ptrTo(seq),
			FileSequenceNumber: ptrTo(seq), FirstRowID: firstRowID},
		ContentType: v4manifest.ContentDataManifest, FormatVersion: FormatV4, Location: loc, FileFormat: "parquet",
		RecordCount: int64(len(rows)), FileSizeInBytes: size, ManifestInfo: &mi, ContentStats: stats,
	}
}

// commitV4Snapshot adds snap to the table as the head of main, writes the
// metadata file and swaps the pointer (ErrConflict on a lost race).
func (s *Service) commitV4Snapshot(ctx context.Context, w *store.Warehouse, st *v4State, snap *table.Snapshot) (*TableResult, error) {
	if cur := st.meta.CurrentSnapshot(); cur != nil {
		snap.ParentSnapshotID = ptrTo(cur.SnapshotID)
	}
	b, err := table.MetadataBuilderFromBase(st.meta, st.obj.MetadataLocation)
	if err != nil {
		return nil, wrapErr(KindInternal, err, "metadata builder")
	}
	if err := b.AddSnapshot(snap); err != nil {
		return nil, wrapErr(KindInternal, err, "add snapshot")
	}
	if err := b.SetSnapshotRef(table.MainBranch, snap.SnapshotID, table.BranchRef); err != nil {
		return nil, wrapErr(KindInternal, err, "set main")
	}
	meta, err := b.Build()
	if err != nil {
		return nil, wrapErr(KindInternal, err, "build metadata")
	}
	data, err := marshalTableMetadata(meta, FormatV4)
	if err != nil {
		return nil, wrapErr(KindInternal, err, "encode metadata")
	}
	metaLoc, newLoc, err := s.writeNextMetadata(ctx, w, st.obj, st.location, meta.Properties(), data)
	if err != nil {
		return nil, err
	}
	err = s.store.ObjectsSwap(ctx, []store.Swap{{ObjectID: st.obj.ID, ExpectedMetadataLocation: st.obj.MetadataLocation,
		NewMetadataLocation: metaLoc, NewMetadata: data, NewFormatVersion: FormatV4, NewLocation: newLoc}})
	if err != nil {
		if !errors.Is(err, store.ErrOutcomeUnknown) {
			s.deleteOrphan(ctx, w, metaLoc)
		}
		return nil, err
	}
	return &TableResult{MetadataLocation: metaLoc, Metadata: data, Config: map[string]string{}}, nil
}

package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

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
	if len(c.ColumnFiles) == 0 {
		return nil, newErr(KindBadRequest, "A column-files commit needs at least one column file")
	}
	w, reqs, err := s.v4Target(ctx, warehouse, c.Ident, c.Requirements)
	if err != nil {
		return nil, err
	}
	var first map[string]baseState
	footers := map[string]*footerInfo{} // by column file location, reused across attempts
	return s.retryV4(ctx, w, func() (*TableResult, []string, error) {
		res, states, written, err := s.commitColumnsOnce(ctx, w, c, reqs, first, footers)
		if first == nil {
			first = states
		}
		return res, written, err
	})
}

func (s *Service) commitColumnsOnce(ctx context.Context, w *store.Warehouse, c ColumnFilesCommit, reqs []requirement,
	first map[string]baseState, footers map[string]*footerInfo,
) (*TableResult, map[string]baseState, []string, error) {
	st, err := s.loadV4(ctx, w, c.Ident)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkRequirements(reqs, st.meta); err != nil {
		return nil, nil, nil, err
	}
	sc := st.meta.CurrentSchema()
	vt := validation.Table{Location: st.location, Schema: sc, Specs: st.meta.PartitionSpecs()}
	files := make([]validation.ColumnFile, len(c.ColumnFiles))
	for i, in := range c.ColumnFiles {
		files[i] = validation.ColumnFile{
			DataFile: v4manifest.Resolve(st.location, in.DataFile), Location: v4manifest.Resolve(st.location, in.Location),
			FileFormat: in.FileFormat, FieldIDs: in.FieldIDs, FileSizeInBytes: in.FileSizeInBytes, RecordCount: in.RecordCount,
		}
	}
	if err := validation.CheckRequest(vt, files); err != nil {
		return nil, nil, nil, err
	}
	byBase := map[string][]validation.ColumnFile{}
	for _, f := range files {
		byBase[f.DataFile] = append(byBase[f.DataFile], f)
	}

	// Find the leaves holding the base files with a narrow projection.
	type hit struct {
		rootIdx int
		row     v4manifest.TrackedFile
	}
	found := map[string]*hit{}
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
				return nil, nil, nil, err
			}
			for _, r := range rows {
				if _, want := byBase[r.Location]; !want {
					continue
				}
				if h := found[r.Location]; h == nil || r.Tracking.Status.Live() {
					found[r.Location] = &hit{rootIdx: i, row: r}
				}
			}
		case v4manifest.ContentDeleteManifest:
			rows, err := s.readLeaf(ctx, w, st, rr, nil)
			if err != nil {
				return nil, nil, nil, err
			}
			for _, r := range rows {
				if r.Tracking.Status.Live() && r.ContentType == v4manifest.ContentEqualityDeletes {
					d := validation.DeleteFile{Location: r.Location, Partition: r.Partition, Unpartitioned: r.SpecID == nil || len(r.Partition) == 0}
					if r.Tracking.SequenceNumber != nil {
						d.SequenceNumber = *r.Tracking.SequenceNumber
					}
					if r.SpecID != nil {
						d.SpecID = int(*r.SpecID)
					}
					deletes = append(deletes, d)
				}
			}
		}
	}
	states := map[string]baseState{}
	for base, fs := range byBase {
		h := found[base]
		b := validation.Base{}
		if h != nil {
			b = validation.Base{Found: true, Live: h.row.Tracking.Status.Live(), IsData: h.row.ContentType == v4manifest.ContentData, RecordCount: h.row.RecordCount}
		}
		for _, f := range fs {
			if err := validation.CheckBase(f, b); err != nil {
				return nil, nil, nil, err
			}
		}
		states[base] = stateOf(&h.row)
		if first != nil && first[base] != states[base] {
			return nil, states, nil, newErr(KindCommitFailed, "Commit failed: data file %s was changed by a concurrent commit", base)
		}
	}

	// Read the footers of the column files in parallel (one ranged read each).
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, f := range files {
		if footers[f.Location] != nil {
			continue
		}
		wg.Add(1)
		go func(f validation.ColumnFile) {
			defer wg.Done()
			fi := &footerInfo{}
			io, err := s.fileIO(ctx, w, f.Location)
			if err == nil {
				fi, err = readFooter(ctx, io, f.Location, sc)
			}
			if err != nil {
				fi = &footerInfo{NumRows: -1, Nodes: map[int]validation.FooterColumn{}, Columns: map[int]footerColumn{}}
				fi.Size = -1
				fi.err = err.Error()
			}
			mu.Lock()
			footers[f.Location] = fi
			mu.Unlock()
		}(f)
	}
	wg.Wait()
	for _, f := range files {
		fi := footers[f.Location]
		vf := validation.Footer{Readable: fi.err == "", Err: fi.err, NumRows: fi.NumRows, Size: fi.Size, Nodes: fi.Nodes}
		if err := validation.CheckFooter(vt, f, vf); err != nil {
			return nil, states, nil, err
		}
	}

	snapID := newSnapshotID()
	seq := st.meta.LastSequenceNumber() + 1
	commitUUID := uuid.NewString()
	var written []string
	added, retired, modified := 0, 0, 0

	// Full read and rewrite of the affected leaves only.
	affected := map[int]bool{}
	for _, h := range found {
		affected[h.rootIdx] = true
	}
	newRoot := make([]v4manifest.TrackedFile, 0, len(st.rootRows)+len(affected))
	leafN := 0
	for i, rr := range st.rootRows {
		if !rr.Tracking.Status.Live() {
			continue
		}
		if !affected[i] {
			cf, _ := v4manifest.CarryForward(rr)
			newRoot = append(newRoot, cf)
			continue
		}
		rows, err := s.readLeaf(ctx, w, st, &rr, nil)
		if err != nil {
			return nil, states, written, err
		}
		out := make([]v4manifest.TrackedFile, 0, len(rows)+len(byBase))
		for _, r := range rows {
			if !r.Tracking.Status.Live() {
				continue
			}
			fs, isBase := byBase[r.Location]
			if !isBase {
				cf, _ := v4manifest.CarryForward(r)
				out = append(out, cf)
				continue
			}
			eq := func(a, b any) bool { c, err := compareAny(a, b); return err == nil && c == 0 }
			for _, f := range fs {
				var baseSeq int64
				if r.Tracking.SequenceNumber != nil {
					baseSeq = *r.Tracking.SequenceNumber
				}
				var spec int
				if r.SpecID != nil {
					spec = int(*r.SpecID)
				}
				if err := validation.CheckEqualityDeletes(f, baseSeq, spec, r.Partition, deletes, eq); err != nil {
					return nil, states, written, err
				}
			}
			replaced := r
			replaced.Tracking.Status = v4manifest.StatusReplaced
			replaced.Tracking.SnapshotID = ptrTo(snapID)
			out = append(out, replaced)
			mod, nAdded, nRetired := modifiedRow(r, fs, footers, snapID, seq)
			if mod.SortOrderID != nil && sortedBy(st.meta.SortOrders(), int(*mod.SortOrderID), fs) {
				// The file is no longer known to be sorted by that order.
				mod.SortOrderID = nil
			}
			out = append(out, mod)
			added += nAdded
			retired += nRetired
			modified++
		}
		leafLoc := fmt.Sprintf("%s/metadata/%s-m%d.parquet", st.location, commitUUID, leafN)
		leafN++
		size, err := s.writeManifest(ctx, w, st, leafLoc, v4manifest.ContentDataLeaf, out)
		if err != nil {
			return nil, states, written, err
		}
		written = append(written, leafLoc)
		gone := rr
		gone.Tracking.Status = v4manifest.StatusDeleted
		gone.Tracking.SnapshotID = ptrTo(snapID)
		newRoot = append(newRoot, gone, manifestRow(leafLoc, out, size, snapID, seq, nil))
	}
	rootLoc := fmt.Sprintf("%s/metadata/snap-%d-%s.parquet", st.location, snapID, commitUUID)
	if _, err := s.writeManifest(ctx, w, st, rootLoc, v4manifest.ContentRoot, newRoot); err != nil {
		return nil, states, written, err
	}
	written = append(written, rootLoc)
	summary := iceberg.Properties{}
	maps.Copy(summary, c.SnapshotProperties)
	summary["added-column-files"] = strconv.Itoa(added)
	summary["retired-column-files"] = strconv.Itoa(retired)
	summary["modified-data-files"] = strconv.Itoa(modified)
	firstRowID := st.meta.NextRowID()
	res, err := s.commitV4Snapshot(ctx, w, st, &table.Snapshot{
		SnapshotID: snapID, SequenceNumber: seq, TimestampMs: time.Now().UnixMilli(), ManifestList: rootLoc,
		Summary: &table.Summary{Operation: table.OpOverwrite, Properties: summary}, SchemaID: ptrTo(sc.ID),
		FirstRowID: ptrTo(firstRowID), AddedRows: ptrTo(int64(0)),
	})
	if err != nil {
		return nil, states, written, err
	}
	return res, states, nil, nil
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
func (s *Service) LiveColumnFiles(ctx context.Context, warehouse string, id Ident, snapshotID *int64) ([]v4manifest.TrackedFile, error) {
	w, st, err := s.loadV4At(ctx, warehouse, id, snapshotID)
	if err != nil {
		return nil, err
	}
	var out []v4manifest.TrackedFile
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
				out = append(out, r)
			}
		}
	}
	slices.SortFunc(out, func(a, b v4manifest.TrackedFile) int {
		switch {
		case a.Location < b.Location:
			return -1
		case a.Location > b.Location:
			return 1
		}
		return 0
	})
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
	ColumnFiles     []v4manifest.ColumnFile
	DeletionVector  *v4manifest.DeletionVector
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
				e.Reason = "column-files-unsupported-by-client"
				return nil, e
			}
			t := ScanTask{Location: r.Location, FileFormat: r.FileFormat, Partition: r.Partition, RecordCount: r.RecordCount,
				FileSizeInBytes: r.FileSizeInBytes, FirstRowID: r.Tracking.FirstRowID, ColumnFiles: r.ColumnFiles,
				DeletionVector: r.DeletionVector}
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

package v4commits

import (
	"bytes"
	"context"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/compact"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/parquetstats"
	"github.com/lakehold/catalog/internal/stitch"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
)

// FoldTo folds live data row r of st (its base, column files and deletion
// vector; locations resolved) into one new file at dst, with the same
// checks as a compaction's fold (package compact: required-field nulls
// refused, the written file read back and compared), and returns r as the
// folded file: dst, its size, rows and footer stats, no column files nor
// deletion vector, its lineage (sequence number, first_row_id) kept. The
// table itself is not changed: nothing is committed. Errors: the fold's
// 400 (required-field-nulls, fold-mismatch, ...) naming the base relative
// to the table, a bad name mapping 400, and storage errors of the write.
// The caller deletes dst when it gives up.
func (cm *Committer) FoldTo(ctx context.Context, w *store.Warehouse, st *State, r v4manifest.TrackedFile, dst string) (v4manifest.TrackedFile, error) {
	name := v4manifest.Relativize(st.location, r.Location)
	nm, err := parquetstats.ParseNameMapping(st.meta.Properties()[table.DefaultNameMappingKey])
	if err != nil {
		return r, fault.New(fault.BadRequest, "the table's schema.name-mapping.default is not a name mapping")
	}
	if r.Tracking.FirstRowID == nil {
		return r, fault.New(fault.BadRequest, "Cannot fold %s: it has no row lineage to keep", name)
	}
	task := stitch.Task{DataFile: r.Location, RecordCount: r.RecordCount, NameMapping: nm}
	for _, cf := range r.ColumnFiles {
		ids := make([]int, len(cf.FieldIDs))
		for i, id := range cf.FieldIDs {
			ids[i] = int(id)
		}
		task.ColumnFiles = append(task.ColumnFiles, stitch.ColumnFile{Location: v4manifest.Resolve(st.location, cf.Location), FieldIDs: ids})
	}
	if d := r.DeletionVector; d != nil {
		task.DeletionVector = &stitch.DeletionVector{Location: d.Location, Offset: d.Offset, SizeInBytes: d.SizeInBytes, Cardinality: d.Cardinality}
	}
	sc := st.meta.CurrentSchema()
	var buf bytes.Buffer
	out, err := compact.Rewrite(ctx, cm.stitchOpener(w), &buf, compact.Input{Task: task, FirstRowID: *r.Tracking.FirstRowID, Schema: sc})
	if err != nil {
		cm.log.WarnContext(ctx, "fold rewrite failed", "file", name, "error", strings.ReplaceAll(storage.PathFree(err).Error(), st.location, "<table>"))
		return r, rewriteFailure(err, name)
	}
	fi, err := parquetstats.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), sc)
	if err != nil {
		return r, fault.Wrap(fault.Internal, err, "Cannot read back the folded file of %s", name)
	}
	if err := cm.d.Tables.WriteFile(ctx, w, dst, buf.Bytes()); err != nil {
		return r, err
	}
	row := r
	row.Location, row.FileFormat = dst, "parquet"
	row.RecordCount, row.FileSizeInBytes = out.Rows, out.Bytes
	row.ColumnFiles, row.DeletionVector, row.KeyMetadata, row.SplitOffsets = nil, nil, nil, nil
	row.ContentStats = map[int]*v4manifest.FieldStats{}
	for id, col := range fi.Columns {
		if _, known := sc.FindFieldByID(id); known && col.Stats != nil {
			row.ContentStats[id] = col.Stats
		}
	}
	return row, nil
}

// Package compact folds a v4 base data file, its column files and its
// deletion vector back into one Parquet data file. The rewritten file keeps
// the rows' identities: it carries an explicit _row_id column (row i of the
// base has id first_row_id+i unless the base already materialized it), so
// dropping the deleted rows does not renumber the survivors, and the commit
// can keep the base's first_row_id. Reads go through package stitch; the
// package does no catalog work of its own.
package compact

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table/dv"

	"github.com/lakehold/catalog/internal/foldcheck"
	"github.com/lakehold/catalog/internal/parquetstats"
	"github.com/lakehold/catalog/internal/stitch"
)

// Input is one base file to fold.
type Input struct {
	// Task names the base, its record count, its live column files and its
	// deletion vector (nil when none).
	Task stitch.Task
	// FirstRowID is the base's first_row_id: the id of its row 0.
	FirstRowID int64
	// Schema is the table's current schema; every top-level field present
	// in the base or a column file is written, typed by it.
	Schema *iceberg.Schema
}

// Output describes a written file.
type Output struct {
	// Rows is the row count of the new file: the base's minus the deleted.
	Rows int64
	// Dropped is the number of rows the deletion vector removed.
	Dropped int64
	// Bytes is the size of the new file.
	Bytes int64
}

// ErrRowCount is returned when the deletion vector's cardinality and the
// rows it removes disagree, or the result's count is not base − deleted.
var ErrRowCount = errors.New("compact: rewritten row count does not match base rows minus deleted rows")

// ErrUnidentifiedColumn is returned for a base file with a top-level
// column that has no field id, written or given by the table's name
// mapping (Task.NameMapping): folding it would drop that column's data.
var ErrUnidentifiedColumn = errors.New("compact: base file column without a field id")

// Rewrite reads the base of in (with its column files and deletion vector)
// through open and writes the folded file to w as zstd Parquet. It returns
// an error when a file cannot be read, a column file is misaligned
// (stitch.ErrMisaligned), a live row holds a null in a required field
// (*foldcheck.RequiredNullsError), the row count does not add up
// (ErrRowCount), a base column has no field id (ErrUnidentifiedColumn),
// or the written file, read back, differs from the rows written to it
// (*foldcheck.MismatchError). Only a failed write leaves anything in w.
// A base written without field ids is read through in.Task.NameMapping;
// the folded file carries the ids.
func Rewrite(ctx context.Context, open stitch.Opener, w io.Writer, in Input) (Output, error) {
	baseIDs, err := fileFieldIDs(ctx, open, in.Task.DataFile, in.Task.NameMapping)
	if err != nil {
		return Output{}, err
	}
	ids := presentFields(in.Schema, baseIDs, in.Task.ColumnFiles)
	task := in.Task
	task.DeletionVector = nil // positions are needed to number the rows
	rec, err := stitch.Read(ctx, open, in.Schema, task, ids)
	if err != nil {
		return Output{}, err
	}
	defer rec.Release()
	full, err := withLineage(ctx, open, rec, in, baseIDs)
	if err != nil {
		return Output{}, err
	}
	defer full.Release()
	kept, dropped, err := dropDeleted(ctx, open, full, in.Task.DeletionVector)
	if err != nil {
		return Output{}, err
	}
	defer kept.Release()
	if kept.NumRows() != in.Task.RecordCount-dropped {
		return Output{}, fmt.Errorf("%w: %d rows, want %d", ErrRowCount, kept.NumRows(), in.Task.RecordCount-dropped)
	}
	n, err := writeChecked(ctx, w, kept, in.Schema)
	if err != nil {
		return Output{}, err
	}
	return Output{Rows: kept.NumRows(), Dropped: dropped, Bytes: n}, nil
}

// writeChecked writes the rows of rec to w once they pass the fold
// checks: no null in a required field before writing
// (*foldcheck.RequiredNullsError), and the written file, read back, holds
// the rows (*foldcheck.MismatchError). Nothing reaches w unless both pass.
func writeChecked(ctx context.Context, w io.Writer, rec arrow.RecordBatch, sc *iceberg.Schema) (int64, error) {
	if !hooks.skipRequired {
		if err := foldcheck.RequiredNulls(rec, sc); err != nil {
			return 0, fmt.Errorf("compact: %w", err)
		}
	}
	out := requiredness(rec, sc)
	if hooks.alter != nil {
		out = hooks.alter(out)
	}
	var buf bytes.Buffer
	if err := writeParquet(&buf, out); err != nil {
		return 0, err
	}
	if err := verify(ctx, rec, buf.Bytes()); err != nil {
		return 0, err
	}
	n, err := w.Write(buf.Bytes())
	return int64(n), err
}

// presentFields lists the schema's top-level field ids that the base or a
// column file carries. A field in neither is null for every row, which a
// missing column also says, so it is left out rather than written.
func presentFields(sc *iceberg.Schema, base map[int]bool, cfs []stitch.ColumnFile) []int {
	have := map[int]bool{}
	for id := range base {
		have[id] = true
	}
	for _, cf := range cfs {
		for _, id := range cf.FieldIDs {
			have[id] = true
		}
	}
	var ids []int
	for _, f := range sc.Fields() {
		if have[f.ID] {
			ids = append(ids, f.ID)
		}
	}
	return ids
}

// fileFieldIDs lists the field ids of a Parquet file's top-level columns:
// written in the file, else given by the table's name mapping nm (nil for
// none); a column with neither has no field and is left out.
func fileFieldIDs(ctx context.Context, open stitch.Opener, loc string, nm iceberg.NameMapping) (map[int]bool, error) {
	pf, err := stitch.OpenParquet(ctx, open, loc, -1)
	if err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	defer pf.Close()
	sch := pf.MetaData().Schema
	ids := parquetstats.FieldIDs(sch.Root(), nm)
	out := map[int]bool{}
	for c := 0; c < sch.NumColumns(); c++ {
		root := sch.ColumnRoot(c)
		id, ok := ids[root]
		if !ok {
			// A reader ignores such a column, but the rewrite would drop
			// its data for good (and the base is the only copy).
			return nil, fmt.Errorf("%w: %s: column %q has no field id and the table's name mapping gives it none", ErrUnidentifiedColumn, loc, root.Name())
		}
		out[id] = true
	}
	return out, nil
}

// fieldMeta is the Arrow metadata that gives a Parquet column its field id.
func fieldMeta(id int) arrow.Metadata {
	return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)})
}

// requiredness marks the table's required fields non-nullable so that the
// file's columns are REQUIRED where the schema says so (stitch reads every
// column as nullable); the lineage columns stay optional, as Iceberg
// defines them.
func requiredness(rec arrow.RecordBatch, sc *iceberg.Schema) arrow.RecordBatch {
	fields := make([]arrow.Field, rec.NumCols())
	for i, f := range rec.Schema().Fields() {
		v, _ := f.Metadata.GetValue("PARQUET:field_id")
		id, _ := strconv.Atoi(v)
		if tf, ok := sc.FindFieldByID(id); ok && tf.Required {
			f.Nullable = false
		}
		fields[i] = f
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), rec.Columns(), rec.NumRows())
}

// writeParquet writes rec as one zstd-compressed Parquet file. It releases
// rec.
func writeParquet(w io.Writer, rec arrow.RecordBatch) error {
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithMaxRowGroupLength(1<<20))
	pw, err := pqarrow.NewFileWriter(rec.Schema(), w, props, pqarrow.NewArrowWriterProperties())
	if err != nil {
		return fmt.Errorf("compact: parquet writer: %w", err)
	}
	if err := pw.Write(rec); err != nil {
		_ = pw.Close()
		return fmt.Errorf("compact: write: %w", err)
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("compact: close: %w", err)
	}
	return nil
}

// dropDeleted drops the rows the deletion vector dvr holds (none when nil)
// and returns how many it dropped.
func dropDeleted(ctx context.Context, open stitch.Opener, rec arrow.RecordBatch, dvr *stitch.DeletionVector) (arrow.RecordBatch, int64, error) {
	if dvr == nil {
		rec.Retain()
		return rec, 0, nil
	}
	f, err := open(ctx, dvr.Location)
	if err != nil {
		return nil, 0, fmt.Errorf("compact: open deletion vector %s: %w", dvr.Location, err)
	}
	defer f.Close()
	blob := make([]byte, dvr.SizeInBytes)
	if _, err := f.ReadAt(blob, dvr.Offset); err != nil {
		return nil, 0, fmt.Errorf("compact: read deletion vector %s: %w", dvr.Location, err)
	}
	bm, err := dv.DeserializeDV(blob, dvr.Cardinality)
	if err != nil {
		return nil, 0, fmt.Errorf("compact: deletion vector %s: %w", dvr.Location, err)
	}
	mb := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer mb.Release()
	var dropped int64
	for i := int64(0); i < rec.NumRows(); i++ {
		del := bm.Contains(uint64(i))
		if del {
			dropped++
		}
		mb.Append(!del)
	}
	if dropped != dvr.Cardinality {
		return nil, 0, fmt.Errorf("%w: deletion vector holds %d positions inside the file, cardinality %d", ErrRowCount, dropped, dvr.Cardinality)
	}
	mask := mb.NewBooleanArray()
	defer mask.Release()
	out, err := compute.FilterRecordBatch(ctx, rec, mask, compute.DefaultFilterOptions())
	if err != nil {
		return nil, 0, fmt.Errorf("compact: apply deletion vector: %w", err)
	}
	return out, dropped, nil
}

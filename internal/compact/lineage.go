package compact

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/internal/parquetstats"
	"github.com/lakehold/catalog/internal/stitch"
	"github.com/lakehold/catalog/v4manifest"
)

// withLineage appends the row-lineage columns to rec: _row_id always (the
// base's materialized id where it has one, else first_row_id+position) and
// _last_updated_sequence_number when the base or a column file carries it
// (otherwise it stays absent, so every row inherits the new file's data
// sequence number, which the commit keeps equal to the base's).
func withLineage(ctx context.Context, open stitch.Opener, rec arrow.RecordBatch, in Input, baseIDs map[int]bool) (arrow.RecordBatch, error) {
	n := rec.NumRows()
	var stored *array.Int64
	if baseIDs[v4manifest.FieldRowID] {
		var err error
		if stored, err = readInt64(ctx, open, in.Task.DataFile, v4manifest.FieldRowID, n, in.Task.NameMapping); err != nil {
			return nil, err
		}
		defer stored.Release()
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.Reserve(int(n))
	for i := int64(0); i < n; i++ {
		if stored != nil && stored.IsValid(int(i)) {
			b.UnsafeAppend(stored.Value(int(i)))
		} else {
			b.UnsafeAppend(in.FirstRowID + i)
		}
	}
	ids := b.NewInt64Array()
	defer ids.Release()
	fields := append(rec.Schema().Fields(), arrow.Field{Name: "_row_id", Type: arrow.PrimitiveTypes.Int64, Nullable: true,
		Metadata: fieldMeta(v4manifest.FieldRowID)})
	cols := append(append([]arrow.Array{}, rec.Columns()...), ids)
	if src := lastUpdatedSource(in.Task, baseIDs); src != "" {
		lus, err := readInt64(ctx, open, src, v4manifest.FieldLastUpdatedSequenceNumber, n, in.Task.NameMapping)
		if err != nil {
			return nil, err
		}
		defer lus.Release()
		fields = append(fields, arrow.Field{Name: "_last_updated_sequence_number", Type: arrow.PrimitiveTypes.Int64,
			Nullable: true, Metadata: fieldMeta(v4manifest.FieldLastUpdatedSequenceNumber)})
		cols = append(cols, lus)
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, n), nil
}

// lastUpdatedSource is the file that holds the live
// _last_updated_sequence_number of the task: the column file listing it,
// else the base when it has the column, else "".
func lastUpdatedSource(task stitch.Task, baseIDs map[int]bool) string {
	for _, cf := range task.ColumnFiles {
		for _, id := range cf.FieldIDs {
			if id == v4manifest.FieldLastUpdatedSequenceNumber {
				return cf.Location
			}
		}
	}
	if baseIDs[v4manifest.FieldLastUpdatedSequenceNumber] {
		return task.DataFile
	}
	return ""
}

// readInt64 reads the top-level long column with field id fieldID of the
// file at loc, which must have rows rows: an error when the column is
// missing, not a long, or the file is misaligned. Columns without a field
// id take the one the name mapping nm gives them.
func readInt64(ctx context.Context, open stitch.Opener, loc string, fieldID int, rows int64, nm iceberg.NameMapping) (*array.Int64, error) {
	pf, err := stitch.OpenParquet(ctx, open, loc, rows)
	if err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	defer pf.Close()
	leaf := -1
	sch := pf.MetaData().Schema
	ids := parquetstats.FieldIDs(sch.Root(), nm)
	for c := 0; c < sch.NumColumns(); c++ {
		if id, ok := ids[sch.ColumnRoot(c)]; ok && id == fieldID {
			leaf = c
		}
	}
	if leaf < 0 {
		return nil, fmt.Errorf("compact: %s has no column with field id %d", loc, fieldID)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 * 1024}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	rr, err := fr.GetRecordReader(ctx, []int{leaf}, nil)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for rr.Next() {
		col, ok := rr.RecordBatch().Column(0).(*array.Int64)
		if !ok {
			return nil, fmt.Errorf("compact: %s: field %d is not a long column", loc, fieldID)
		}
		for i := 0; i < col.Len(); i++ {
			if col.IsNull(i) {
				b.AppendNull()
			} else {
				b.Append(col.Value(i))
			}
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b.NewInt64Array(), nil
}

package stitch_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/clients/go/stitch"
	"github.com/lakehold/catalog/internal/parquettest"
)

const rows = 6

var schema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.Int64})

func md(id int) arrow.Metadata {
	return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)})
}

// write writes int64 columns: cols[id][row], nil meaning null.
func write(t *testing.T, path string, ids []int, cols map[int][]*int64) {
	fields := make([]arrow.Field, len(ids))
	for i, id := range ids {
		fields[i] = arrow.Field{Name: "c" + strconv.Itoa(id), Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: md(id)}
	}
	parquettest.Write(t, path, fields, func(b *array.RecordBuilder) {
		for i, id := range ids {
			ib := b.Field(i).(*array.Int64Builder)
			for _, v := range cols[id] {
				if v == nil {
					ib.AppendNull()
				} else {
					ib.Append(*v)
				}
			}
		}
	})
}

func vals(vs ...int64) []*int64 {
	out := make([]*int64, len(vs))
	for i, v := range vs {
		if v >= 0 {
			v := v
			out[i] = &v
		}
	}
	return out
}

func open(_ context.Context, loc string) (stitch.File, error) { return os.Open(loc) }

// column reads one int64 column of a record (-1 for null).
func column(t *testing.T, rec arrow.RecordBatch, i int) []int64 {
	a, ok := rec.Column(i).(*array.Int64)
	require.True(t, ok)
	out := make([]int64, a.Len())
	for r := range out {
		out[r] = -1
		if a.IsValid(r) {
			out[r] = a.Value(r)
		}
	}
	return out
}

func ptr(v int64) *int64 { return &v }

// TestRowLineage: the row-lineage rules of docs/column-files.md, case by
// case: _row_id is materialized-or-first_row_id+pos; the
// _last_updated_sequence_number of an entry without column files is the
// base file's materialized value or the data sequence number, and with
// column files the value of the column file carrying it (unless stale) or
// else the data sequence number.
func TestRowLineage(t *testing.T) {
	dir := t.TempDir()
	plain, lin := filepath.Join(dir, "plain.parquet"), filepath.Join(dir, "lineage.parquet")
	write(t, plain, []int{1, 2}, map[int][]*int64{1: vals(0, 1, 2, 3, 4, 5), 2: vals(10, 11, 12, 13, 14, 15)})
	// A base file that materializes both lineage columns (nulls inherit).
	write(t, lin, []int{1, 2, stitch.RowIDFieldID, stitch.LastUpdatedFieldID}, map[int][]*int64{
		1: vals(0, 1, 2, 3, 4, 5), 2: vals(10, 11, 12, 13, 14, 15),
		stitch.RowIDFieldID: vals(500, -1, 502, -1, -1, -1), stitch.LastUpdatedFieldID: vals(3, -1, 2, -1, 3, -1)})
	cfV, cfLin := filepath.Join(dir, "cf-v.parquet"), filepath.Join(dir, "cf-lin.parquet")
	write(t, cfV, []int{2}, map[int][]*int64{2: vals(20, 21, 22, 23, 24, 25)})
	// A column update of v that changed rows 1 and 4 (null: inherits the
	// bumped sequence number) and carried the others' lineage over.
	write(t, cfLin, []int{2, stitch.LastUpdatedFieldID}, map[int][]*int64{2: vals(20, 21, 22, 23, 24, 25),
		stitch.LastUpdatedFieldID: vals(3, -1, 2, 3, -1, 3)})

	cases := []struct {
		name            string
		task            stitch.Task
		rowIDs, updated []int64
	}{
		{"no column files, nothing materialized",
			stitch.Task{DataFile: plain, FirstRowID: ptr(100), SequenceNumber: 4},
			[]int64{100, 101, 102, 103, 104, 105}, []int64{4, 4, 4, 4, 4, 4}},
		{"row ids not assigned",
			stitch.Task{DataFile: plain, SequenceNumber: 4},
			[]int64{-1, -1, -1, -1, -1, -1}, []int64{4, 4, 4, 4, 4, 4}},
		{"no column files, materialized values win over inherited ones",
			stitch.Task{DataFile: lin, FirstRowID: ptr(100), SequenceNumber: 4},
			[]int64{500, 101, 502, 103, 104, 105}, []int64{3, 4, 2, 4, 3, 4}},
		{"column file without lineage: every row is as new as the update",
			stitch.Task{DataFile: lin, FirstRowID: ptr(100), SequenceNumber: 7, ColumnFiles: []stitch.ColumnFile{{Location: cfV, FieldIDs: []int{2}}}},
			[]int64{500, 101, 502, 103, 104, 105}, []int64{7, 7, 7, 7, 7, 7}},
		{"entry has column files the task does not list",
			stitch.Task{DataFile: lin, FirstRowID: ptr(100), SequenceNumber: 7, ColumnUpdated: true},
			[]int64{500, 101, 502, 103, 104, 105}, []int64{7, 7, 7, 7, 7, 7}},
		{"column file carrying lineage: carried-over rows keep theirs",
			stitch.Task{DataFile: lin, FirstRowID: ptr(100), SequenceNumber: 7,
				ColumnFiles: []stitch.ColumnFile{{Location: cfLin, FieldIDs: []int{2, stitch.LastUpdatedFieldID}, SequenceNumber: 7}}},
			[]int64{500, 101, 502, 103, 104, 105}, []int64{3, 7, 2, 3, 7, 3}},
		{"lineage from a column file older than the last update is stale",
			stitch.Task{DataFile: lin, FirstRowID: ptr(100), SequenceNumber: 9, ColumnFiles: []stitch.ColumnFile{
				{Location: cfLin, FieldIDs: []int{stitch.LastUpdatedFieldID}, SequenceNumber: 7},
				{Location: cfV, FieldIDs: []int{2}, SequenceNumber: 9}}},
			[]int64{500, 101, 502, 103, 104, 105}, []int64{9, 9, 9, 9, 9, 9}},
	}
	for _, c := range cases {
		c.task.RecordCount = rows
		rec, err := stitch.Read(context.Background(), open, schema, c.task, []int{2, stitch.RowIDFieldID, stitch.LastUpdatedFieldID})
		require.NoError(t, err, c.name)
		require.Equal(t, c.rowIDs, column(t, rec, 1), c.name)
		require.Equal(t, c.updated, column(t, rec, 2), c.name)
		f := rec.Schema().Field(2)
		require.Equal(t, "_last_updated_sequence_number", f.Name)
		id, _ := f.Metadata.GetValue("PARQUET:field_id")
		require.Equal(t, "2147483539", id)
		rec.Release()
	}
}

// TestRowLineageWithDeletionVector: row ids are positions in the base file,
// so deleted rows leave gaps rather than shifting the ids of later rows.
func TestRowLineageWithDeletionVector(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.parquet")
	write(t, base, []int{1, 2}, map[int][]*int64{1: vals(0, 1, 2, 3, 4, 5), 2: vals(10, 11, 12, 13, 14, 15)})
	w := dv.NewDVWriter(icebergio.LocalFS{}, func(int32) *iceberg.PartitionSpec { return iceberg.UnpartitionedSpec })
	require.NoError(t, w.Add(base, []int64{1, 4}, 0, nil))
	files, err := w.Flush(context.Background(), filepath.Join(dir, "dv.puffin"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	task := stitch.Task{DataFile: base, RecordCount: rows, FirstRowID: ptr(1000), SequenceNumber: 2,
		DeletionVector: &stitch.DeletionVector{Location: filepath.Join(dir, "dv.puffin"), Offset: *files[0].ContentOffset(),
			SizeInBytes: *files[0].ContentSizeInBytes(), Cardinality: files[0].Count()}}
	rec, err := stitch.Read(context.Background(), open, schema, task, []int{stitch.RowIDFieldID, 1})
	require.NoError(t, err)
	defer rec.Release()
	require.Equal(t, []int64{1000, 1002, 1003, 1005}, column(t, rec, 0))
	require.Equal(t, []int64{0, 2, 3, 5}, column(t, rec, 1))
}

// TestRowLineageErrors: a lineage column of another type, and a column
// file that lists the lineage column without holding it, are errors.
func TestRowLineageErrors(t *testing.T) {
	dir := t.TempDir()
	base, cf := filepath.Join(dir, "base.parquet"), filepath.Join(dir, "cf.parquet")
	parquettest.Write(t, base, []arrow.Field{{Name: "_row_id", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: md(stitch.RowIDFieldID)}},
		func(b *array.RecordBuilder) {
			for r := 0; r < rows; r++ {
				b.Field(0).(*array.StringBuilder).Append("x")
			}
		})
	write(t, cf, []int{2}, map[int][]*int64{2: vals(1, 2, 3, 4, 5, 6)})
	_, err := stitch.Read(context.Background(), open, schema, stitch.Task{DataFile: base, RecordCount: rows}, []int{stitch.RowIDFieldID})
	require.ErrorContains(t, err, "want int64")
	_, err = stitch.Read(context.Background(), open, schema, stitch.Task{DataFile: base, RecordCount: rows, SequenceNumber: 3,
		ColumnFiles: []stitch.ColumnFile{{Location: cf, FieldIDs: []int{2, stitch.LastUpdatedFieldID}}}}, []int{stitch.LastUpdatedFieldID})
	require.ErrorContains(t, err, "no column with field id 2147483539")
	// A change task lists only the column files of its range: a field none
	// of them carries is refused rather than read stale from the base.
	changed := stitch.Task{DataFile: base, RecordCount: rows, SequenceNumber: 3, ChangedOnly: true,
		ColumnFiles: []stitch.ColumnFile{{Location: cf, FieldIDs: []int{2}}}}
	_, err = stitch.Read(context.Background(), open, schema, changed, []int{2, 1})
	require.ErrorIs(t, err, stitch.ErrNotChanged)
	rec, err := stitch.Read(context.Background(), open, schema, changed, []int{2, stitch.LastUpdatedFieldID})
	require.NoError(t, err)
	require.Equal(t, []int64{3, 3, 3, 3, 3, 3}, column(t, rec, 1))
	rec.Release()
}

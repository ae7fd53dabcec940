package compact

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/foldcheck"
	"github.com/lakehold/catalog/internal/parquettest"
	"github.com/lakehold/catalog/internal/stitch"
)

// nullIDs adds to the fixture a column file for the required field id
// whose rows at the given positions are null.
func nullIDs(t *testing.T, dir string, task *stitch.Task, nulls ...int) {
	loc := filepath.Join(dir, "ids.parquet")
	parquettest.Write(t, loc, []arrow.Field{fieldOf("id", 1, arrow.PrimitiveTypes.Int64, true)}, func(b *array.RecordBuilder) {
		null := map[int]bool{}
		for _, n := range nulls {
			null[n] = true
		}
		for i := 0; i < 10; i++ {
			if null[i] {
				b.Field(0).AppendNull()
			} else {
				b.Field(0).(*array.Int64Builder).Append(int64(50 + i))
			}
		}
	})
	task.ColumnFiles = append(task.ColumnFiles, stitch.ColumnFile{Location: loc, FieldIDs: []int{1}})
}

// TestRewriteRefusesRequiredNulls: a live null in a required field stops
// the fold before anything is written; nulls only in deleted rows do not.
func TestRewriteRefusesRequiredNulls(t *testing.T) {
	dir, task := fixture(t)
	nullIDs(t, dir, &task, 3, 6)
	var buf bytes.Buffer
	_, err := Rewrite(context.Background(), openLocal, &buf, Input{Task: task, Schema: testSchema})
	var re *foldcheck.RequiredNullsError
	require.True(t, errors.As(err, &re), "%v", err)
	require.Equal(t, foldcheck.RequiredNullsError{FieldID: 1, Path: "id", Nulls: 2, Row: 3}, *re)
	require.Zero(t, buf.Len(), "nothing written")

	task.DeletionVector = writeDVBlob(t, filepath.Join(dir, "dv.puffin"), task.DataFile, 3, 6)
	out, err := Rewrite(context.Background(), openLocal, &buf, Input{Task: task, Schema: testSchema})
	require.NoError(t, err, "the null rows are deleted")
	require.Equal(t, int64(8), out.Rows)
}

// TestCheckCatchesNullsWrittenAsZeros: without the check before writing,
// the writer stores a required column's null slots as zeros (the bug the
// checks exist for); the check after writing catches that on its own.
func TestCheckCatchesNullsWrittenAsZeros(t *testing.T) {
	dir, task := fixture(t)
	nullIDs(t, dir, &task, 0)
	hooks.skipRequired = true
	t.Cleanup(func() { hooks.skipRequired = false })
	var buf bytes.Buffer
	_, err := Rewrite(context.Background(), openLocal, &buf, Input{Task: task, Schema: testSchema})
	var me *foldcheck.MismatchError
	require.True(t, errors.As(err, &me), "%v", err)
	require.Equal(t, 1, me.FieldID)
	require.Equal(t, "null count", me.Check)
	require.Zero(t, buf.Len(), "nothing written")
}

// TestCheckCatchesAlteredOutput: a file that does not hold the rows
// written (here one value changed on its way to the writer) is refused.
func TestCheckCatchesAlteredOutput(t *testing.T) {
	_, task := fixture(t)
	hooks.alter = func(rec arrow.RecordBatch) arrow.RecordBatch {
		defer rec.Release()
		b := array.NewFloat64Builder(memory.DefaultAllocator)
		defer b.Release()
		score := rec.Column(1).(*array.Float64)
		for i := 0; i < score.Len(); i++ {
			v := score.Value(i)
			if i == score.Len()-1 {
				v++ // the last row: always in the sample
			}
			b.Append(v)
		}
		col := b.NewArray()
		defer col.Release()
		cols := append([]arrow.Array{}, rec.Columns()...)
		cols[1] = col
		return array.NewRecordBatch(rec.Schema(), cols, rec.NumRows())
	}
	t.Cleanup(func() { hooks.alter = nil })
	var buf bytes.Buffer
	_, err := Rewrite(context.Background(), openLocal, &buf, Input{Task: task, Schema: testSchema})
	var me *foldcheck.MismatchError
	require.True(t, errors.As(err, &me), "%v", err)
	require.Equal(t, foldcheck.MismatchError{FieldID: 2, Field: "score", Check: "value", Row: 9, Detail: "the value's bits differ"}, *me)
	require.Zero(t, buf.Len(), "nothing written")
}

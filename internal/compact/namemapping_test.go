package compact

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/parquetstats"
	"github.com/lakehold/catalog/internal/stitch"
)

// nameMappedFixture writes a 10-row base without any field id (id, score,
// and rank under its alias "rnk") and a score column file with ids.
func nameMappedFixture(t *testing.T) (dir string, task stitch.Task) {
	dir = t.TempDir()
	base, col := filepath.Join(dir, "base.parquet"), filepath.Join(dir, "score.parquet")
	f64 := arrow.PrimitiveTypes.Float64
	writeColumns(t, base, []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "score", Type: f64, Nullable: true},
		{Name: "rnk", Type: f64, Nullable: true}}, 10, 0)
	writeColumns(t, col, []arrow.Field{fieldOf("score", 2, f64, true)}, 10, 1000)
	nm, err := parquetstats.ParseNameMapping(`[{"field-id":1,"names":["id"]},{"field-id":2,"names":["score"]},
		{"field-id":3,"names":["rank","rnk"]},{"field-id":4,"names":["added_later"]}]`)
	require.NoError(t, err)
	return dir, stitch.Task{DataFile: base, RecordCount: 10, NameMapping: nm,
		ColumnFiles: []stitch.ColumnFile{{Location: col, FieldIDs: []int{2}}}}
}

// TestRewriteNameMappedBase: a base without field ids keeps every column
// through the table's name mapping, and the folded file carries the ids.
func TestRewriteNameMappedBase(t *testing.T) {
	dir, task := nameMappedFixture(t)
	task.DeletionVector = writeDVBlob(t, filepath.Join(dir, "dv.puffin"), task.DataFile, 0, 9)
	var buf bytes.Buffer
	out, err := Rewrite(context.Background(), openLocal, &buf, Input{Task: task, FirstRowID: 50, Schema: testSchema})
	require.NoError(t, err)
	require.Equal(t, int64(8), out.Rows)
	cols, required := readBack(t, buf.Bytes())
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8}, cols[1].(*array.Int64).Int64Values())
	require.Equal(t, []float64{1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008}, cols[2].(*array.Float64).Float64Values())
	require.Equal(t, []float64{1, 2, 3, 4, 5, 6, 7, 8}, cols[3].(*array.Float64).Float64Values())
	require.Equal(t, []int64{51, 52, 53, 54, 55, 56, 57, 58}, cols[2147483540].(*array.Int64).Int64Values())
	require.NotContains(t, cols, 4)
	require.True(t, required[1])
}

// TestRewriteUnidentifiedBase: without the mapping (or with one that
// leaves a column out) the fold is refused, never written without the
// base's columns.
func TestRewriteUnidentifiedBase(t *testing.T) {
	_, task := nameMappedFixture(t)
	task.NameMapping = nil
	_, err := Rewrite(context.Background(), openLocal, &bytes.Buffer{}, Input{Task: task, FirstRowID: 50, Schema: testSchema})
	require.True(t, errors.Is(err, ErrUnidentifiedColumn), "%v", err)

	_, task = nameMappedFixture(t)
	nm, err := parquetstats.ParseNameMapping(`[{"field-id":1,"names":["id"]},{"field-id":2,"names":["score"]}]`)
	require.NoError(t, err)
	task.NameMapping = nm
	_, err = Rewrite(context.Background(), openLocal, &bytes.Buffer{}, Input{Task: task, FirstRowID: 50, Schema: testSchema})
	require.ErrorContains(t, err, `column "rnk" has no field id`)
}

// TestColumnBytesNameMapped: a base without field ids counts its bytes
// under the mapped field ids, so the columns its column files replace
// count as retired.
func TestColumnBytesNameMapped(t *testing.T) {
	_, task := nameMappedFixture(t)
	bytesOf := func(nm iceberg.NameMapping) map[int]int64 {
		f, err := os.Open(task.DataFile)
		require.NoError(t, err)
		defer f.Close()
		out, err := ColumnBytes(f, nm)
		require.NoError(t, err)
		return out
	}
	got := bytesOf(task.NameMapping)
	require.Len(t, got, 3)
	for _, id := range []int{1, 2, 3} {
		require.Positive(t, got[id], "field %d", id)
	}
	require.Equal(t, map[int]int64{-1: got[1] + got[2] + got[3]}, bytesOf(nil))
	require.Equal(t, got[2], Retired(got, []FileColumns{{Live: []int{2}}}, 10, 0))
}

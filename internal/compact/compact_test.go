package compact

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/parquettest"
	"github.com/lakehold/catalog/internal/stitch"
)

var testSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "score", Type: iceberg.PrimitiveTypes.Float64},
	iceberg.NestedField{ID: 3, Name: "rank", Type: iceberg.PrimitiveTypes.Float64},
	iceberg.NestedField{ID: 4, Name: "added_later", Type: iceberg.PrimitiveTypes.Float64})

func fieldOf(name string, id int, typ arrow.DataType, nullable bool) arrow.Field {
	return arrow.Field{Name: name, Type: typ, Nullable: nullable, Metadata: fieldMeta(id)}
}

// writeColumns writes n rows: long fields hold i, double fields base+i.
func writeColumns(t testing.TB, path string, fields []arrow.Field, n int, base float64) {
	parquettest.Write(t, path, fields, func(b *array.RecordBuilder) {
		for i := 0; i < n; i++ {
			for j, f := range fields {
				if f.Type.ID() == arrow.INT64 {
					b.Field(j).(*array.Int64Builder).Append(int64(i))
				} else {
					b.Field(j).(*array.Float64Builder).Append(base + float64(i))
				}
			}
		}
	})
}

func writeDVBlob(t testing.TB, path, dataFile string, positions ...int64) *stitch.DeletionVector {
	w := dv.NewDVWriter(icebergio.LocalFS{}, func(int32) *iceberg.PartitionSpec { return iceberg.UnpartitionedSpec })
	require.NoError(t, w.Add(dataFile, positions, 0, nil))
	files, err := w.Flush(context.Background(), path)
	require.NoError(t, err)
	return &stitch.DeletionVector{Location: path, Offset: *files[0].ContentOffset(), SizeInBytes: *files[0].ContentSizeInBytes(), Cardinality: files[0].Count()}
}

func openLocal(_ context.Context, loc string) (stitch.File, error) { return os.Open(loc) }

// fixture writes a 10-row base (id, score, rank) and a score column file.
func fixture(t *testing.T) (dir string, task stitch.Task) {
	dir = t.TempDir()
	base, col := filepath.Join(dir, "base.parquet"), filepath.Join(dir, "score.parquet")
	writeColumns(t, base, []arrow.Field{fieldOf("id", 1, arrow.PrimitiveTypes.Int64, false),
		fieldOf("score", 2, arrow.PrimitiveTypes.Float64, true), fieldOf("rank", 3, arrow.PrimitiveTypes.Float64, true)}, 10, 0)
	writeColumns(t, col, []arrow.Field{fieldOf("score", 2, arrow.PrimitiveTypes.Float64, true)}, 10, 1000)
	return dir, stitch.Task{DataFile: base, RecordCount: 10, ColumnFiles: []stitch.ColumnFile{{Location: col, FieldIDs: []int{2}}}}
}

// readBack reads every column of a Parquet file by field id.
func readBack(t *testing.T, data []byte) (map[int]arrow.Array, map[int]bool) {
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	require.NoError(t, err)
	required := map[int]bool{}
	for c := 0; c < pf.MetaData().Schema.NumColumns(); c++ {
		n := pf.MetaData().Schema.Column(c)
		required[int(n.SchemaNode().FieldID())] = n.MaxDefinitionLevel() == 0
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	tbl, err := fr.ReadTable(context.Background())
	require.NoError(t, err)
	t.Cleanup(tbl.Release)
	out := map[int]arrow.Array{}
	for c := 0; c < int(tbl.NumCols()); c++ {
		v, _ := tbl.Schema().Field(c).Metadata.GetValue("PARQUET:field_id")
		id, _ := strconv.Atoi(v)
		a, err := array.Concatenate(tbl.Column(c).Data().Chunks(), memory.DefaultAllocator)
		require.NoError(t, err)
		out[id] = a
	}
	return out, required
}

// TestRewriteKeepsRowIDs: deleted rows are dropped, the survivors keep
// first_row_id+position as a stored _row_id, columns come from the newest
// file, a field no file has is left out and required fields stay REQUIRED.
func TestRewriteKeepsRowIDs(t *testing.T) {
	dir, task := fixture(t)
	task.DeletionVector = writeDVBlob(t, filepath.Join(dir, "dv.puffin"), task.DataFile, 1, 4)
	var buf bytes.Buffer
	out, err := Rewrite(context.Background(), openLocal, &buf, Input{Task: task, FirstRowID: 100, Schema: testSchema})
	require.NoError(t, err)
	require.Equal(t, Output{Rows: 8, Dropped: 2, Bytes: int64(buf.Len())}, out)
	cols, required := readBack(t, buf.Bytes())
	require.Equal(t, []int64{100, 102, 103, 105, 106, 107, 108, 109}, cols[2147483540].(*array.Int64).Int64Values())
	require.Equal(t, []int64{0, 2, 3, 5, 6, 7, 8, 9}, cols[1].(*array.Int64).Int64Values())
	require.Equal(t, []float64{1000, 1002, 1003, 1005, 1006, 1007, 1008, 1009}, cols[2].(*array.Float64).Float64Values())
	require.Equal(t, []float64{0, 2, 3, 5, 6, 7, 8, 9}, cols[3].(*array.Float64).Float64Values())
	require.NotContains(t, cols, 4, "a field no file carries is not written")
	require.True(t, required[1])
	require.False(t, required[2])
	require.False(t, required[2147483540])
}

// TestRewriteTwice: folding an already folded file keeps its stored row
// ids rather than renumbering from first_row_id.
func TestRewriteTwice(t *testing.T) {
	dir, task := fixture(t)
	task.DeletionVector = writeDVBlob(t, filepath.Join(dir, "dv.puffin"), task.DataFile, 0)
	var first bytes.Buffer
	_, err := Rewrite(context.Background(), openLocal, &first, Input{Task: task, FirstRowID: 100, Schema: testSchema})
	require.NoError(t, err)
	again := filepath.Join(dir, "folded.parquet")
	require.NoError(t, os.WriteFile(again, first.Bytes(), 0o644))
	dv2 := writeDVBlob(t, filepath.Join(dir, "dv2.puffin"), again, 0, 8)
	var second bytes.Buffer
	out, err := Rewrite(context.Background(), openLocal, &second, Input{Task: stitch.Task{DataFile: again, RecordCount: 9, DeletionVector: dv2},
		FirstRowID: 100, Schema: testSchema})
	require.NoError(t, err)
	require.Equal(t, int64(7), out.Rows)
	cols, _ := readBack(t, second.Bytes())
	require.Equal(t, []int64{102, 103, 104, 105, 106, 107, 108}, cols[2147483540].(*array.Int64).Int64Values())
}

func TestRewriteErrors(t *testing.T) {
	t.Run("misaligned-column-file", func(t *testing.T) {
		dir, task := fixture(t)
		short := filepath.Join(dir, "short.parquet")
		writeColumns(t, short, []arrow.Field{fieldOf("rank", 3, arrow.PrimitiveTypes.Float64, true)}, 9, 0)
		task.ColumnFiles = append(task.ColumnFiles, stitch.ColumnFile{Location: short, FieldIDs: []int{3}})
		_, err := Rewrite(context.Background(), openLocal, &bytes.Buffer{}, Input{Task: task, Schema: testSchema})
		require.True(t, errors.Is(err, stitch.ErrMisaligned), "%v", err)
	})
	t.Run("dv-past-the-end", func(t *testing.T) {
		dir, task := fixture(t)
		task.DeletionVector = writeDVBlob(t, filepath.Join(dir, "dv.puffin"), task.DataFile, 1, 50)
		_, err := Rewrite(context.Background(), openLocal, &bytes.Buffer{}, Input{Task: task, Schema: testSchema})
		require.True(t, errors.Is(err, ErrRowCount), "%v", err)
	})
	t.Run("missing-base", func(t *testing.T) {
		_, task := fixture(t)
		task.DataFile += ".gone"
		_, err := Rewrite(context.Background(), openLocal, &bytes.Buffer{}, Input{Task: task, Schema: testSchema})
		require.Error(t, err)
	})
}

// BenchmarkCompact folds a 200k-row base of four double columns with two
// column files and a 1% deletion vector; MB/s counts the bytes read
// (base plus column files).
func BenchmarkCompact(b *testing.B) {
	const rows = 200_000
	dir := b.TempDir()
	f64 := arrow.PrimitiveTypes.Float64
	base := filepath.Join(dir, "base.parquet")
	writeColumns(b, base, []arrow.Field{fieldOf("id", 1, arrow.PrimitiveTypes.Int64, false), fieldOf("score", 2, f64, true),
		fieldOf("rank", 3, f64, true), fieldOf("added_later", 4, f64, true)}, rows, 0)
	task := stitch.Task{DataFile: base, RecordCount: rows}
	var in int64
	for i, id := range []int{2, 3} {
		loc := filepath.Join(dir, "c"+strconv.Itoa(i)+".parquet")
		writeColumns(b, loc, []arrow.Field{fieldOf("c", id, f64, true)}, rows, 7)
		task.ColumnFiles = append(task.ColumnFiles, stitch.ColumnFile{Location: loc, FieldIDs: []int{id}})
		st, _ := os.Stat(loc)
		in += st.Size()
	}
	var del []int64
	for p := int64(0); p < rows; p += 100 {
		del = append(del, p)
	}
	task.DeletionVector = writeDVBlob(b, filepath.Join(dir, "dv.puffin"), base, del...)
	st, _ := os.Stat(base)
	in += st.Size()
	b.SetBytes(in)
	b.ResetTimer()
	var out Output
	for i := 0; i < b.N; i++ {
		var err error
		var buf bytes.Buffer
		if out, err = Rewrite(context.Background(), openLocal, &buf, Input{Task: task, FirstRowID: 0, Schema: testSchema}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(out.Bytes), "out-bytes")
	b.ReportMetric(float64(in), "in-bytes")
}

package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/stitch"
)

const wideCols = 100

func wideSchema() (string, *iceberg.Schema) {
	fields := []iceberg.NestedField{{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true}}
	for id := 2; id <= wideCols; id++ {
		fields = append(fields, iceberg.NestedField{ID: id, Name: fmt.Sprintf("c%d", id), Type: iceberg.PrimitiveTypes.Float64})
	}
	sc := iceberg.NewSchema(0, fields...)
	b, _ := json.Marshal(sc)
	return string(b), sc
}

// writeWide writes columns ids (id 1 = long row id, others doubles) with
// value(id, row).
func writeWide(t *testing.T, path string, rows int, ids []int, value func(id, row int) float64) int64 {
	fields := make([]arrow.Field, len(ids))
	for i, id := range ids {
		typ := arrow.DataType(arrow.PrimitiveTypes.Float64)
		if id == 1 {
			typ = arrow.PrimitiveTypes.Int64
		}
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", id), Type: typ, Nullable: id != 1, Metadata: fieldMD(id)}
	}
	return writeParquet(t, path, fields, func(b *array.RecordBuilder) {
		for r := 0; r < rows; r++ {
			for i, id := range ids {
				if id == 1 {
					b.Field(i).(*array.Int64Builder).Append(int64(r))
				} else {
					b.Field(i).(*array.Float64Builder).Append(value(id, r))
				}
			}
		}
	})
}

// TestColumnFilesEndToEnd: a 100-column v4 table, base files written with
// arrow-go, several column-file commits, read back through plan + stitch.
func TestColumnFilesEndToEnd(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			schemaJSON, sc := wideSchema()
			r := b.createTable(t, "ns", "wide", map[string]any{"schema": rawJSON(schemaJSON), "properties": map[string]string{"format-version": "4"}})
			require.Equal(t, 200, r.status, "%s", r.body)
			loc, _, _ := v4Meta(t, r)
			dir := strings.TrimPrefix(loc, "file://")
			path := "/v1/wh/namespaces/ns/tables/wide"

			const rows = 50
			all := make([]int, wideCols)
			for i := range all {
				all[i] = i + 1
			}
			expected := map[string]map[int]func(row int) float64{}
			var adds []any
			for k, name := range []string{"a", "b", "c"} {
				base := float64(k) * 1e6
				size := writeWide(t, filepath.Join(dir, "data", name+".parquet"), rows, all, func(id, row int) float64 { return base + float64(id*1000+row) })
				adds = append(adds, map[string]any{"location": "data/" + name + ".parquet", "file-format": "parquet", "record-count": rows, "file-size-in-bytes": size, "spec-id": 0})
				expected[loc+"/data/"+name+".parquet"] = map[int]func(int) float64{}
				for _, id := range all[1:] {
					id := id
					expected[loc+"/data/"+name+".parquet"][id] = func(row int) float64 { return base + float64(id*1000+row) }
				}
			}
			require.Equal(t, 200, b.do(t, "POST", path+"/files", map[string]any{"add-data-files": adds}).status)

			update := func(baseName, cfName string, ids []int, tag float64) {
				t.Helper()
				size := writeWide(t, filepath.Join(dir, "data", cfName), rows, ids, func(id, row int) float64 { return -tag - float64(id*1000+row) })
				r := b.do(t, "POST", path+"/column-files", map[string]any{"column-files": []any{map[string]any{
					"data-file": "data/" + baseName, "location": "data/" + cfName, "file-format": "parquet",
					"field-ids": ids, "file-size-in-bytes": size, "record-count": rows}}})
				require.Equal(t, 200, r.status, "%s", r.body)
				for _, id := range ids {
					id := id
					expected[loc+"/data/"+baseName][id] = func(row int) float64 { return -tag - float64(id*1000+row) }
				}
			}
			update("a.parquet", "cf1.parquet", []int{5, 6}, 1)
			update("a.parquet", "cf2.parquet", []int{5}, 2) // the same field twice
			update("b.parquet", "cf3.parquet", []int{7, 8}, 3)
			update("b.parquet", "cf4.parquet", []int{8}, 4) // a file covering two fields, then one of them again

			// A deletion vector on c (written with iceberg-go's DV writer).
			dvLoc := loc + "/data/c-dv.puffin"
			w := dv.NewDVWriter(icebergio.LocalFS{}, func(int32) *iceberg.PartitionSpec { return iceberg.UnpartitionedSpec })
			require.NoError(t, w.Add(loc+"/data/c.parquet", []int64{0, 10, 49}, 0, nil))
			dvFiles, err := w.Flush(context.Background(), dvLoc)
			require.NoError(t, err)
			require.Len(t, dvFiles, 1)
			r = b.do(t, "POST", path+"/files", map[string]any{"set-deletion-vectors": []any{map[string]any{
				"data-file": "data/c.parquet", "location": dvLoc, "offset": *dvFiles[0].ContentOffset(),
				"size-in-bytes": *dvFiles[0].ContentSizeInBytes(), "cardinality": dvFiles[0].Count()}}})
			require.Equal(t, 200, r.status, "%s", r.body)
			deleted := map[int]bool{0: true, 10: true, 49: true}

			noHeader := b.do(t, "POST", path+"/plan", map[string]any{}, "X-Iceberg-Column-Files", "")
			require.Equal(t, 400, noHeader.status)
			require.Equal(t, "column-files-unsupported-by-client", noHeader.json(t)["error"].(map[string]any)["reason"])

			plan := b.do(t, "POST", path+"/plan", map[string]any{}, "X-Iceberg-Column-Files", "true")
			require.Equal(t, 200, plan.status, "%s", plan.body)
			var res struct {
				Status      string `json:"status"`
				DeleteFiles []struct {
					FilePath string `json:"file-path"`
					Offset   int64  `json:"content-offset"`
					Size     int64  `json:"content-size-in-bytes"`
					Count    int64  `json:"record-count"`
					Ref      string `json:"referenced-data-file"`
				} `json:"delete-files"`
				Tasks []struct {
					DeleteRefs []int `json:"delete-file-references"`
					DataFile   struct {
						FilePath    string `json:"file-path"`
						RecordCount int64  `json:"record-count"`
						ColumnFiles []struct {
							Location string `json:"location"`
							FieldIDs []int  `json:"field-ids"`
						} `json:"column-files"`
					} `json:"data-file"`
				} `json:"file-scan-tasks"`
			}
			require.NoError(t, json.Unmarshal(plan.body, &res))
			require.Equal(t, "completed", res.Status)
			require.Len(t, res.Tasks, 3)
			require.Len(t, *strictPlan(t, plan.body).DeleteFiles, 1, "the deletion vector, typed")

			open := func(_ context.Context, loc string) (stitch.File, error) {
				return os.Open(strings.TrimPrefix(loc, "file://"))
			}
			project := []int{1, 4, 5, 6, 7, 8, 9, 100}
			for _, task := range res.Tasks {
				st := stitch.Task{DataFile: task.DataFile.FilePath, RecordCount: task.DataFile.RecordCount}
				for _, cf := range task.DataFile.ColumnFiles {
					st.ColumnFiles = append(st.ColumnFiles, stitch.ColumnFile{Location: cf.Location, FieldIDs: cf.FieldIDs})
				}
				isC := strings.HasSuffix(task.DataFile.FilePath, "/c.parquet")
				if isC {
					require.Len(t, task.DeleteRefs, 1)
					d := res.DeleteFiles[task.DeleteRefs[0]]
					require.Equal(t, task.DataFile.FilePath, d.Ref)
					st.DeletionVector = &stitch.DeletionVector{Location: d.FilePath, Offset: d.Offset, SizeInBytes: d.Size, Cardinality: d.Count}
				}
				rec, err := stitch.Read(context.Background(), open, sc, st, project)
				require.NoError(t, err)
				want := expected[task.DataFile.FilePath]
				require.NotNil(t, want, task.DataFile.FilePath)
				var liveRows []int
				for row := 0; row < rows; row++ {
					if !isC || !deleted[row] {
						liveRows = append(liveRows, row)
					}
				}
				require.EqualValues(t, len(liveRows), rec.NumRows(), "deleted rows are dropped")
				for i, id := range project {
					col := rec.Column(i)
					for out, row := range liveRows {
						if id == 1 {
							require.Equal(t, int64(row), col.(*array.Int64).Value(out))
							continue
						}
						require.Equal(t, want[id](row), col.(*array.Float64).Value(out), "file %s field %d row %d", task.DataFile.FilePath, id, row)
					}
				}
				rec.Release()
			}
		})
	}
}

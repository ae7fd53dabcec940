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
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/stitch"
)

const nestedSchemaJSON = `{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"id","type":"long","required":true},
 {"id":2,"name":"score","type":"double","required":false},
 {"id":3,"name":"tags","type":{"type":"list","element-id":4,"element":"string","element-required":true},"required":false},
 {"id":5,"name":"props","type":{"type":"map","key-id":6,"key":"string","value-id":7,"value":"int","value-required":false},"required":false},
 {"id":8,"name":"pt","type":{"type":"struct","fields":[{"id":9,"name":"x","type":"double","required":true}]},"required":false}]}`

// nestedFile describes one data file of the nested table; each knob
// breaks one rule.
type nestedFile struct {
	idNull, xNull          bool // a null in required id / pt.x
	scoreStrings           bool // strings in the double
	tagsInts, propsStrings bool // wrong list element / map value types
}

func (nf nestedFile) fields() []arrow.Field {
	score := arrow.Field{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: fieldMD(2)}
	if nf.scoreStrings {
		score.Type = arrow.BinaryTypes.String
	}
	var elem arrow.DataType = arrow.BinaryTypes.String
	if nf.tagsInts {
		elem = arrow.PrimitiveTypes.Int32
	}
	var val arrow.DataType = arrow.PrimitiveTypes.Int32
	if nf.propsStrings {
		val = arrow.BinaryTypes.String
	}
	tags := arrow.ListOfField(arrow.Field{Name: "element", Type: elem, Metadata: fieldMD(4)})
	props := arrow.MapOfWithMetadata(arrow.BinaryTypes.String, fieldMD(6), val, fieldMD(7))
	pt := arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: nf.xNull, Metadata: fieldMD(9)})
	return []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: nf.idNull, Metadata: fieldMD(1)},
		score,
		{Name: "tags", Type: tags, Nullable: true, Metadata: fieldMD(3)},
		{Name: "props", Type: props, Nullable: true, Metadata: fieldMD(5)},
		{Name: "pt", Type: pt, Nullable: true, Metadata: fieldMD(8)},
	}
}

func (nf nestedFile) write(t *testing.T, path string, n int) int64 {
	return writeParquet(t, path, nf.fields(), func(b *array.RecordBuilder) {
		for i := 0; i < n; i++ {
			if nf.idNull && i == n-1 {
				b.Field(0).AppendNull()
			} else {
				b.Field(0).(*array.Int64Builder).Append(int64(i))
			}
			if nf.scoreStrings {
				b.Field(1).(*array.StringBuilder).Append("x")
			} else {
				b.Field(1).(*array.Float64Builder).Append(float64(i))
			}
			lb := b.Field(2).(*array.ListBuilder)
			lb.Append(true)
			if nf.tagsInts {
				lb.ValueBuilder().(*array.Int32Builder).Append(1)
			} else {
				lb.ValueBuilder().(*array.StringBuilder).Append("t")
			}
			mb := b.Field(3).(*array.MapBuilder)
			mb.Append(true)
			mb.KeyBuilder().(*array.StringBuilder).Append("k")
			if nf.propsStrings {
				mb.ItemBuilder().(*array.StringBuilder).Append("v")
			} else {
				mb.ItemBuilder().(*array.Int32Builder).Append(1)
			}
			sb := b.Field(4).(*array.StructBuilder)
			sb.Append(true)
			if nf.xNull && i == 0 {
				sb.FieldBuilder(0).AppendNull()
			} else {
				sb.FieldBuilder(0).(*array.Float64Builder).Append(1.5)
			}
		}
	})
}

func addFile(name string, n int, size int64) map[string]any {
	return map[string]any{"location": "data/" + name, "file-format": "parquet", "record-count": n, "file-size-in-bytes": size, "spec-id": 0}
}

func requireReason(t *testing.T, r response, reason string) {
	t.Helper()
	require.Equal(t, 400, r.status, "%s", r.body)
	e := r.json(t)["error"].(map[string]any)
	require.Equal(t, reason, e["reason"], "%s", r.body)
	require.NotContains(t, string(r.body), "/tmp", "no server path in the answer")
}

func TestFilesSchemaChecks(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			r := b.createTable(t, "ns", "nested", map[string]any{"schema": rawJSON(nestedSchemaJSON), "properties": map[string]string{"format-version": "4"}})
			require.Equal(t, 200, r.status, "%s", r.body)
			loc, _, _ := v4Meta(t, r)
			dir := strings.TrimPrefix(loc, "file://")
			path := "/v1/wh/namespaces/ns/tables/nested"
			files := path + "/files"

			good := nestedFile{}.write(t, filepath.Join(dir, "data/good.parquet"), 3)
			r = b.do(t, "POST", files, map[string]any{"add-data-files": []any{addFile("good.parquet", 3, good)}})
			require.Equal(t, 200, r.status, "a file pqarrow writes with field ids fits: %s", r.body)
			_, before, _ := v4Meta(t, b.do(t, "GET", path, nil))

			for _, c := range []struct {
				name   string
				file   nestedFile
				reason string
			}{
				{"null in a required field", nestedFile{idNull: true}, "required-field-nulls"},
				{"null in a required nested field", nestedFile{xNull: true}, "required-field-nulls"},
				{"strings in a double", nestedFile{scoreStrings: true}, "file-type-mismatch"},
				{"list element type", nestedFile{tagsInts: true}, "file-type-mismatch"},
				{"map value type", nestedFile{propsStrings: true}, "file-type-mismatch"},
			} {
				t.Run(c.name, func(t *testing.T) {
					name := strings.ReplaceAll(c.name, " ", "-") + ".parquet"
					size := c.file.write(t, filepath.Join(dir, "data", name), 3)
					r := b.do(t, "POST", files, map[string]any{"add-data-files": []any{addFile(name, 3, size)}})
					requireReason(t, r, c.reason)
					d := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
					require.Equal(t, "data/"+name, d["file"])
					require.NotNil(t, d["field-id"])
				})
			}

			// The same path twice in one request; a live file again.
			other := nestedFile{}.write(t, filepath.Join(dir, "data/other.parquet"), 2)
			requireReason(t, b.do(t, "POST", files, map[string]any{"add-data-files": []any{addFile("other.parquet", 2, other), addFile("other.parquet", 2, other)}}), "duplicate-file")
			requireReason(t, b.do(t, "POST", files, map[string]any{"add-data-files": []any{addFile("other.parquet", 2, other), addFile("good.parquet", 3, good)}}), "duplicate-file")
			_, after, _ := v4Meta(t, b.do(t, "GET", path, nil))
			require.Equal(t, before[len(before)-1].SnapshotID, after[len(after)-1].SnapshotID, "nothing committed")

			plan := b.do(t, "POST", path+"/plan", map[string]any{})
			require.Equal(t, 200, plan.status, "%s", plan.body)
			require.Equal(t, 1, strings.Count(string(plan.body), "data/good.parquet"), "the plan lists the file once: %s", plan.body)

			// Removed and added back in one commit is not a duplicate; a
			// removed file added again later is not live, so not one either.
			r = b.do(t, "POST", files, map[string]any{"remove-files": []string{"data/good.parquet"}, "add-data-files": []any{addFile("good.parquet", 3, good)}})
			require.Equal(t, 200, r.status, "%s", r.body)
			require.Equal(t, 200, b.do(t, "POST", files, map[string]any{"remove-files": []string{"data/good.parquet"}}).status)
			require.Equal(t, 200, b.do(t, "POST", files, map[string]any{"add-data-files": []any{addFile("good.parquet", 3, good)}}).status)

			require.Equal(t, 200, b.do(t, "POST", files, map[string]any{"add-data-files": []any{addFile("other.parquet", 2, other)}}).status)

			// Column files: nulls in a required field (top-level, nested).
			colFile := func(name string, ids []int, size int64) map[string]any {
				return map[string]any{"data-file": "data/good.parquet", "location": "data/" + name, "file-format": "parquet",
					"field-ids": ids, "file-size-in-bytes": size, "record-count": 3}
			}
			idNulls := writeParquet(t, filepath.Join(dir, "data/id-nulls.parquet"),
				[]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: fieldMD(1)}},
				func(b *array.RecordBuilder) { b.Field(0).AppendNulls(3) })
			requireReason(t, b.do(t, "POST", path+"/column-files", map[string]any{"column-files": []any{colFile("id-nulls.parquet", []int{1}, idNulls)}}), "required-field-nulls")
			xNulls := writeParquet(t, filepath.Join(dir, "data/x-nulls.parquet"),
				[]arrow.Field{{Name: "pt", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: fieldMD(9)}), Nullable: true, Metadata: fieldMD(8)}},
				func(b *array.RecordBuilder) {
					sb := b.Field(0).(*array.StructBuilder)
					for i := 0; i < 3; i++ {
						sb.Append(true)
						sb.FieldBuilder(0).AppendNull()
					}
				})
			requireReason(t, b.do(t, "POST", path+"/column-files", map[string]any{"column-files": []any{colFile("x-nulls.parquet", []int{8}, xNulls)}}), "required-field-nulls")
			okID := writeParquet(t, filepath.Join(dir, "data/id-ok.parquet"),
				[]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: fieldMD(1)}},
				func(b *array.RecordBuilder) { b.Field(0).(*array.Int64Builder).AppendValues([]int64{7, 8, 9}, nil) })
			requireReason(t, b.do(t, "POST", path+"/column-files", map[string]any{"column-files": []any{colFile("id-ok.parquet", []int{1}, okID), colFile("id-ok.parquet", []int{1}, okID)}}), "duplicate-file")
			requireReason(t, b.do(t, "POST", path+"/column-files", map[string]any{"column-files": []any{colFile("other.parquet", []int{2}, other)}}), "duplicate-file")
			r = b.do(t, "POST", path+"/column-files", map[string]any{"column-files": []any{colFile("id-ok.parquet", []int{1}, okID)}})
			require.Equal(t, 200, r.status, "%s", r.body)
			requireReason(t, b.do(t, "POST", path+"/column-files", map[string]any{"column-files": []any{colFile("id-ok.parquet", []int{1}, okID)}}), "duplicate-file")
		})
	}
}

// TestFilesSchemaEveryType: a file pqarrow writes with field ids for a
// column of every primitive type the table has is accepted, in each
// Arrow type a writer may hold it in.
func TestFilesSchemaEveryType(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			types := []struct {
				iceberg string
				arrow   arrow.DataType
				fill    func(array.Builder)
			}{
				{"boolean", arrow.FixedWidthTypes.Boolean, func(x array.Builder) { x.(*array.BooleanBuilder).Append(true) }},
				{"int", arrow.PrimitiveTypes.Int32, func(x array.Builder) { x.(*array.Int32Builder).Append(1) }},
				{"long", arrow.PrimitiveTypes.Int64, func(x array.Builder) { x.(*array.Int64Builder).Append(1) }},
				{"float", arrow.PrimitiveTypes.Float32, func(x array.Builder) { x.(*array.Float32Builder).Append(1) }},
				{"double", arrow.PrimitiveTypes.Float64, func(x array.Builder) { x.(*array.Float64Builder).Append(1) }},
				{"date", arrow.FixedWidthTypes.Date32, func(x array.Builder) { x.(*array.Date32Builder).Append(1) }},
				{"time", arrow.FixedWidthTypes.Time64us, func(x array.Builder) { x.(*array.Time64Builder).Append(1) }},
				{"timestamp", &arrow.TimestampType{Unit: arrow.Microsecond}, func(x array.Builder) { x.(*array.TimestampBuilder).Append(1) }},
				{"timestamptz", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, func(x array.Builder) { x.(*array.TimestampBuilder).Append(1) }},
				{"string", arrow.BinaryTypes.String, func(x array.Builder) { x.(*array.StringBuilder).Append("s") }},
				{"binary", arrow.BinaryTypes.Binary, func(x array.Builder) { x.(*array.BinaryBuilder).Append([]byte{1}) }},
				{"fixed[4]", &arrow.FixedSizeBinaryType{ByteWidth: 4}, func(x array.Builder) { x.(*array.FixedSizeBinaryBuilder).Append([]byte{1, 2, 3, 4}) }},
				{"uuid", &arrow.FixedSizeBinaryType{ByteWidth: 16}, func(x array.Builder) { x.(*array.FixedSizeBinaryBuilder).Append(make([]byte, 16)) }},
				{"decimal(10, 2)", &arrow.Decimal128Type{Precision: 10, Scale: 2}, func(x array.Builder) { x.(*array.Decimal128Builder).Append(decimal128.FromI64(1234)) }},
				// As pyarrow writes them too: large and dictionary-encoded
				// strings, large binary, small and unsigned small ints.
				{"string", arrow.BinaryTypes.LargeString, func(x array.Builder) { x.(*array.LargeStringBuilder).Append("s") }},
				{"string", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, func(x array.Builder) {
					require.NoError(t, x.(*array.BinaryDictionaryBuilder).AppendString("s"))
				}},
				{"binary", arrow.BinaryTypes.LargeBinary, func(x array.Builder) { x.(*array.BinaryBuilder).Append([]byte{1}) }},
				{"int", arrow.PrimitiveTypes.Int8, func(x array.Builder) { x.(*array.Int8Builder).Append(1) }},
				{"int", arrow.PrimitiveTypes.Uint16, func(x array.Builder) { x.(*array.Uint16Builder).Append(1) }},
			}
			var schemaFields []string
			var fields []arrow.Field
			for i, ty := range types {
				schemaFields = append(schemaFields, fmt.Sprintf(`{"id":%d,"name":"c%d","type":%q,"required":true}`, i+1, i, ty.iceberg))
				fields = append(fields, arrow.Field{Name: fmt.Sprintf("c%d", i), Type: ty.arrow, Metadata: fieldMD(i + 1)})
			}
			r := b.createTable(t, "ns", "every", map[string]any{"schema": rawJSON(`{"type":"struct","schema-id":0,"fields":[` + strings.Join(schemaFields, ",") + `]}`),
				"properties": map[string]string{"format-version": "4"}})
			require.Equal(t, 200, r.status, "%s", r.body)
			loc, _, _ := v4Meta(t, r)
			size := writeParquet(t, filepath.Join(strings.TrimPrefix(loc, "file://"), "data/every.parquet"), fields, func(b *array.RecordBuilder) {
				for i, ty := range types {
					ty.fill(b.Field(i))
				}
			})
			r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables/every/files", map[string]any{"add-data-files": []any{addFile("every.parquet", 1, size)}})
			require.Equal(t, 200, r.status, "%s", r.body)
		})
	}
}

// TestFilesSchemaNullsAtDeletedRows: a column file for a required field
// may be null at rows the base's deletion vector deletes (a writer fills
// deleted rows with nulls), and only there: nulls at a live row, or more
// nulls than the vector deletes, are refused and commit nothing. The
// accepted file reads back through plan + stitch with no null at a live row.
func TestFilesSchemaNullsAtDeletedRows(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			const rows = 5
			vt := newV4Table(t, b, "dvnulls", map[string]int{"a.parquet": rows})
			d := writeDV(t, vt, "data/a-dv.puffin", vt.loc+"/data/a.parquet", 1, 3)
			r := b.do(t, "POST", vt.path+"/files", map[string]any{"set-deletion-vectors": []any{d.request("data/a.parquet")}})
			require.Equal(t, 200, r.status, "%s", r.body)

			// idsNullAt writes a column file for required id (1) that is
			// null at the given rows and 100+row elsewhere.
			idsNullAt := func(name string, nulls ...int) map[string]any {
				null := map[int]bool{}
				for _, p := range nulls {
					null[p] = true
				}
				size := writeParquet(t, filepath.Join(vt.dir, "data", name),
					[]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: fieldMD(1)}},
					func(b *array.RecordBuilder) {
						for i := 0; i < rows; i++ {
							if null[i] {
								b.Field(0).AppendNull()
							} else {
								b.Field(0).(*array.Int64Builder).Append(int64(100 + i))
							}
						}
					})
				return vt.columnFile("a.parquet", name, rows, []int{1}, size)
			}
			_, before, _ := v4Meta(t, b.do(t, "GET", vt.path, nil))
			for _, c := range []struct {
				name  string
				nulls []int
			}{
				{"null at a live row", []int{1, 2}},
				{"more nulls than deleted rows", []int{1, 2, 3}},
				{"every row null", []int{0, 1, 2, 3, 4}},
			} {
				t.Run(c.name, func(t *testing.T) {
					r := vt.commit(t, idsNullAt(strings.ReplaceAll(c.name, " ", "-")+".parquet", c.nulls...))
					requireReason(t, r, "required-field-nulls")
					require.NotContains(t, string(r.body), vt.dir)
				})
			}
			r = vt.commit(t, idsNullAt("live-null.parquet", 1, 2))
			require.EqualValues(t, 2, r.json(t)["error"].(map[string]any)["details"].(map[string]any)["position"], "the first null at a live row: %s", r.body)
			_, after, _ := v4Meta(t, b.do(t, "GET", vt.path, nil))
			require.Equal(t, before[len(before)-1].SnapshotID, after[len(after)-1].SnapshotID, "nothing committed")

			r = vt.commit(t, idsNullAt("deleted-nulls.parquet", 1, 3))
			require.Equal(t, 200, r.status, "nulls only at deleted rows: %s", r.body)
			row, _ := vt.liveRow(t, "a.parquet")
			require.Equal(t, map[string][]int32{"deleted-nulls.parquet": {1}}, cfIDs(row))

			ids := stitchedColumn(t, b, vt, "a.parquet", 1)
			require.Equal(t, []any{int64(100), int64(102), int64(104)}, ids, "the live rows read the column file's values, none null")
		})
	}
}

// stitchedColumn plans vt's table and reads field id of base through the
// stitch client (column files and deletion vector applied), nulls as nil.
func stitchedColumn(t *testing.T, b *bundle, vt *v4Table, base string, id int) []any {
	t.Helper()
	var sc iceberg.Schema
	require.NoError(t, json.Unmarshal([]byte(wideSchemaJSON), &sc))
	plan := b.do(t, "POST", vt.path+"/plan", map[string]any{}, "X-Iceberg-Column-Files", "true")
	require.Equal(t, 200, plan.status, "%s", plan.body)
	var res struct {
		DeleteFiles []struct {
			FilePath string `json:"file-path"`
			Offset   int64  `json:"content-offset"`
			Size     int64  `json:"content-size-in-bytes"`
			Count    int64  `json:"record-count"`
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
	open := func(_ context.Context, loc string) (stitch.File, error) {
		return os.Open(strings.TrimPrefix(loc, "file://"))
	}
	for _, task := range res.Tasks {
		if task.DataFile.FilePath != vt.loc+"/data/"+base {
			continue
		}
		st := stitch.Task{DataFile: task.DataFile.FilePath, RecordCount: task.DataFile.RecordCount}
		for _, cf := range task.DataFile.ColumnFiles {
			st.ColumnFiles = append(st.ColumnFiles, stitch.ColumnFile{Location: cf.Location, FieldIDs: cf.FieldIDs})
		}
		for _, ref := range task.DeleteRefs {
			d := res.DeleteFiles[ref]
			st.DeletionVector = &stitch.DeletionVector{Location: d.FilePath, Offset: d.Offset, SizeInBytes: d.Size, Cardinality: d.Count}
		}
		require.NotNil(t, st.DeletionVector, "the plan gives the base's deletion vector")
		rec, err := stitch.Read(context.Background(), open, &sc, st, []int{id})
		require.NoError(t, err)
		defer rec.Release()
		col := rec.Column(0)
		out := make([]any, col.Len())
		for i := range out {
			if !col.IsNull(i) {
				out[i] = col.GetOneForMarshal(i)
			}
		}
		return out
	}
	t.Fatalf("no task for %s in the plan: %s", base, plan.body)
	return nil
}

// TestFilesSchemaColumnFileOfAnotherBase: a column file that is already a
// live column file of one base is refused for another (readers would see
// its values in both, and expiring one base would delete the other's
// column), and nothing is committed.
func TestFilesSchemaColumnFileOfAnotherBase(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			vt := newV4Table(t, b, "shared", map[string]int{"a.parquet": 3, "b.parquet": 3})
			size := writeScores(t, filepath.Join(vt.dir, "data/scores.parquet"), 3, 10, false, false)
			r := vt.commit(t, vt.columnFile("b.parquet", "scores.parquet", 3, []int{3}, size))
			require.Equal(t, 200, r.status, "%s", r.body)
			_, before, _ := v4Meta(t, b.do(t, "GET", vt.path, nil))

			r = vt.commit(t, vt.columnFile("a.parquet", "scores.parquet", 3, []int{3}, size))
			requireReason(t, r, "duplicate-file")
			require.Contains(t, string(r.body), "column file of data/b.parquet", "the message names the base that holds it")
			_, after, _ := v4Meta(t, b.do(t, "GET", vt.path, nil))
			require.Equal(t, before[len(before)-1].SnapshotID, after[len(after)-1].SnapshotID, "nothing committed")
			row, _ := vt.liveRow(t, "a.parquet")
			require.Empty(t, row.ColumnFiles)

			// A different file with the same values is fine.
			size = writeScores(t, filepath.Join(vt.dir, "data/scores-a.parquet"), 3, 10, false, false)
			require.Equal(t, 200, vt.commit(t, vt.columnFile("a.parquet", "scores-a.parquet", 3, []int{3}, size)).status)
		})
	}
}

// TestFilesSchemaNullsAtDeletedRowsAfterNested: the column whose nulls
// are checked against the deletion vector is found among the top-level
// fields, not the leaves: a struct of two leaves first must not make the
// check read the next field's column instead.
func TestFilesSchemaNullsAtDeletedRowsAfterNested(t *testing.T) {
	const schema = `{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"id","type":"long","required":true},
 {"id":2,"name":"s","type":{"type":"struct","fields":[{"id":3,"name":"a","type":"double","required":false},{"id":4,"name":"b","type":"double","required":false}]},"required":false},
 {"id":5,"name":"score","type":"double","required":false}]}`
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			r := b.createTable(t, "ns", "nested", map[string]any{"schema": rawJSON(schema), "properties": map[string]string{"format-version": "4"}})
			require.Equal(t, 200, r.status, "%s", r.body)
			loc, _, _ := v4Meta(t, r)
			vt := &v4Table{b: b, loc: loc, dir: strings.TrimPrefix(loc, "file://"), path: "/v1/wh/namespaces/ns/tables/nested"}
			const rows = 5
			// write writes s (two leaves), then id null at nulls, then
			// score with no null at all.
			write := func(name string, nullable bool, nulls ...int) int64 {
				null := map[int]bool{}
				for _, p := range nulls {
					null[p] = true
				}
				st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: fieldMD(3)},
					arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: fieldMD(4)})
				return writeParquet(t, filepath.Join(vt.dir, "data", name), []arrow.Field{
					{Name: "s", Type: st, Nullable: true, Metadata: fieldMD(2)},
					{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: nullable, Metadata: fieldMD(1)},
					{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: fieldMD(5)},
				}, func(b *array.RecordBuilder) {
					for i := 0; i < rows; i++ {
						sb := b.Field(0).(*array.StructBuilder)
						sb.Append(true)
						sb.FieldBuilder(0).(*array.Float64Builder).Append(1)
						sb.FieldBuilder(1).(*array.Float64Builder).Append(2)
						if null[i] {
							b.Field(1).AppendNull()
						} else {
							b.Field(1).(*array.Int64Builder).Append(int64(i))
						}
						b.Field(2).(*array.Float64Builder).Append(1)
					}
				})
			}
			size := write("a.parquet", false)
			require.Equal(t, 200, b.do(t, "POST", vt.path+"/files", map[string]any{"add-data-files": []any{addFile("a.parquet", rows, size)}}).status)
			d := writeDV(t, vt, "data/a-dv.puffin", vt.loc+"/data/a.parquet", 1, 3)
			require.Equal(t, 200, b.do(t, "POST", vt.path+"/files", map[string]any{"set-deletion-vectors": []any{d.request("data/a.parquet")}}).status)

			r = vt.commit(t, vt.columnFile("a.parquet", "live-null.parquet", rows, []int{2, 1, 5}, write("live-null.parquet", true, 1, 2)))
			requireReason(t, r, "required-field-nulls")
			require.EqualValues(t, 2, r.json(t)["error"].(map[string]any)["details"].(map[string]any)["position"], "%s", r.body)
			r = vt.commit(t, vt.columnFile("a.parquet", "deleted-nulls.parquet", rows, []int{2, 1, 5}, write("deleted-nulls.parquet", true, 1, 3)))
			require.Equal(t, 200, r.status, "%s", r.body)
		})
	}
}

package stitch_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/clients/go/stitch"
	"github.com/lakehold/catalog/internal/parquetstats"
)

// nestedSchema has a struct, a list and a map, so the name mapping's
// nested fields, "element", "key" and "value" are all exercised.
var nestedSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "p", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
		{ID: 5, Name: "x", Type: iceberg.PrimitiveTypes.Int64},
		{ID: 6, Name: "y", Type: iceberg.PrimitiveTypes.String},
	}}},
	iceberg.NestedField{ID: 3, Name: "tags", Type: &iceberg.ListType{ElementID: 7, Element: iceberg.PrimitiveTypes.Int64}},
	iceberg.NestedField{ID: 4, Name: "m", Type: &iceberg.MapType{KeyID: 8, KeyType: iceberg.PrimitiveTypes.String,
		ValueID: 9, ValueType: iceberg.PrimitiveTypes.Int64, ValueRequired: false}},
	iceberg.NestedField{ID: 10, Name: "v", Type: iceberg.PrimitiveTypes.Int64})

// The file's "point" and its "why" are aliases (names) of p and p.y; "junk"
// is not mapped at all.
const nestedMapping = `[{"field-id":1,"names":["id"]},
 {"field-id":2,"names":["p","point"],"fields":[{"field-id":5,"names":["x"]},{"field-id":6,"names":["y","why"]}]},
 {"field-id":3,"names":["tags"],"fields":[{"field-id":7,"names":["element"]}]},
 {"field-id":4,"names":["m"],"fields":[{"field-id":8,"names":["key"]},{"field-id":9,"names":["value"]}]},
 {"field-id":10,"names":["v"]}]`

// writeJSON writes rows (a JSON array of objects) as a Parquet file of
// schema sc; fields without PARQUET:field_id metadata get no field id.
func writeJSON(t *testing.T, path string, sc *arrow.Schema, rows string) {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(rows))
	require.NoError(t, err)
	defer rec.Release()
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(sc, f, nil, pqarrow.NewArrowWriterProperties())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
}

// writeUnmapped writes the base of the name-mapping tests: three rows, no
// field id anywhere, nested names that differ from the schema's.
func writeUnmapped(t *testing.T, dir string) string {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "junk", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "point", Type: arrow.StructOf(
			arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			arrow.Field{Name: "why", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
		{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	path := filepath.Join(dir, "base.parquet")
	writeJSON(t, path, sc, `[
	 {"junk": 99, "id": 1, "point": {"x": 10, "why": "a"}, "tags": [1, 2], "m": [{"key": "k", "value": 5}], "v": 100},
	 {"junk": 98, "id": 2, "point": null, "tags": [], "m": [], "v": null},
	 {"junk": 97, "id": 3, "point": {"x": null, "why": "c"}, "tags": null, "m": null, "v": 300}]`)
	return path
}

func mapping(t *testing.T) iceberg.NameMapping {
	t.Helper()
	nm, err := parquetstats.ParseNameMapping(nestedMapping)
	require.NoError(t, err)
	return nm
}

// TestNameMappedBase: a base file without field ids reads its real values
// through the table's name mapping (aliases, nested fields, list element,
// map key and value), ignores its unmapped column, and stitches a column
// file (with ids) over it.
func TestNameMappedBase(t *testing.T) {
	dir := t.TempDir()
	base := writeUnmapped(t, dir)
	cf := filepath.Join(dir, "cf.parquet")
	write(t, cf, []int{10}, map[int][]*int64{10: vals(-1, 20, 30)})
	ids := []int{1, 2, 3, 4, 10}

	rec, err := stitch.Read(context.Background(), open, nestedSchema, stitch.Task{DataFile: base, RecordCount: 3, NameMapping: mapping(t)}, ids)
	require.NoError(t, err)
	got, err := rec.MarshalJSON()
	rec.Release()
	require.NoError(t, err)
	require.JSONEq(t, `[
	 {"id": 1, "p": {"x": 10, "y": "a"}, "tags": [1, 2], "m": [{"key": "k", "value": 5}], "v": 100},
	 {"id": 2, "p": null, "tags": [], "m": [], "v": null},
	 {"id": 3, "p": {"x": null, "y": "c"}, "tags": null, "m": null, "v": 300}]`, string(got))

	task := stitch.Task{DataFile: base, RecordCount: 3, NameMapping: mapping(t),
		ColumnFiles: []stitch.ColumnFile{{Location: cf, FieldIDs: []int{10}}}}
	rec, err = stitch.Read(context.Background(), open, nestedSchema, task, []int{1, 10})
	require.NoError(t, err)
	defer rec.Release()
	require.Equal(t, []int64{1, 2, 3}, column(t, rec, 0))
	require.Equal(t, []int64{-1, 20, 30}, column(t, rec, 1))
}

// TestNameMappingIDsWin: a column with a field id is found by its id, not
// by the mapping's name for it.
func TestNameMappingIDsWin(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f.parquet")
	// Column "v" carries id 1 and column "id" carries id 10: the mapping
	// says the opposite by name.
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: md(1)},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: md(10)},
	}, nil)
	writeJSON(t, f, sc, `[{"v": 1, "id": 100}, {"v": 2, "id": 200}]`)
	rec, err := stitch.Read(context.Background(), open, nestedSchema, stitch.Task{DataFile: f, RecordCount: 2, NameMapping: mapping(t)}, []int{1, 10})
	require.NoError(t, err)
	defer rec.Release()
	require.Equal(t, []int64{1, 2}, column(t, rec, 0))
	require.Equal(t, []int64{100, 200}, column(t, rec, 1))
}

// TestNoMappingRefuses: without the mapping the same file is refused, not
// read as nulls.
func TestNoMappingRefuses(t *testing.T) {
	base := writeUnmapped(t, t.TempDir())
	_, err := stitch.Read(context.Background(), open, nestedSchema, stitch.Task{DataFile: base, RecordCount: 3}, []int{1, 2})
	require.ErrorContains(t, err, `no column with field id 1 (column "junk" has no field id and the table's name mapping gives it none)`)
}

// TestNameMappedNestedOrder: a struct whose fields the file holds in
// another order than the schema's is refused with a clear error rather
// than read by position.
func TestNameMappedNestedOrder(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f.parquet")
	sc := arrow.NewSchema([]arrow.Field{{Name: "p", Type: arrow.StructOf(
		arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), Nullable: true}}, nil)
	writeJSON(t, f, sc, `[{"p": {"y": "a", "x": 1}}]`)
	_, err := stitch.Read(context.Background(), open, nestedSchema, stitch.Task{DataFile: f, RecordCount: 1, NameMapping: mapping(t)}, []int{2})
	require.ErrorContains(t, err, "nested fields")
}

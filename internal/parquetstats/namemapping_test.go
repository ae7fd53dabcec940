package parquetstats

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/internal/parquettest"
	"github.com/lakehold/catalog/validation"
)

// writeNoIDs writes a file without any field id: id long, st
// struct<x int, y string>, tags list<string>, attrs map<string, long>.
func writeNoIDs(t *testing.T) (func() *os.File, int64) {
	path := filepath.Join(t.TempDir(), "noids.parquet")
	st := arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true})
	fields := []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "st", Type: st, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "attrs", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), Nullable: true},
	}
	size := parquettest.Write(t, path, fields, func(b *array.RecordBuilder) {
		for i := 0; i < 3; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(10 + i))
			sb := b.Field(1).(*array.StructBuilder)
			sb.Append(true)
			sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(i))
			sb.FieldBuilder(1).(*array.StringBuilder).Append("v")
			lb := b.Field(2).(*array.ListBuilder)
			lb.Append(true)
			lb.ValueBuilder().(*array.StringBuilder).Append("t")
			mb := b.Field(3).(*array.MapBuilder)
			mb.Append(true)
			mb.KeyBuilder().(*array.StringBuilder).Append("k")
			mb.ItemBuilder().(*array.Int64Builder).Append(1)
		}
	})
	// The Parquet reader closes what it reads: a fresh handle per read.
	return func() *os.File {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}, size
}

// TestNameMapping: without ids and without a mapping every field node is
// unidentified; the table's name mapping (nested names, list element, map
// key and value, an alias) gives each its id and the stats follow.
func TestNameMapping(t *testing.T) {
	open, size := writeNoIDs(t)
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "st", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 3, Name: "x", Type: iceberg.PrimitiveTypes.Int32}, {ID: 4, Name: "y", Type: iceberg.PrimitiveTypes.String}}}},
		iceberg.NestedField{ID: 5, Name: "tags", Type: &iceberg.ListType{ElementID: 6, Element: iceberg.PrimitiveTypes.String}},
		iceberg.NestedField{ID: 7, Name: "attrs", Type: &iceberg.MapType{KeyID: 8, KeyType: iceberg.PrimitiveTypes.String, ValueID: 9, ValueType: iceberg.PrimitiveTypes.Int64}})

	fi, err := Read(open(), size, sc)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"id", "st", "st.x", "st.y", "tags", "tags.element", "attrs", "attrs.key", "attrs.value"}
	if len(fi.Unidentified) != len(want) || len(fi.Columns) != 0 {
		t.Fatalf("unidentified %v, columns %v", fi.Unidentified, fi.Columns)
	}
	for i := range want {
		if fi.Unidentified[i] != want[i] {
			t.Errorf("unidentified %v, want %v", fi.Unidentified, want)
		}
	}
	if err := validation.CheckFieldIDs("Data file", "data/a.parquet", fi.Unidentified); err == nil {
		t.Error("no field ids accepted")
	}

	nm, err := ParseNameMapping(`[{"field-id":1,"names":["id"]},
		{"field-id":2,"names":["st","s"],"fields":[{"field-id":3,"names":["x"]},{"field-id":4,"names":["y"]}]},
		{"field-id":5,"names":["tags"],"fields":[{"field-id":6,"names":["element"]}]},
		{"field-id":7,"names":["attrs"],"fields":[{"field-id":8,"names":["key"]},{"field-id":9,"names":["value"]}]}]`)
	if err != nil {
		t.Fatal(err)
	}
	fi, err = ReadMapped(open(), size, sc, nm)
	if err != nil {
		t.Fatal(err)
	}
	if len(fi.Unidentified) != 0 {
		t.Fatalf("unidentified with a mapping: %v", fi.Unidentified)
	}
	for _, id := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9} {
		if _, ok := fi.Nodes[id]; !ok {
			t.Errorf("node %d not resolved: %v", id, fi.Nodes)
		}
	}
	if s := fi.Columns[1].Stats; s == nil || s.LowerBound != int64(10) || s.UpperBound != int64(12) {
		t.Errorf("id stats through the mapping: %+v", s)
	}
	if s := fi.Columns[3].Stats; s == nil || s.LowerBound != int32(0) || s.UpperBound != int32(2) {
		t.Errorf("st.x stats through the mapping: %+v", s)
	}
	if _, ok := fi.Columns[6]; ok {
		t.Error("a list element got top-level stats")
	}

	// A mapping that leaves st.y out: that column stays unidentified.
	nm, _ = ParseNameMapping(`[{"field-id":1,"names":["id"]},{"field-id":2,"names":["st"],"fields":[{"field-id":3,"names":["x"]}]},
		{"field-id":5,"names":["tags"],"fields":[{"field-id":6,"names":["element"]}]},
		{"field-id":7,"names":["attrs"],"fields":[{"field-id":8,"names":["key"]},{"field-id":9,"names":["value"]}]}]`)
	if fi, err = ReadMapped(open(), size, sc, nm); err != nil || len(fi.Unidentified) != 1 || fi.Unidentified[0] != "st.y" {
		t.Errorf("partial mapping: %v, %v", fi.Unidentified, err)
	}

	_, err = ParseNameMapping(`{"field-id":1}`)
	var ve *validation.Error
	if !errors.As(err, &ve) || ve.Reason != validation.ReasonInvalidNameMapping {
		t.Errorf("bad mapping: %v", err)
	}
}

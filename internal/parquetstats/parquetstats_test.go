package parquetstats

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/lakehold/catalog/internal/parquettest"
)

func TestJSONValue(t *testing.T) {
	dec := iceberg.DecimalTypeOf(9, 2)
	for _, tc := range []struct {
		typ  iceberg.Type
		raw  string
		want any
		err  bool
	}{
		{iceberg.PrimitiveTypes.Bool, `true`, true, false},
		{iceberg.PrimitiveTypes.Int32, `7`, int32(7), false},
		{iceberg.PrimitiveTypes.Int32, `4294967296`, nil, true},
		{iceberg.PrimitiveTypes.Int64, `"7"`, int64(7), false}, // a quoted number is accepted
		{iceberg.PrimitiveTypes.Int64, `"x"`, nil, true},
		{iceberg.PrimitiveTypes.Float64, `1.5`, 1.5, false},
		{iceberg.PrimitiveTypes.String, `"a"`, "a", false},
		{iceberg.PrimitiveTypes.String, `1`, nil, true},
		{iceberg.PrimitiveTypes.Date, `"1970-01-03"`, iceberg.Date(2), false},
		{iceberg.PrimitiveTypes.Date, `3`, iceberg.Date(3), false},
		{iceberg.PrimitiveTypes.Timestamp, `"1970-01-01T00:00:01"`, iceberg.Timestamp(1_000_000), false},
		{iceberg.PrimitiveTypes.TimestampTz, `"1970-01-01T00:00:01+01:00"`, iceberg.Timestamp(-3_599_000_000), false},
		{iceberg.PrimitiveTypes.UUID, `"00000000-0000-0000-0000-000000000001"`, uuid.MustParse("00000000-0000-0000-0000-000000000001"), false},
		{iceberg.PrimitiveTypes.Binary, `"00"`, nil, true},
		{iceberg.PrimitiveTypes.Int64, `null`, nil, false},
	} {
		got, err := JSONValue(tc.typ, json.RawMessage(tc.raw))
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("JSONValue(%s, %s) = %v (%T), %v; want %v", tc.typ, tc.raw, got, got, err, tc.want)
		}
	}
	got, err := JSONValue(dec, json.RawMessage(`"12.34"`))
	if d, ok := got.(iceberg.Decimal); err != nil || !ok || d.Scale != 2 || d.Val.LowBits() != 1234 {
		t.Errorf("decimal: %v, %v", got, err)
	}
}

func TestParseContentStats(t *testing.T) {
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64})
	got, err := ParseContentStats(sc, json.RawMessage(`{"1":{"lower-bound":1,"upper-bound":9,"value-count":3,"null-value-count":1}}`))
	if err != nil || got[1].LowerBound != int64(1) || got[1].UpperBound != int64(9) || *got[1].NullValueCount != 1 {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{`{"x":{}}`, `{"2":{}}`, `{"1":{"value-count":-1}}`, `{"1":{"value-count":1,"null-value-count":2}}`, `{"1":{"lower-bound":"a"}}`, `[]`} {
		if _, err := ParseContentStats(sc, json.RawMessage(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.parquet")
	fields := []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"1"})},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"2"})},
	}
	size := parquettest.Write(t, path, fields, func(b *array.RecordBuilder) {
		b.Field(0).(*array.Int64Builder).AppendValues([]int64{5, 3, 9}, nil)
		b.Field(1).(*array.StringBuilder).AppendValues([]string{"b", "", "a"}, []bool{true, false, true})
	})
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "s", Type: iceberg.PrimitiveTypes.String})
	fi, err := Read(f, size, sc)
	if err != nil {
		t.Fatal(err)
	}
	if fi.NumRows != 3 || fi.Size != size || !fi.Nodes[1].Required || fi.Nodes[2].Required {
		t.Errorf("footer %+v", fi)
	}
	id, s := fi.Columns[1].Stats, fi.Columns[2].Stats
	if id == nil || id.LowerBound != int64(3) || id.UpperBound != int64(9) || *id.ValueCount != 3 || *id.NullValueCount != 0 || *id.TightBounds {
		t.Errorf("id stats %+v", id)
	}
	if s == nil || s.LowerBound != "a" || s.UpperBound != "b" || *s.NullValueCount != 1 {
		t.Errorf("s stats %+v", s)
	}
	if _, err := Read(strings.NewReader("not parquet at all"), 18, sc); err == nil {
		t.Error("garbage read without error")
	}
}

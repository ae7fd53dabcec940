package parquetstats

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/lakehold/catalog/internal/parquettest"
	"github.com/lakehold/catalog/validation"
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

// TestParseContentStats: good stats are typed; every malformed one is a
// *validation.Error with the reason a client gets.
func TestParseContentStats(t *testing.T) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "st", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 3, Name: "x", Type: iceberg.PrimitiveTypes.Int32}}}},
		iceberg.NestedField{ID: 4, Name: "l", Type: &iceberg.ListType{ElementID: 5, Element: iceberg.PrimitiveTypes.String}},
		iceberg.NestedField{ID: 6, Name: "m", Type: &iceberg.MapType{KeyID: 7, KeyType: iceberg.PrimitiveTypes.String, ValueID: 8, ValueType: iceberg.PrimitiveTypes.Float64}},
		iceberg.NestedField{ID: 9, Name: "d", Type: iceberg.PrimitiveTypes.Float64})
	got, err := ParseContentStats(sc, json.RawMessage(`{"1":{"lower-bound":1,"upper-bound":9,"value-count":3,"null-value-count":1},"3":{"lower-bound":2,"upper-bound":2},"9":{"nan-value-count":1,"value-count":2}}`), 3)
	if err != nil || got[1].LowerBound != int64(1) || got[1].UpperBound != int64(9) || *got[1].NullValueCount != 1 || got[3].LowerBound != int32(2) || *got[9].NaNValueCount != 1 {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, tc := range []struct{ body, reason string }{
		{`{"x":{}}`, validation.ReasonInvalidContentStats},
		{`{"01":{}}`, validation.ReasonInvalidContentStats},
		{`[]`, validation.ReasonInvalidContentStats},
		{`{"1":[]}`, validation.ReasonInvalidContentStats},
		{`{"1":{"value-count":"3"}}`, validation.ReasonInvalidContentStats},
		{`{"99":{}}`, validation.ReasonContentStatsUnknownField},
		{`{"2147483540":{}}`, validation.ReasonContentStatsUnknownField},
		{`{"2":{"value-count":1}}`, validation.ReasonContentStatsNotPrimitive},
		{`{"4":{}}`, validation.ReasonContentStatsNotPrimitive},
		{`{"5":{"lower-bound":"a"}}`, validation.ReasonContentStatsNotPrimitive},
		{`{"6":{}}`, validation.ReasonContentStatsNotPrimitive},
		{`{"8":{}}`, validation.ReasonContentStatsNotPrimitive},
		{`{"1":{"value-count":-1}}`, validation.ReasonInvalidContentStats},
		{`{"1":{"value-count":1,"null-value-count":2}}`, validation.ReasonInvalidContentStats},
		{`{"1":{"value-count":4}}`, validation.ReasonInvalidContentStats},
		{`{"1":{"nan-value-count":0}}`, validation.ReasonInvalidContentStats},
		{`{"9":{"value-count":1,"null-value-count":1,"nan-value-count":1}}`, validation.ReasonInvalidContentStats},
		{`{"1":{"lower-bound":"a"}}`, validation.ReasonInvalidContentStats},
		{`{"1":{"lower-bound":1.5}}`, validation.ReasonInvalidContentStats},
		{`{"3":{"upper-bound":3000000000}}`, validation.ReasonInvalidContentStats},
		{`{"1":{"lower-bound":9,"upper-bound":1}}`, validation.ReasonInvalidContentStats},
	} {
		_, err := ParseContentStats(sc, json.RawMessage(tc.body), 3)
		var ve *validation.Error
		if !errors.As(err, &ve) || ve.Reason != tc.reason {
			t.Errorf("%s: got %v, want reason %s", tc.body, err, tc.reason)
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

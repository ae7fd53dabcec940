package validation

import (
	"errors"
	"testing"

	"github.com/apache/iceberg-go"
)

func reasonOf(err error) string {
	var ve *Error
	if errors.As(err, &ve) {
		return ve.Reason
	}
	if err != nil {
		return "not a validation error: " + err.Error()
	}
	return ""
}

func TestCheckStatsField(t *testing.T) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "st", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 3, Name: "x", Type: iceberg.PrimitiveTypes.Int32}}}},
		iceberg.NestedField{ID: 4, Name: "l", Type: &iceberg.ListType{ElementID: 5, Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 6, Name: "y", Type: iceberg.PrimitiveTypes.Int32}}}}},
		iceberg.NestedField{ID: 7, Name: "m", Type: &iceberg.MapType{KeyID: 8, KeyType: iceberg.PrimitiveTypes.String, ValueID: 9, ValueType: iceberg.PrimitiveTypes.Int64}})
	for _, tc := range []struct {
		id        int
		hasColumn bool
		want      string
	}{
		{1, true, ""},
		{3, true, ""},
		{1, false, ReasonContentStatsNotPrimitive},
		{2, true, ReasonContentStatsNotPrimitive},
		{4, true, ReasonContentStatsNotPrimitive},
		{5, true, ReasonContentStatsNotPrimitive},
		{6, true, ReasonContentStatsNotPrimitive},
		{7, true, ReasonContentStatsNotPrimitive},
		{8, true, ReasonContentStatsNotPrimitive},
		{9, true, ReasonContentStatsNotPrimitive},
		{10, true, ReasonContentStatsUnknownField},
		{-1, true, ReasonContentStatsUnknownField},
	} {
		if got := reasonOf(CheckStatsField(sc, tc.id, tc.hasColumn)); got != tc.want {
			t.Errorf("field %d (column %v): reason %q, want %q", tc.id, tc.hasColumn, got, tc.want)
		}
	}
}

func TestCheckStatsCounts(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	long, dbl := iceberg.PrimitiveTypes.Int64, iceberg.PrimitiveTypes.Float64
	for i, tc := range []struct {
		typ     iceberg.Type
		c       StatsCounts
		records int64
		want    string
	}{
		{long, StatsCounts{}, 0, ""},
		{long, StatsCounts{Value: n(3), Null: n(3)}, 3, ""},
		{dbl, StatsCounts{Value: n(3), Null: n(1), NaN: n(2)}, 3, ""},
		{long, StatsCounts{Value: n(-1)}, 0, ReasonInvalidContentStats},
		{long, StatsCounts{Null: n(-1)}, 0, ReasonInvalidContentStats},
		{dbl, StatsCounts{NaN: n(-1)}, 0, ReasonInvalidContentStats},
		{long, StatsCounts{NaN: n(0)}, 0, ReasonInvalidContentStats},
		{long, StatsCounts{Value: n(1), Null: n(2)}, 0, ReasonInvalidContentStats},
		{dbl, StatsCounts{Value: n(2), Null: n(1), NaN: n(2)}, 0, ReasonInvalidContentStats},
		{dbl, StatsCounts{Value: n(2), Null: n(1 << 62), NaN: n(1 << 62)}, 0, ReasonInvalidContentStats},
		{long, StatsCounts{Value: n(4)}, 3, ReasonInvalidContentStats},
	} {
		if got := reasonOf(CheckStatsCounts(1, tc.typ, tc.c, tc.records)); got != tc.want {
			t.Errorf("case %d: reason %q, want %q", i, got, tc.want)
		}
	}
}

func TestCheckFieldIDs(t *testing.T) {
	if err := CheckFieldIDs("Data file", "data/a.parquet", nil); err != nil {
		t.Fatal(err)
	}
	err := CheckFieldIDs("Column file", "data/c.parquet", []string{"a", "b", "c", "d", "e", "f"})
	var ve *Error
	if !errors.As(err, &ve) || ve.Reason != ReasonMissingFieldIDs || len(ve.Details["columns"].([]string)) != 5 {
		t.Fatalf("got %v", err)
	}
}

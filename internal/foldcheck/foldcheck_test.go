package foldcheck

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"
)

func md(id int) arrow.Metadata {
	return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)})
}

var (
	pointType = arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true})
	tagsType  = arrow.ListOf(arrow.PrimitiveTypes.Int64)
	attrsType = arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64)
)

// col builds an array from JSON.
func col(t *testing.T, dt arrow.DataType, js string) arrow.Array {
	t.Helper()
	a, _, err := array.FromJSON(memory.DefaultAllocator, dt, strings.NewReader(js))
	require.NoError(t, err)
	t.Cleanup(a.Release)
	return a
}

// floats builds a double array; nil entries are nulls.
func floats(t *testing.T, vs ...*float64) arrow.Array {
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	defer b.Release()
	for _, v := range vs {
		if v == nil {
			b.AppendNull()
		} else {
			b.Append(*v)
		}
	}
	a := b.NewArray()
	t.Cleanup(a.Release)
	return a
}

func f(v float64) *float64 { return &v }

// record puts columns named c<id> with field ids 1.. together.
func record(t *testing.T, cols ...arrow.Array) arrow.RecordBatch {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: "c" + strconv.Itoa(i+1), Type: c.DataType(), Nullable: true, Metadata: md(i + 1)}
	}
	n := int64(0)
	if len(cols) > 0 {
		n = int64(cols[0].Len())
	}
	r := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, n)
	t.Cleanup(r.Release)
	return r
}

// nan is a NaN with a payload other than math.NaN()'s.
var nan = math.Float64frombits(0x7ff8_0000_0000_0abc)

// columns of the reference record, by name, as JSON (doubles apart).
var refJSON = map[string]string{
	"str":   `["", null, "a", "héllo"]`,
	"bin":   `["", null, "AAE=", "/w=="]`,
	"point": `[{"x": 1, "y": ""}, null, {"x": null, "y": null}, {"x": -4, "y": "q"}]`,
	"tags":  `[[], null, [1, null, 3], [0]]`,
	"attrs": `[[], null, [{"key": "a", "value": null}, {"key": "b", "value": 2.5}], [{"key": "", "value": -0.0}]]`,
	"day":   `[0, null, 19000, -1]`,
}

// reference builds the record every case starts from, with edit applied
// to the named column's JSON (or the doubles).
func reference(t *testing.T, edit func(name string, js string) string, dbl []*float64) arrow.RecordBatch {
	if dbl == nil {
		dbl = []*float64{f(nan), nil, f(math.Copysign(0, -1)), f(0)}
	}
	js := func(name string) string {
		if edit == nil {
			return refJSON[name]
		}
		return edit(name, refJSON[name])
	}
	return record(t, floats(t, dbl...), col(t, arrow.BinaryTypes.String, js("str")), col(t, arrow.BinaryTypes.Binary, js("bin")),
		col(t, pointType, js("point")), col(t, tagsType, js("tags")), col(t, attrsType, js("attrs")),
		col(t, arrow.FixedWidthTypes.Date32, js("day")))
}

func replace(col, from, to string) func(string, string) string {
	return func(name, js string) string {
		if name == col {
			return strings.Replace(js, from, to, 1)
		}
		return js
	}
}

func TestCompare(t *testing.T) {
	all := Sample(4, SampleSize)
	for _, tc := range []struct {
		name  string
		got   func(t *testing.T) arrow.RecordBatch
		check string // "" when equal
		field string
	}{
		{"identical", func(t *testing.T) arrow.RecordBatch { return reference(t, nil, nil) }, "", ""},
		{"nan-payload", func(t *testing.T) arrow.RecordBatch {
			return reference(t, nil, []*float64{f(math.NaN()), nil, f(math.Copysign(0, -1)), f(0)})
		}, "value", "c1"},
		{"negative-zero", func(t *testing.T) arrow.RecordBatch {
			return reference(t, nil, []*float64{f(nan), nil, f(0), f(0)})
		}, "value", "c1"},
		{"null-to-zero", func(t *testing.T) arrow.RecordBatch {
			return reference(t, nil, []*float64{f(nan), f(0), f(math.Copysign(0, -1)), f(0)})
		}, "null count", "c1"},
		{"empty-string-to-null", func(t *testing.T) arrow.RecordBatch { return reference(t, replace("str", `""`, `null`), nil) }, "null count", "c2"},
		{"string-changed", func(t *testing.T) arrow.RecordBatch { return reference(t, replace("str", `"a"`, `"b"`), nil) }, "value", "c2"},
		{"empty-binary-to-null", func(t *testing.T) arrow.RecordBatch { return reference(t, replace("bin", `""`, `null`), nil) }, "null count", "c3"},
		{"struct-child-null", func(t *testing.T) arrow.RecordBatch {
			return reference(t, replace("point", `"x": 1`, `"x": null`), nil)
		}, "value", "c4"},
		{"struct-child-empty", func(t *testing.T) arrow.RecordBatch {
			return reference(t, replace("point", `"y": null`, `"y": ""`), nil)
		}, "value", "c4"},
		{"list-element", func(t *testing.T) arrow.RecordBatch {
			return reference(t, replace("tags", `[1, null, 3]`, `[1, 0, 3]`), nil)
		}, "value", "c5"},
		{"list-length", func(t *testing.T) arrow.RecordBatch {
			return reference(t, replace("tags", `[1, null, 3]`, `[1, null]`), nil)
		}, "element count", "c5"},
		{"empty-list-to-null", func(t *testing.T) arrow.RecordBatch { return reference(t, replace("tags", `[[]`, `[null`), nil) }, "null count", "c5"},
		{"map-value", func(t *testing.T) arrow.RecordBatch { return reference(t, replace("attrs", `2.5`, `2.25`), nil) }, "value", "c6"},
		{"map-value-sign", func(t *testing.T) arrow.RecordBatch { return reference(t, replace("attrs", `-0.0`, `0.0`), nil) }, "value", "c6"},
		{"map-key", func(t *testing.T) arrow.RecordBatch {
			return reference(t, replace("attrs", `"key": "b"`, `"key": "c"`), nil)
		}, "value", "c6"},
		{"date", func(t *testing.T) arrow.RecordBatch { return reference(t, replace("day", `19000`, `19001`), nil) }, "value", "c7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Compare(reference(t, nil, nil), tc.got(t), all)
			if tc.check == "" {
				require.NoError(t, err)
				return
			}
			var me *MismatchError
			require.True(t, errors.As(err, &me), "%v", err)
			require.Equal(t, tc.check, me.Check, "%v", err)
			require.Equal(t, tc.field, me.Field, "%v", err)
			require.NotContains(t, err.Error(), "2.25", "no values in the message")
		})
	}
}

// TestCompareShape: row count, missing or extra columns, and a value
// outside the sample that the sample cannot see.
func TestCompareShape(t *testing.T) {
	want := reference(t, nil, nil)
	var me *MismatchError
	err := Compare(want, want.NewSlice(0, 3), Sample(3, SampleSize))
	require.True(t, errors.As(err, &me) && me.Check == "row count", "%v", err)
	fewer := record(t, want.Column(0))
	err = Compare(want, fewer, nil)
	require.True(t, errors.As(err, &me) && me.Check == "column", "%v", err)
	// Same columns, ids swapped: field 1 is missing under its id.
	cols := want.Columns()
	swapped := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "c1", Type: cols[0].DataType(), Metadata: md(9)}}, nil), cols[:1], 4)
	defer swapped.Release()
	err = Compare(want.NewSlice(0, 4), swapped, nil)
	require.Error(t, err)
	// A changed value in a row the sample skips goes unseen: the check is
	// a sample by design (first, last and spread rows).
	require.NoError(t, Compare(reference(t, replace("day", `19000`, `19001`), nil), reference(t, nil, nil), []int{0, 3}))
}

// TestCompareNamesAndFlags: field names, nullability and metadata of the
// read-back schema do not count as differences.
func TestCompareNamesAndFlags(t *testing.T) {
	want := reference(t, nil, nil)
	fields := want.Schema().Fields()
	for i := range fields {
		fields[i].Name += "_renamed"
		fields[i].Nullable = false
	}
	got := array.NewRecordBatch(arrow.NewSchema(fields, nil), want.Columns(), want.NumRows())
	defer got.Release()
	require.NoError(t, Compare(want, got, Sample(4, SampleSize)))
}

func TestSample(t *testing.T) {
	require.Empty(t, Sample(0, 8))
	require.Equal(t, []int{0, 1, 2}, Sample(3, 8))
	require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, Sample(8, 8))
	s := Sample(1_000_003, 128)
	require.Len(t, s, 128)
	require.Equal(t, 0, s[0])
	require.Equal(t, 1_000_002, s[len(s)-1])
	for i := 1; i < len(s); i++ {
		require.Less(t, s[i-1], s[i])
	}
	require.Equal(t, s, Sample(1_000_003, 128), "deterministic")
	require.Equal(t, []int{0, 9}, Sample(10, 1), "at least first and last")
}

var nestedSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "opt", Type: iceberg.PrimitiveTypes.Int64},
	iceberg.NestedField{ID: 3, Name: "point", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
		{ID: 10, Name: "x", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		{ID: 11, Name: "y", Type: iceberg.PrimitiveTypes.String}}}},
	iceberg.NestedField{ID: 4, Name: "tags", Type: &iceberg.ListType{ElementID: 12, Element: iceberg.PrimitiveTypes.Int64, ElementRequired: true}},
	iceberg.NestedField{ID: 5, Name: "attrs", Type: &iceberg.MapType{KeyID: 13, KeyType: iceberg.PrimitiveTypes.String,
		ValueID: 14, ValueType: iceberg.PrimitiveTypes.Float64, ValueRequired: true}})

func TestRequiredNulls(t *testing.T) {
	long := arrow.PrimitiveTypes.Int64
	ok := map[string]string{
		"id":    `[1, 2, 3]`,
		"opt":   `[null, null, 1]`,
		"point": `[null, {"x": 1, "y": null}, {"x": 2, "y": ""}]`,
		"tags":  `[null, [], [1, 2]]`,
		"attrs": `[null, [], [{"key": "a", "value": 1}]]`,
	}
	build := func(t *testing.T, edit map[string]string) arrow.RecordBatch {
		js := func(n string) string {
			if v, ok := edit[n]; ok {
				return v
			}
			return ok[n]
		}
		return record(t, col(t, long, js("id")), col(t, long, js("opt")), col(t, pointType, js("point")),
			col(t, tagsType, js("tags")), col(t, arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64), js("attrs")))
	}
	for _, tc := range []struct {
		name string
		edit map[string]string
		want *RequiredNullsError // nil: accepted
	}{
		{"clean", nil, nil},
		{"top-level", map[string]string{"id": `[1, null, null]`}, &RequiredNullsError{FieldID: 1, Path: "id", Nulls: 2, Row: 1}},
		{"struct-child", map[string]string{"point": `[null, {"x": 1}, {"x": null, "y": "z"}]`}, &RequiredNullsError{FieldID: 10, Path: "point.x", Nulls: 1, Row: 2}},
		{"list-element", map[string]string{"tags": `[[1], [], [1, null]]`}, &RequiredNullsError{FieldID: 12, Path: "tags.element", Nulls: 1, Row: 2}},
		{"map-value", map[string]string{"attrs": `[[{"key": "a", "value": null}], null, []]`}, &RequiredNullsError{FieldID: 14, Path: "attrs.value", Nulls: 1, Row: 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := RequiredNulls(build(t, tc.edit), nestedSchema)
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			var re *RequiredNullsError
			require.True(t, errors.As(err, &re), "%v", err)
			require.Equal(t, tc.want, re)
		})
	}
}

// TestRequiredNullsUnderNullParent: a null struct hides its children's
// slots, which hold nulls there without breaking the rule.
func TestRequiredNullsUnderNullParent(t *testing.T) {
	b := array.NewStructBuilder(memory.DefaultAllocator, pointType)
	defer b.Release()
	b.AppendNull() // the builder appends null children as well
	b.Append(true)
	b.FieldBuilder(0).(*array.Int32Builder).Append(7)
	b.FieldBuilder(1).(*array.StringBuilder).AppendNull()
	pt := b.NewArray()
	defer pt.Release()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "point", Type: pointType, Nullable: true, Metadata: md(3)}}, nil),
		[]arrow.Array{pt}, 2)
	defer rec.Release()
	require.NoError(t, RequiredNulls(rec, nestedSchema))
}

package v4convert

import (
	"fmt"
	"math"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/lakehold/catalog/v4manifest"
)

// specTypes are the result types of one partition spec's fields.
type specTypes struct {
	id     int
	fields []iceberg.PartitionField
	types  []iceberg.Type
}

// newSpecTypes types spec's fields from sc: an *UnsupportedError when a
// source column is no longer in the schema (the v4 partition column is
// typed from the current schema).
func newSpecTypes(sc *iceberg.Schema, spec iceberg.PartitionSpec) (*specTypes, error) {
	st := &specTypes{id: spec.ID()}
	for _, pf := range spec.Fields() {
		src, ok := sc.FindFieldByID(pf.SourceID())
		if !ok {
			return nil, &UnsupportedError{What: "partition specs whose source column was dropped", Count: 1,
				Example: fmt.Sprintf("spec %d field %s", spec.ID(), pf.Name), Hint: "rewrite the files of that spec first"}
		}
		st.fields = append(st.fields, pf)
		st.types = append(st.types, pf.Transform.ResultType(src.Type))
	}
	return st, nil
}

// values returns a file's partition tuple as the v4 writer wants it (Go
// values of each result type, keyed by partition field id); nil when the
// spec is unpartitioned.
func (st *specTypes) values(df iceberg.DataFile) (map[int]any, error) {
	if len(st.fields) == 0 {
		return nil, nil
	}
	in := df.Partition()
	out := make(map[int]any, len(st.fields))
	for i, pf := range st.fields {
		v, ok := partitionValue(st.types[i], in[pf.FieldID])
		if !ok {
			return nil, &UnsupportedError{What: "partition values of an unexpected type", Count: 1, Example: df.FilePath(),
				Hint: fmt.Sprintf("field %s of spec %d holds %T, not %s", pf.Name, st.id, in[pf.FieldID], st.types[i])}
		}
		out[pf.FieldID] = v
	}
	return out, nil
}

// partitionValue maps a partition value as iceberg-go decodes it from Avro
// (typed or raw, depending on the writer's logical types) onto the Go value
// v4manifest uses for type t. nil stays nil (a null partition value).
func partitionValue(t iceberg.Type, v any) (any, bool) {
	if v == nil {
		return nil, true
	}
	switch t.(type) {
	case iceberg.BooleanType:
		b, ok := v.(bool)
		return b, ok
	case iceberg.Int32Type:
		n, ok := asInt(v)
		return int32(n), ok && n >= math.MinInt32 && n <= math.MaxInt32
	case iceberg.Int64Type:
		n, ok := asInt(v)
		return n, ok
	case iceberg.Float32Type:
		f, ok := v.(float32)
		return f, ok
	case iceberg.Float64Type:
		f, ok := v.(float64)
		return f, ok
	case iceberg.DateType:
		return dateValue(v)
	case iceberg.TimeType:
		return timeValue(v)
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return timestampValue(v)
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		if ts, ok := v.(iceberg.TimestampNano); ok {
			return ts, true
		}
		if tt, ok := v.(time.Time); ok {
			return iceberg.TimestampNano(tt.UnixNano()), true
		}
		n, ok := asInt(v)
		return iceberg.TimestampNano(n), ok
	case iceberg.StringType:
		s, ok := v.(string)
		return s, ok
	case iceberg.BinaryType, iceberg.FixedType:
		return bytesValue(v)
	case iceberg.UUIDType:
		return uuidValue(v)
	case iceberg.DecimalType:
		d, ok := v.(iceberg.Decimal)
		return d, ok
	}
	return nil, false
}

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case int:
		return int64(n), true
	}
	return 0, false
}

func dateValue(v any) (any, bool) {
	switch d := v.(type) {
	case iceberg.Date:
		return d, true
	case time.Time:
		return iceberg.Date(d.UTC().Truncate(24*time.Hour).Unix() / 86400), true
	}
	n, ok := asInt(v)
	return iceberg.Date(n), ok && n >= math.MinInt32 && n <= math.MaxInt32
}

func timeValue(v any) (any, bool) {
	switch t := v.(type) {
	case iceberg.Time:
		return t, true
	case time.Duration:
		return iceberg.Time(t.Microseconds()), true
	}
	n, ok := asInt(v)
	return iceberg.Time(n), ok
}

func timestampValue(v any) (any, bool) {
	switch t := v.(type) {
	case iceberg.Timestamp:
		return t, true
	case time.Time:
		return iceberg.Timestamp(t.UnixMicro()), true
	}
	n, ok := asInt(v)
	return iceberg.Timestamp(n), ok
}

func bytesValue(v any) (any, bool) {
	switch b := v.(type) {
	case []byte:
		return cloneBytes(b), true
	case string:
		return []byte(b), true
	}
	return nil, false
}

func uuidValue(v any) (any, bool) {
	switch u := v.(type) {
	case uuid.UUID:
		return u, true
	case [16]byte:
		return uuid.UUID(u), true
	case []byte:
		id, err := uuid.FromBytes(u)
		return id, err == nil
	case string:
		id, err := uuid.Parse(u)
		return id, err == nil
	}
	return nil, false
}

// statsTypes maps the table fields that may carry v4 stats to their types:
// primitive fields not inside a list or map (leaves of structs included),
// whose stats id is in range, plus the row-lineage columns.
type statsTypes map[int]iceberg.PrimitiveType

func newStatsTypes(sc *iceberg.Schema) statsTypes {
	out := statsTypes{
		v4manifest.FieldRowID:                     iceberg.PrimitiveTypes.Int64,
		v4manifest.FieldLastUpdatedSequenceNumber: iceberg.PrimitiveTypes.Int64,
	}
	var walk func(fields []iceberg.NestedField)
	walk = func(fields []iceberg.NestedField) {
		for _, f := range fields {
			switch t := f.Type.(type) {
			case *iceberg.StructType:
				walk(t.FieldList)
			case iceberg.PrimitiveType:
				if _, ok := v4manifest.StatsBase(f.ID); ok && v4manifest.StatsSupported(t) {
					out[f.ID] = t
				}
			}
		}
	}
	if sc != nil {
		walk(sc.Fields())
	}
	return out
}

// convert turns a file's v3 metrics into typed v4 stats. Counts are copied;
// bounds are decoded from Iceberg's single-value binary form with the
// field's current type (a bound written before a type promotion is
// widened; one that does not decode is left unknown). v3 says nothing of
// tightness, so tight_bounds stays unknown. Column sizes and distinct
// counts have no v4 field and are not carried; fields without a v4 stats
// column (dropped, or inside a list or map) are skipped.
func (st statsTypes) convert(df iceberg.DataFile) map[int]*v4manifest.FieldStats {
	vc, nc, nan := df.ValueCounts(), df.NullValueCounts(), df.NaNValueCounts()
	lo, hi := df.LowerBoundValues(), df.UpperBoundValues()
	out := map[int]*v4manifest.FieldStats{}
	get := func(id int) *v4manifest.FieldStats {
		if _, ok := st[id]; !ok {
			return nil
		}
		fs := out[id]
		if fs == nil {
			fs = &v4manifest.FieldStats{}
			out[id] = fs
		}
		return fs
	}
	for id, n := range vc {
		if fs := get(id); fs != nil {
			fs.ValueCount = ptr(n)
		}
	}
	for id, n := range nc {
		if fs := get(id); fs != nil {
			fs.NullValueCount = ptr(n)
		}
	}
	for id, n := range nan {
		if fs := get(id); fs != nil && isFloat(st[id]) {
			fs.NaNValueCount = ptr(n)
		}
	}
	for id, b := range lo {
		if v := decodeBound(st[id], b); v != nil {
			get(id).LowerBound = v
		}
	}
	for id, b := range hi {
		if v := decodeBound(st[id], b); v != nil {
			get(id).UpperBound = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func isFloat(t iceberg.PrimitiveType) bool {
	switch t.(type) {
	case iceberg.Float32Type, iceberg.Float64Type:
		return true
	}
	return false
}

// decodeBound decodes a v3 bound for type t; nil when t is nil (no v4
// stats column) or the bytes do not decode. A bound written before a type
// promotion (int to long, float to double: 4 bytes) is widened.
func decodeBound(t iceberg.PrimitiveType, b []byte) any {
	if t == nil || b == nil {
		return nil
	}
	as := t
	switch t.(type) {
	case iceberg.Int64Type:
		if len(b) == 4 {
			as = iceberg.PrimitiveTypes.Int32
		}
	case iceberg.Float64Type:
		if len(b) == 4 {
			as = iceberg.PrimitiveTypes.Float32
		}
	}
	lit, err := literalFromBytes(as, b)
	if err != nil {
		return nil
	}
	switch v := lit.Any().(type) {
	case int32:
		if _, long := t.(iceberg.Int64Type); long {
			return int64(v)
		}
		return v
	case float32:
		if _, double := t.(iceberg.Float64Type); double {
			return float64(v)
		}
		return v
	default:
		return v
	}
}

// literalFromBytes is iceberg.LiteralFromBytes, which panics on some
// malformed input (a decimal of more than 16 bytes): a bound read from a
// manifest must never take the server down, so a panic is an error.
func literalFromBytes(t iceberg.Type, b []byte) (lit iceberg.Literal, err error) {
	defer func() {
		if r := recover(); r != nil {
			lit, err = nil, fmt.Errorf("undecodable %s bound", t)
		}
	}()
	return iceberg.LiteralFromBytes(t, b)
}

package v4manifest

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// Value mapping between Iceberg types and the Go values this package uses
// for partition values and stats bounds:
//
//	boolean bool · int int32 · long int64 · float float32 · double float64
//	decimal iceberg.Decimal · date iceberg.Date · time iceberg.Time
//	timestamp, timestamptz iceberg.Timestamp · timestamp_ns iceberg.TimestampNano
//	string string · uuid uuid.UUID · fixed, binary []byte

// appendValue appends a Go value (or null for nil) to a primitive builder.
// It fails, appending nothing, when the value does not fit the builder.
func appendValue(b array.Builder, v any) error { return putValue(b, v, false) }

// checkValue reports whether appendValue would accept v, appending nothing.
func checkValue(b array.Builder, v any) error { return putValue(b, v, true) }

// putValue type-checks v against b and, unless dry, appends it.
func putValue(b array.Builder, v any, dry bool) error {
	if v == nil {
		if !dry {
			b.AppendNull()
		}
		return nil
	}
	bad := func() error { return fmt.Errorf("value %v (%T) does not fit %s", v, v, b.Type()) }
	switch b := b.(type) {
	case *array.BooleanBuilder:
		x, ok := v.(bool)
		if !ok {
			return bad()
		}
		if !dry {
			b.Append(x)
		}
	case *array.Int32Builder:
		x, ok := v.(int32)
		if !ok {
			return bad()
		}
		if !dry {
			b.Append(x)
		}
	case *array.Int64Builder:
		x, ok := v.(int64)
		if !ok {
			return bad()
		}
		if !dry {
			b.Append(x)
		}
	case *array.Float32Builder:
		x, ok := v.(float32)
		if !ok {
			return bad()
		}
		if !dry {
			b.Append(x)
		}
	case *array.Float64Builder:
		x, ok := v.(float64)
		if !ok {
			return bad()
		}
		if !dry {
			b.Append(x)
		}
	case *array.Date32Builder:
		x, ok := v.(iceberg.Date)
		if !ok {
			return bad()
		}
		if !dry {
			b.Append(arrow.Date32(x))
		}
	case *array.Time64Builder:
		x, ok := v.(iceberg.Time)
		if !ok {
			return bad()
		}
		if !dry {
			b.Append(arrow.Time64(x))
		}
	case *array.TimestampBuilder:
		switch x := v.(type) {
		case iceberg.Timestamp:
			if !dry {
				b.Append(arrow.Timestamp(x))
			}
		case iceberg.TimestampNano:
			if !dry {
				b.Append(arrow.Timestamp(x))
			}
		default:
			return bad()
		}
	case *array.StringBuilder:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		if !dry {
			b.Append(x)
		}
	case *array.BinaryBuilder:
		x, ok := v.([]byte)
		if !ok {
			return bad()
		}
		if !dry {
			b.Append(x)
		}
	case *array.FixedSizeBinaryBuilder:
		x, ok := v.([]byte)
		if !ok || len(x) != b.Type().(*arrow.FixedSizeBinaryType).ByteWidth {
			return bad()
		}
		if !dry {
			b.Append(x)
		}
	case *array.Decimal128Builder:
		x, ok := v.(iceberg.Decimal)
		if !ok || x.Scale != int(b.Type().(*arrow.Decimal128Type).Scale) {
			return bad()
		}
		if !dry {
			b.Append(decimal128.Num(x.Val))
		}
	case *extensions.UUIDBuilder:
		x, ok := v.(uuid.UUID)
		if !ok {
			return bad()
		}
		if !dry {
			b.Append(x)
		}
	default:
		return fmt.Errorf("unsupported value builder %T", b)
	}
	return nil
}

// valueAt reads element i of a primitive array as a Go value (nil if null).
func valueAt(a arrow.Array, i int) (any, error) {
	if a.IsNull(i) {
		return nil, nil
	}
	switch a := a.(type) {
	case *array.Boolean:
		return a.Value(i), nil
	case *array.Int32:
		return a.Value(i), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.Float32:
		return a.Value(i), nil
	case *array.Float64:
		return a.Value(i), nil
	case *array.Date32:
		return iceberg.Date(a.Value(i)), nil
	case *array.Time64:
		return iceberg.Time(a.Value(i)), nil
	case *array.Timestamp:
		if a.DataType().(*arrow.TimestampType).Unit == arrow.Nanosecond {
			return iceberg.TimestampNano(a.Value(i)), nil
		}
		return iceberg.Timestamp(a.Value(i)), nil
	case *array.String:
		return strings.Clone(a.Value(i)), nil // the array's buffer is recycled
	case *array.Binary:
		return append([]byte(nil), a.Value(i)...), nil
	case *extensions.UUIDArray:
		return a.Value(i), nil
	case *array.FixedSizeBinary:
		return append([]byte(nil), a.Value(i)...), nil
	case *array.Decimal128:
		return iceberg.Decimal{Val: a.Value(i), Scale: int(a.DataType().(*arrow.Decimal128Type).Scale)}, nil
	}
	return nil, fmt.Errorf("unsupported column type %s", a.DataType())
}

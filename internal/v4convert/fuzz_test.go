package v4convert

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// FuzzDecodeBound: any bytes, for any stats type, either decode to the Go
// value v4manifest uses for that type or to nil (unknown); never a panic
// or a value of another type (which the manifest writer would refuse).
func FuzzDecodeBound(f *testing.F) {
	types := []iceberg.PrimitiveType{iceberg.PrimitiveTypes.Bool, iceberg.PrimitiveTypes.Int32, iceberg.PrimitiveTypes.Int64,
		iceberg.PrimitiveTypes.Float32, iceberg.PrimitiveTypes.Float64, iceberg.PrimitiveTypes.Date, iceberg.PrimitiveTypes.Time,
		iceberg.PrimitiveTypes.Timestamp, iceberg.PrimitiveTypes.TimestampTz, iceberg.PrimitiveTypes.String,
		iceberg.PrimitiveTypes.Binary, iceberg.PrimitiveTypes.UUID, iceberg.FixedTypeOf(3), iceberg.DecimalTypeOf(9, 2)}
	for i := range types {
		f.Add(uint8(i), []byte{1, 2, 3, 4})
		f.Add(uint8(i), []byte{1, 2, 3, 4, 5, 6, 7, 8})
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		typ := types[int(which)%len(types)]
		v := decodeBound(typ, data)
		if v == nil {
			return
		}
		ok := false
		switch typ.(type) {
		case iceberg.BooleanType:
			_, ok = v.(bool)
		case iceberg.Int32Type:
			_, ok = v.(int32)
		case iceberg.Int64Type:
			_, ok = v.(int64)
		case iceberg.Float32Type:
			_, ok = v.(float32)
		case iceberg.Float64Type:
			_, ok = v.(float64)
		case iceberg.DateType:
			_, ok = v.(iceberg.Date)
		case iceberg.TimeType:
			_, ok = v.(iceberg.Time)
		case iceberg.TimestampType, iceberg.TimestampTzType:
			_, ok = v.(iceberg.Timestamp)
		case iceberg.StringType:
			_, ok = v.(string)
		case iceberg.BinaryType, iceberg.FixedType:
			_, ok = v.([]byte)
		case iceberg.UUIDType:
			_, ok = v.(uuid.UUID)
		case iceberg.DecimalType:
			_, ok = v.(iceberg.Decimal)
		}
		if !ok {
			t.Fatalf("%s bound decoded to %T", typ, v)
		}
	})
}

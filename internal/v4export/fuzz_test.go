package v4export_test

import (
	"bytes"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/internal/v4export"
)

var fuzzTypes = []iceberg.PrimitiveType{
	iceberg.PrimitiveTypes.Bool, iceberg.PrimitiveTypes.Int32, iceberg.PrimitiveTypes.Int64,
	iceberg.PrimitiveTypes.Float32, iceberg.PrimitiveTypes.Float64, iceberg.PrimitiveTypes.Date,
	iceberg.PrimitiveTypes.Time, iceberg.PrimitiveTypes.Timestamp, iceberg.PrimitiveTypes.TimestampTz,
	iceberg.PrimitiveTypes.TimestampNs, iceberg.PrimitiveTypes.String, iceberg.PrimitiveTypes.Binary,
	iceberg.PrimitiveTypes.UUID, iceberg.DecimalTypeOf(10, 2), iceberg.FixedTypeOf(4),
}

// FuzzEncodeBound: a bound decoded from any bytes encodes, its encoding is
// a fixed point (decoding and encoding it again gives the same bytes; NaN
// is compared by its bytes), and EncodeBound never panics, whatever value
// and type meet.
func FuzzEncodeBound(f *testing.F) {
	f.Add(uint8(1), []byte{1, 0, 0, 0})
	f.Add(uint8(10), []byte("abc"))
	f.Add(uint8(13), []byte{0x01, 0x02})
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		typ := fuzzTypes[int(which)%len(fuzzTypes)]
		lit, err := decode(typ, b)
		if err != nil {
			return
		}
		got, ok := v4export.EncodeBound(typ, lit.Any())
		if !ok {
			t.Fatalf("%s bound %v does not encode", typ, lit.Any())
		}
		again, err := decode(typ, got)
		if err != nil {
			t.Fatalf("%s: %x re-encoded as %x, which does not decode: %v", typ, b, got, err)
		}
		if twice, ok := v4export.EncodeBound(typ, again.Any()); !ok || !bytes.Equal(twice, got) {
			t.Fatalf("%s: %x encodes to %x, then to %x", typ, b, got, twice)
		}
		// Any value against any type: no panic.
		other := fuzzTypes[(int(which)+1)%len(fuzzTypes)]
		_, _ = v4export.EncodeBound(other, lit.Any())
	})
}

func decode(t iceberg.PrimitiveType, b []byte) (lit iceberg.Literal, err error) {
	defer func() {
		if recover() != nil {
			lit, err = nil, errPanic
		}
	}()
	return iceberg.LiteralFromBytes(t, b)
}

type panicErr struct{}

func (panicErr) Error() string { return "LiteralFromBytes panicked" }

var errPanic = panicErr{}

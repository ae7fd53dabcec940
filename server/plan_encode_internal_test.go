package server

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// TestSingleValue: partition values in the Iceberg single-value JSON that
// Java's SingleValueParser reads.
func TestSingleValue(t *testing.T) {
	ts := iceberg.Timestamp(1_700_000_000_123_456)
	cases := []struct {
		v    any
		typ  iceberg.Type
		want string
	}{
		{nil, nil, `null`},
		{true, iceberg.PrimitiveTypes.Bool, `true`},
		{int32(7), iceberg.PrimitiveTypes.Int32, `7`},
		{int64(-7), iceberg.PrimitiveTypes.Int64, `-7`},
		{1.5, iceberg.PrimitiveTypes.Float64, `1.5`},
		{"eu", iceberg.PrimitiveTypes.String, `"eu"`},
		{iceberg.Date(19724), iceberg.PrimitiveTypes.Date, `"2024-01-02"`},
		{iceberg.Time(3_723_000_001), iceberg.PrimitiveTypes.Time, `"01:02:03.000001"`},
		{ts, iceberg.PrimitiveTypes.Timestamp, `"2023-11-14T22:13:20.123456"`},
		{ts, iceberg.PrimitiveTypes.TimestampTz, `"2023-11-14T22:13:20.123456+00:00"`},
		{[]byte{0x0a, 0xff}, iceberg.PrimitiveTypes.Binary, `"0AFF"`},
		{uuid.MustParse("f79c3e09-677c-4bbd-a479-3f349cb785e7"), iceberg.PrimitiveTypes.UUID, `"f79c3e09-677c-4bbd-a479-3f349cb785e7"`},
	}
	for _, c := range cases {
		if got := string(singleValue(c.v, c.typ)); got != c.want {
			t.Errorf("singleValue(%v) = %s, want %s", c.v, got, c.want)
		}
	}
}

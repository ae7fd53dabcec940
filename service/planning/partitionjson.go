package planning

import (
	"encoding/hex"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// PartitionValueJSON converts a partition value to the REST single-value
// JSON form Java's ContentFileParser requires: dates, times and timestamps
// as ISO-8601 text (timestamptz with an offset), decimals as text, binary
// and fixed as upper-case hex, uuids as text, other values unchanged. typ
// is the partition field's result type; when nil, the value's own Go type
// (iceberg.Date, iceberg.Timestamp, ...) decides.
func PartitionValueJSON(v any, typ iceberg.Type) any {
	if v == nil {
		return nil
	}
	if typ == nil {
		typ = typeOfValue(v)
	}
	micros := func(v any) (int64, bool) {
		switch x := v.(type) {
		case int64:
			return x, true
		case int32:
			return int64(x), true
		case int:
			return int64(x), true
		case iceberg.Date:
			return int64(x), true
		case iceberg.Time:
			return int64(x), true
		case iceberg.Timestamp:
			return int64(x), true
		case iceberg.TimestampNano:
			return int64(x), true
		}
		return 0, false
	}
	switch typ.(type) {
	case iceberg.DateType:
		if n, ok := micros(v); ok {
			return time.Unix(n*86400, 0).UTC().Format("2006-01-02")
		}
	case iceberg.TimeType:
		if n, ok := micros(v); ok {
			return time.UnixMicro(n).UTC().Format("15:04:05.000000")
		}
	case iceberg.TimestampType:
		if n, ok := micros(v); ok {
			return time.UnixMicro(n).UTC().Format("2006-01-02T15:04:05.000000")
		}
	case iceberg.TimestampTzType:
		if n, ok := micros(v); ok {
			return time.UnixMicro(n).UTC().Format("2006-01-02T15:04:05.000000") + "+00:00"
		}
	case iceberg.TimestampNsType:
		if n, ok := micros(v); ok {
			return time.Unix(0, n).UTC().Format("2006-01-02T15:04:05.000000000")
		}
	case iceberg.TimestampTzNsType:
		if n, ok := micros(v); ok {
			return time.Unix(0, n).UTC().Format("2006-01-02T15:04:05.000000000") + "+00:00"
		}
	}
	switch x := v.(type) {
	case iceberg.Decimal:
		return x.String()
	case uuid.UUID:
		return x.String()
	case []byte:
		return strings.ToUpper(hex.EncodeToString(x))
	}
	return v
}

// typeOfValue is the Iceberg type a typed Go value implies (nil when the
// value's type says nothing beyond its JSON form).
func typeOfValue(v any) iceberg.Type {
	switch v.(type) {
	case iceberg.Date:
		return iceberg.PrimitiveTypes.Date
	case iceberg.Time:
		return iceberg.PrimitiveTypes.Time
	case iceberg.Timestamp:
		return iceberg.PrimitiveTypes.Timestamp
	case iceberg.TimestampNano:
		return iceberg.PrimitiveTypes.TimestampNs
	}
	return nil
}

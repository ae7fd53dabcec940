package validation

import "github.com/apache/iceberg-go"

// leafHolds reports whether Parquet leaf n holds Iceberg type t as the
// spec's Parquet type mapping writes it. Tolerated differences between
// writers: INT(8|16|32, signed) or INT(8|16, unsigned) for int (every
// value fits) and INT(64, signed) for long (pyarrow's ints); TIME's UTC flag (pyarrow sets it); a TIMESTAMP
// from a legacy converted type (no UTC flag of its own) for both
// timestamp and timestamptz; a UUID without the UUID annotation; ENUM
// and JSON (UTF-8 by the Parquet spec, parquet-avro writes enums so) for
// string, BSON for binary, as Iceberg's Java reader maps them. Refused: INT96 and
// MILLIS timestamps (the catalog's stats and readers take INT64
// micros or nanos), INT(32|64, unsigned) (values past the signed range), strings without a STRING annotation,
// binary with one. Types the check does not know (variant, geometry,
// geography, unknown) are accepted as they are.
func leafHolds(t iceberg.PrimitiveType, n *FileNode) bool {
	l := n.Logical
	switch tt := t.(type) {
	case iceberg.BooleanType:
		return n.Physical == "BOOLEAN" && l.Type == ""
	case iceberg.Int32Type:
		return n.Physical == "INT32" && (l.Type == "" || (l.Type == "INT" && (l.Signed && l.BitWidth <= 32 || !l.Signed && l.BitWidth <= 16)))
	case iceberg.Int64Type:
		return n.Physical == "INT64" && (l.Type == "" || (l.Type == "INT" && l.Signed && l.BitWidth == 64))
	case iceberg.Float32Type:
		return n.Physical == "FLOAT" && l.Type == ""
	case iceberg.Float64Type:
		return n.Physical == "DOUBLE" && l.Type == ""
	case iceberg.DateType:
		return n.Physical == "INT32" && l.Type == "DATE"
	case iceberg.TimeType:
		return n.Physical == "INT64" && l.Type == "TIME" && l.Unit == "MICROS"
	case iceberg.TimestampType:
		return timestampHolds(n, "MICROS", false)
	case iceberg.TimestampTzType:
		return timestampHolds(n, "MICROS", true)
	case iceberg.TimestampNsType:
		return timestampHolds(n, "NANOS", false)
	case iceberg.TimestampTzNsType:
		return timestampHolds(n, "NANOS", true)
	case iceberg.StringType:
		return n.Physical == "BYTE_ARRAY" && (l.Type == "STRING" || l.Type == "ENUM" || l.Type == "JSON")
	case iceberg.BinaryType:
		return n.Physical == "BYTE_ARRAY" && (l.Type == "" || l.Type == "BSON")
	case iceberg.UUIDType:
		return n.Physical == "FIXED_LEN_BYTE_ARRAY" && n.TypeLength == 16 && (l.Type == "" || l.Type == "UUID")
	case iceberg.FixedType:
		return n.Physical == "FIXED_LEN_BYTE_ARRAY" && n.TypeLength == tt.Len() && l.Type == ""
	case iceberg.DecimalType:
		return decimalHolds(tt, n)
	}
	return true
}

func timestampHolds(n *FileNode, unit string, utc bool) bool {
	l := n.Logical
	return n.Physical == "INT64" && l.Type == "TIMESTAMP" && l.Unit == unit && (l.FromConverted || l.UTC == utc)
}

// decimalHolds: a DECIMAL annotation of t's precision and scale on a
// physical type wide enough for it (INT32 up to 9 digits, INT64 up to 18,
// or a byte array).
func decimalHolds(t iceberg.DecimalType, n *FileNode) bool {
	l := n.Logical
	if l.Type != "DECIMAL" || l.Precision != t.Precision() || l.Scale != t.Scale() {
		return false
	}
	switch n.Physical {
	case "INT32":
		return t.Precision() <= 9
	case "INT64":
		return t.Precision() <= 18
	case "FIXED_LEN_BYTE_ARRAY", "BYTE_ARRAY":
		return true
	}
	return false
}

// promotes reports whether the spec lets a field of type from be read as
// type to: int→long, float→double, decimal(P,S)→decimal(P',S) with P<P',
// and (format v3 on) date→timestamp or timestamp_ns, not to the tz types.
func promotes(from, to iceberg.PrimitiveType) bool {
	switch f := from.(type) {
	case iceberg.DateType:
		switch to.(type) {
		case iceberg.TimestampType, iceberg.TimestampNsType:
			return true
		}
		return false
	case iceberg.Int32Type:
		_, ok := to.(iceberg.Int64Type)
		return ok
	case iceberg.Float32Type:
		_, ok := to.(iceberg.Float64Type)
		return ok
	case iceberg.DecimalType:
		d, ok := to.(iceberg.DecimalType)
		return ok && d.Scale() == f.Scale() && d.Precision() > f.Precision()
	}
	return false
}

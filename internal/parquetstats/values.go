package parquetstats

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/lakehold/catalog/v4manifest"
)

// JSONValue decodes an Iceberg single-value JSON literal (numbers, date
// and timestamp strings, uuid strings, decimal strings) into the Go value
// v4manifest stores for type t; nil for an absent or null literal. It
// returns an error when the literal does not fit t or t is not supported.
func JSONValue(t iceberg.Type, raw json.RawMessage) (any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	isString := json.Unmarshal(raw, &s) == nil
	num := func() (json.Number, error) {
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return "", fmt.Errorf("want a number, got %s", raw)
		}
		return n, nil
	}
	switch tt := t.(type) {
	case iceberg.BooleanType:
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("want a boolean, got %s", raw)
		}
		return b, nil
	case iceberg.Int32Type:
		n, err := num()
		if err != nil {
			return nil, err
		}
		v, err := strconv.ParseInt(n.String(), 10, 32)
		return int32(v), err
	case iceberg.Int64Type:
		n, err := num()
		if err != nil {
			return nil, err
		}
		return strconv.ParseInt(n.String(), 10, 64)
	case iceberg.Float32Type:
		n, err := num()
		if err != nil {
			return nil, err
		}
		v, err := strconv.ParseFloat(n.String(), 32)
		return float32(v), err
	case iceberg.Float64Type:
		n, err := num()
		if err != nil {
			return nil, err
		}
		return strconv.ParseFloat(n.String(), 64)
	case iceberg.StringType:
		if !isString {
			return nil, fmt.Errorf("want a string, got %s", raw)
		}
		return s, nil
	case iceberg.DateType:
		if isString {
			d, err := time.Parse("2006-01-02", s)
			if err != nil {
				return nil, err
			}
			return iceberg.Date(d.Unix() / 86400), nil
		}
		n, err := num()
		if err != nil {
			return nil, err
		}
		v, err := strconv.ParseInt(n.String(), 10, 32)
		return iceberg.Date(v), err
	case iceberg.TimestampType, iceberg.TimestampTzType:
		if isString {
			ts, err := time.Parse("2006-01-02T15:04:05.999999999Z07:00", s)
			if err != nil {
				if ts, err = time.Parse("2006-01-02T15:04:05.999999999", s); err != nil {
					return nil, err
				}
			}
			return iceberg.Timestamp(ts.UnixMicro()), nil
		}
		n, err := num()
		if err != nil {
			return nil, err
		}
		v, err := strconv.ParseInt(n.String(), 10, 64)
		return iceberg.Timestamp(v), err
	case iceberg.UUIDType:
		if !isString {
			return nil, fmt.Errorf("want a uuid string, got %s", raw)
		}
		return uuid.Parse(s)
	case iceberg.DecimalType:
		if !isString {
			n, err := num()
			if err != nil {
				return nil, err
			}
			s = n.String()
		}
		v, err := decimal128.FromString(s, int32(tt.Precision()), int32(tt.Scale()))
		if err != nil {
			return nil, err
		}
		return iceberg.Decimal{Val: v, Scale: tt.Scale()}, nil
	}
	return nil, fmt.Errorf("values of type %s are not supported here", t)
}

// statsInput is the wire form of one field's stats in content-stats.
type statsInput struct {
	LowerBound     json.RawMessage `json:"lower-bound"`
	UpperBound     json.RawMessage `json:"upper-bound"`
	TightBounds    *bool           `json:"tight-bounds"`
	ValueCount     *int64          `json:"value-count"`
	NullValueCount *int64          `json:"null-value-count"`
	NaNValueCount  *int64          `json:"nan-value-count"`
}

// ParseContentStats decodes content-stats, an object keyed by field id,
// typing the bounds by schema sc. It returns an error for a key that is not
// a field of sc, a negative count, more nulls than values, or a bound that
// does not fit its field's type.
func ParseContentStats(sc *iceberg.Schema, raw json.RawMessage) (map[int]*v4manifest.FieldStats, error) {
	var in map[string]statsInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("content-stats: %w", err)
	}
	out := map[int]*v4manifest.FieldStats{}
	for k, st := range in {
		id, err := strconv.Atoi(k)
		if err != nil {
			return nil, fmt.Errorf("content-stats key %q is not a field id", k)
		}
		f, ok := sc.FindFieldByID(id)
		if !ok {
			return nil, fmt.Errorf("content-stats: field %d is not in the schema", id)
		}
		for _, c := range []*int64{st.ValueCount, st.NullValueCount, st.NaNValueCount} {
			if c != nil && *c < 0 {
				return nil, fmt.Errorf("content-stats %d: counts cannot be negative", id)
			}
		}
		if st.ValueCount != nil && st.NullValueCount != nil && *st.NullValueCount > *st.ValueCount {
			return nil, fmt.Errorf("content-stats %d: null-value-count exceeds value-count", id)
		}
		fs := &v4manifest.FieldStats{TightBounds: st.TightBounds, ValueCount: st.ValueCount, NullValueCount: st.NullValueCount, NaNValueCount: st.NaNValueCount}
		if fs.LowerBound, err = JSONValue(f.Type, st.LowerBound); err != nil {
			return nil, fmt.Errorf("content-stats %d lower-bound: %w", id, err)
		}
		if fs.UpperBound, err = JSONValue(f.Type, st.UpperBound); err != nil {
			return nil, fmt.Errorf("content-stats %d upper-bound: %w", id, err)
		}
		out[id] = fs
	}
	return out, nil
}

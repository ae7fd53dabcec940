package parquetstats

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
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
// typing the bounds by schema sc; recordCount (when positive) bounds the
// value counts. Every refusal is a *validation.Error: a key that is not a
// field of sc (validation.ReasonContentStatsUnknownField), a field that
// cannot carry stats (struct, list, map, inside a list or map, or a type
// without a stats column: ReasonContentStatsNotPrimitive), or malformed
// stats (ReasonInvalidContentStats: not an object, bad counts, a bound
// that does not decode for its type, lower above upper).
func ParseContentStats(sc *iceberg.Schema, raw json.RawMessage, recordCount int64) (map[int]*v4manifest.FieldStats, error) {
	var in map[string]statsInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, validation.InvalidStats(0, "want an object of per-field objects keyed by field id (%s)", jsonProblem(err))
	}
	withColumn, err := statsColumns(sc)
	if err != nil {
		return nil, err
	}
	out := map[int]*v4manifest.FieldStats{}
	for k, st := range in {
		id, err := strconv.Atoi(k)
		if err != nil || strconv.Itoa(id) != k {
			return nil, validation.InvalidStats(0, "key %q is not a field id", k)
		}
		if err := validation.CheckStatsField(sc, id, withColumn[id]); err != nil {
			return nil, err
		}
		f, _ := sc.FindFieldByID(id)
		if err := validation.CheckStatsCounts(id, f.Type, validation.StatsCounts{Value: st.ValueCount, Null: st.NullValueCount, NaN: st.NaNValueCount}, recordCount); err != nil {
			return nil, err
		}
		fs := &v4manifest.FieldStats{TightBounds: st.TightBounds, ValueCount: st.ValueCount, NullValueCount: st.NullValueCount, NaNValueCount: st.NaNValueCount}
		if fs.LowerBound, err = JSONValue(f.Type, st.LowerBound); err != nil {
			return nil, validation.InvalidStats(id, "field %d lower-bound: %v", id, err)
		}
		if fs.UpperBound, err = JSONValue(f.Type, st.UpperBound); err != nil {
			return nil, validation.InvalidStats(id, "field %d upper-bound: %v", id, err)
		}
		if fs.LowerBound != nil && fs.UpperBound != nil {
			if c, err := Compare(fs.LowerBound, fs.UpperBound); err == nil && c > 0 {
				return nil, validation.InvalidStats(id, "field %d: lower-bound is above upper-bound", id)
			}
		}
		out[id] = fs
	}
	return out, nil
}

// statsColumns is the set of field ids of sc that v4 manifests keep stats
// for, read from the manifest schema itself so the two cannot disagree.
func statsColumns(sc *iceberg.Schema) (map[int]bool, error) {
	as, err := v4manifest.ArrowSchema(sc, nil, false)
	if err != nil {
		return nil, validation.InvalidStats(0, "the table schema has no manifest form: %v", err)
	}
	out := map[int]bool{}
	idx := as.FieldIndices("content_stats")
	if len(idx) == 0 {
		return out, nil
	}
	st, ok := as.Field(idx[0]).Type.(*arrow.StructType)
	if !ok {
		return out, nil
	}
	for _, f := range st.Fields() {
		v, ok := f.Metadata.GetValue("PARQUET:field_id")
		if !ok {
			continue
		}
		base, err := strconv.Atoi(v)
		if err != nil {
			continue
		}
		if fid, ok := v4manifest.FieldForStatsBase(base); ok {
			out[fid] = true
		}
	}
	return out, nil
}

// jsonProblem describes a JSON decoding error without echoing the input.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("%s must be a %s, not a %s", te.Field, te.Type, te.Value)
		}
		return fmt.Sprintf("got a %s", te.Value)
	}
	return "not valid JSON"
}

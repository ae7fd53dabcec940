package v4manifest

import (
	"bytes"
	"cmp"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// AggregateStats combines the content stats of a leaf's live rows into the
// stats of the root row that references the leaf. Per field: the smallest
// lower and largest upper bound, summed counts, and a value-count-weighted
// average size. A metric becomes unknown (nil) as soon as one live row lacks
// it, so the aggregate never claims more than the rows do. Bounds stay tight
// only when every row's were.
func AggregateStats(rows []TrackedFile) (map[int]*FieldStats, error) {
	live := make([]*TrackedFile, 0, len(rows))
	for i := range rows {
		if rows[i].Tracking.Status.Live() {
			live = append(live, &rows[i])
		}
	}
	if len(live) == 0 {
		return nil, nil
	}
	fields := map[int]bool{}
	for _, r := range live {
		for f := range r.ContentStats {
			fields[f] = true
		}
	}
	out := map[int]*FieldStats{}
	for f := range fields {
		agg := &FieldStats{}
		first := true
		lowerOK, upperOK, tight := true, true, true
		var counts [3]*int64 // value, null, nan
		var sizeWeighted, sizeCount int64
		sizeOK := true
		for _, r := range live {
			fs := r.ContentStats[f]
			if fs == nil {
				fs = &FieldStats{}
			}
			if fs.LowerBound == nil {
				lowerOK = false
			} else if lowerOK && (first || mustLess(fs.LowerBound, agg.LowerBound)) {
				agg.LowerBound = fs.LowerBound
			}
			if fs.UpperBound == nil {
				upperOK = false
			} else if upperOK && (first || mustLess(agg.UpperBound, fs.UpperBound)) {
				agg.UpperBound = fs.UpperBound
			}
			if fs.TightBounds == nil || !*fs.TightBounds {
				tight = false
			}
			for i, v := range []*int64{fs.ValueCount, fs.NullValueCount, fs.NaNValueCount} {
				switch {
				case v == nil:
					counts[i] = ptr(int64(-1))
				case first:
					counts[i] = ptr(*v)
				case *counts[i] >= 0:
					*counts[i] += *v
				}
			}
			if fs.AvgValueSizeInBytes == nil || fs.ValueCount == nil {
				sizeOK = false
			} else {
				sizeWeighted += int64(*fs.AvgValueSizeInBytes) * *fs.ValueCount
				sizeCount += *fs.ValueCount
			}
			first = false
		}
		if !lowerOK {
			agg.LowerBound = nil
		}
		if !upperOK {
			agg.UpperBound = nil
		}
		if agg.LowerBound != nil && agg.UpperBound != nil {
			agg.TightBounds = ptr(tight)
		}
		known := func(p *int64) *int64 {
			if p == nil || *p < 0 {
				return nil
			}
			return p
		}
		agg.ValueCount, agg.NullValueCount, agg.NaNValueCount = known(counts[0]), known(counts[1]), known(counts[2])
		if sizeOK && sizeCount > 0 {
			agg.AvgValueSizeInBytes = ptr(int32(sizeWeighted / sizeCount))
		}
		out[f] = agg
	}
	return out, nil
}

func mustLess(a, b any) bool {
	c, err := CompareValues(a, b)
	if err != nil {
		panic(err) // values of one field always share a type
	}
	return c < 0
}

// CompareValues orders two bound values of the same Iceberg type; it fails
// for unsupported types and panics when the two types differ.
func CompareValues(a, b any) (int, error) {
	switch x := a.(type) {
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0, nil
		case !x:
			return -1, nil
		}
		return 1, nil
	case int32:
		return cmp.Compare(x, b.(int32)), nil
	case int64:
		return cmp.Compare(x, b.(int64)), nil
	case float32:
		return cmp.Compare(x, b.(float32)), nil
	case float64:
		return cmp.Compare(x, b.(float64)), nil
	case string:
		return cmp.Compare(x, b.(string)), nil
	case []byte:
		return bytes.Compare(x, b.([]byte)), nil
	case iceberg.Date:
		return cmp.Compare(x, b.(iceberg.Date)), nil
	case iceberg.Time:
		return cmp.Compare(x, b.(iceberg.Time)), nil
	case iceberg.Timestamp:
		return cmp.Compare(x, b.(iceberg.Timestamp)), nil
	case iceberg.TimestampNano:
		return cmp.Compare(x, b.(iceberg.TimestampNano)), nil
	case uuid.UUID:
		y := b.(uuid.UUID)
		return bytes.Compare(x[:], y[:]), nil
	case iceberg.Decimal:
		return x.Val.Cmp(b.(iceberg.Decimal).Val), nil
	}
	return 0, fmt.Errorf("cannot compare %T", a)
}

package v4manifest

import (
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStatsShapesRoundTrip writes one row per stats shape (each metric
// alone, extremes of each bound type, NaN counts, no stats, empty stats)
// and expects each read back as written, alone and among the others.
func TestStatsShapesRoundTrip(t *testing.T) {
	sc := allTypesSchema()
	opts := WriterOptions{Content: ContentDataLeaf, Schema: sc, Specs: twoSpecs(t, sc), BatchRows: 3}
	shapes := map[string]map[int]*FieldStats{
		"none":         nil,
		"lower only":   {3: {LowerBound: int64(math.MinInt64)}},
		"upper only":   {2: {UpperBound: int32(math.MaxInt32)}},
		"tight false":  {1: {LowerBound: false, UpperBound: false, TightBounds: ptr(false)}},
		"counts only":  {5: {ValueCount: ptr(int64(0)), NullValueCount: ptr(int64(math.MaxInt64)), NaNValueCount: ptr(int64(1))}},
		"nan only":     {4: {NaNValueCount: ptr(int64(7))}},
		"float edges":  {4: {LowerBound: float32(math.Inf(-1)), UpperBound: float32(math.MaxFloat32)}, 5: {LowerBound: -math.MaxFloat64, UpperBound: math.Inf(1)}},
		"avg size":     {13: {AvgValueSizeInBytes: ptr(int32(math.MaxInt32))}, 16: {AvgValueSizeInBytes: ptr(int32(0))}},
		"empty string": {13: {LowerBound: "", UpperBound: "\U0010FFFF"}},
		"all fields":   fullStats(),
		"every field empty": func() map[int]*FieldStats {
			m := map[int]*FieldStats{}
			for id := range fullStats() {
				m[id] = &FieldStats{}
			}
			return m
		}(),
	}
	var rows []TrackedFile
	var names []string
	for name, st := range shapes {
		r := sampleRows()[1]
		r.Location += "-" + name
		r.ContentStats = st
		rows = append(rows, r)
		names = append(names, name)
	}
	got := readAll(t, writeAll(t, opts, rows), ReaderOptions{})
	require.Len(t, got, len(rows))
	for i, r := range rows {
		alone := readAll(t, writeAll(t, opts, []TrackedFile{r}), ReaderOptions{})
		require.Equal(t, r, alone[0], "%s alone", names[i])
		require.Equal(t, r, got[i], "%s among others", names[i])
	}
}

// TestDecodedStatsDoNotAlias changes every value a read row's stats point
// to and expects no other field's or row's stats to change: the reader
// takes them from shared slabs.
func TestDecodedStatsDoNotAlias(t *testing.T) {
	sc := allTypesSchema()
	rows := []TrackedFile{sampleRows()[0], sampleRows()[0]}
	rows[1].Location += "-2"
	data := writeAll(t, WriterOptions{Content: ContentDataLeaf, Schema: sc, Specs: twoSpecs(t, sc)}, rows)
	got := readAll(t, data, ReaderOptions{})
	want := readAll(t, data, ReaderOptions{})
	for _, id := range slices.Sorted(maps.Keys(got[0].ContentStats)) {
		fs := got[0].ContentStats[id]
		for _, p := range []*int64{fs.ValueCount, fs.NullValueCount, fs.NaNValueCount} {
			if p != nil {
				*p = -42
			}
		}
		if fs.TightBounds != nil {
			*fs.TightBounds = !*fs.TightBounds
		}
		if fs.AvgValueSizeInBytes != nil {
			*fs.AvgValueSizeInBytes = -42
		}
		require.Equal(t, want[1], got[1], "field %d's change reached the next row", id)
		for other, ofs := range got[0].ContentStats {
			if other > id {
				require.Equal(t, want[0].ContentStats[other], ofs, "field %d's change reached field %d", id, other)
			}
		}
	}
}

package v4manifest

import (
	"bytes"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"
)

// encodings maps each column path of a manifest to its encodings in the
// first row group.
func encodings(t *testing.T, data []byte) map[string][]parquet.Encoding {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	require.NoError(t, err)
	defer rdr.Close()
	rg := rdr.MetaData().RowGroup(0)
	out := map[string][]parquet.Encoding{}
	for i := 0; i < rg.NumColumns(); i++ {
		cc, err := rg.ColumnChunk(i)
		require.NoError(t, err)
		out[cc.PathInSchema().String()] = cc.Encodings()
	}
	return out
}

// TestLongStatsDeltaEncodedRoundTrip: long bounds and counts are written
// DELTA_BINARY_PACKED; the extremes of int64 (whose differences overflow)
// and nulls between them read back exactly.
func TestLongStatsDeltaEncodedRoundTrip(t *testing.T) {
	sc := allTypesSchema()
	extremes := []int64{math.MinInt64, math.MaxInt64, 0, -1, math.MaxInt64, math.MinInt64, 1, math.MinInt64 + 1}
	var rows []TrackedFile
	for i := 0; i < 700; i++ {
		r := sampleRows()[0]
		r.Location = r.Location + string(rune('a'+i%26))
		lo, hi := extremes[i%len(extremes)], extremes[(i+3)%len(extremes)]
		fs := bounds(lo, hi)
		fs.ValueCount = ptr(extremes[(i+1)%len(extremes)])
		if i%3 == 0 {
			fs.NullValueCount, fs.LowerBound = nil, nil
		}
		r.ContentStats[3] = fs
		rows = append(rows, r)
	}
	data := writeAll(t, WriterOptions{Content: ContentDataLeaf, Schema: sc, Specs: twoSpecs(t, sc), BatchRows: 300}, rows)
	got := readAll(t, data, ReaderOptions{})
	require.Len(t, got, len(rows))
	for i := range rows {
		require.Equal(t, rows[i], got[i], "row %d", i)
	}
	enc := encodings(t, data)
	require.Contains(t, enc["content_stats.l.lower_bound"], parquet.Encodings.DeltaBinaryPacked)
	require.Contains(t, enc["content_stats.l.value_count"], parquet.Encodings.DeltaBinaryPacked)
	require.NotContains(t, enc["content_stats.i.lower_bound"], parquet.Encodings.DeltaBinaryPacked, "int bounds stay plain")
	require.NotContains(t, enc["record_count"], parquet.Encodings.DeltaBinaryPacked, "only content_stats")
}

// TestStatsColumnNamesThatCollide: a field "a_b" beside a nested a.b gives
// two stats columns of one name; the writer must still write (encodings are
// set by path, and a shared path keeps the default).
func TestStatsColumnNamesThatCollide(t *testing.T) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "a_b", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "a", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 3, Name: "b", Type: iceberg.PrimitiveTypes.String},
		}}},
	)
	row := TrackedFile{Tracking: Tracking{Status: StatusAdded}, ContentType: ContentData, FormatVersion: 4, Location: "x", FileFormat: "parquet",
		ContentStats: map[int]*FieldStats{1: bounds(int64(1), int64(2)), 3: {LowerBound: "p", UpperBound: "q"}}}
	data := writeAll(t, WriterOptions{Content: ContentDataLeaf, Schema: sc}, []TrackedFile{row})
	enc := encodings(t, data)
	require.Contains(t, enc, "content_stats.a_b.lower_bound")
	require.NotContains(t, enc["content_stats.a_b.lower_bound"], parquet.Encodings.DeltaBinaryPacked)
}

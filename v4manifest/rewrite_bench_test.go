package v4manifest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/apache/iceberg-go"
)

// scoreSchema is the shape of the column-update benchmark's table
// (scripts/bench-column-updates): a long id, 80 doubles, 10 ints and 9
// strings, all with stats.
func scoreSchema() *iceberg.Schema {
	fields := []iceberg.NestedField{{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64}}
	for i := 0; i < 80; i++ {
		fields = append(fields, iceberg.NestedField{ID: len(fields) + 1, Name: fmt.Sprintf("d%02d", i), Type: iceberg.PrimitiveTypes.Float64})
	}
	for i := 0; i < 10; i++ {
		fields = append(fields, iceberg.NestedField{ID: len(fields) + 1, Name: fmt.Sprintf("i%02d", i), Type: iceberg.PrimitiveTypes.Int32})
	}
	for i := 0; i < 9; i++ {
		fields = append(fields, iceberg.NestedField{ID: len(fields) + 1, Name: fmt.Sprintf("s%02d", i), Type: iceberg.PrimitiveTypes.String})
	}
	return iceberg.NewSchema(0, fields...)
}

// scoreRow is data row i of a scoreSchema leaf, with stats for every field.
func scoreRow(i int) TrackedFile {
	stats := make(map[int]*FieldStats, 100)
	stats[1] = &FieldStats{LowerBound: int64(i * 40000), UpperBound: int64(i*40000 + 39999), ValueCount: ptr(int64(40000)), NullValueCount: ptr(int64(0)), TightBounds: ptr(true)}
	for f := 2; f <= 81; f++ {
		stats[f] = &FieldStats{LowerBound: -float64(f) - float64(i)/7, UpperBound: float64(f) + float64(i)/3, ValueCount: ptr(int64(40000)), NullValueCount: ptr(int64(0)), NaNValueCount: ptr(int64(0))}
	}
	for f := 82; f <= 91; f++ {
		stats[f] = &FieldStats{LowerBound: int32(i), UpperBound: int32(999_000 + f), ValueCount: ptr(int64(40000)), NullValueCount: ptr(int64(0)), TightBounds: ptr(false)}
	}
	for f := 92; f <= 100; f++ {
		stats[f] = &FieldStats{LowerBound: fmt.Sprintf("label%d-0", f), UpperBound: fmt.Sprintf("label%d-4999", f), ValueCount: ptr(int64(40000)), NullValueCount: ptr(int64(0)), AvgValueSizeInBytes: ptr(int32(11))}
	}
	return TrackedFile{
		Tracking:    Tracking{Status: StatusAdded, SnapshotID: ptr(int64(7)), SequenceNumber: ptr(int64(1)), FileSequenceNumber: ptr(int64(1)), FirstRowID: ptr(int64(i) * 40000)},
		ContentType: ContentData, FormatVersion: 4, Location: fmt.Sprintf("data/%08d.parquet", i), FileFormat: "parquet",
		RecordCount: 40000, FileSizeInBytes: 30 << 20, ContentStats: stats,
	}
}

func scoreLeaf(tb testing.TB, n int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{Content: ContentDataLeaf, Schema: scoreSchema()})
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < n; i++ {
		r := scoreRow(i)
		if err := w.Write(&r); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkScoreParts times the parts of a column commit's leaf work on a
// 100-column table's leaf of 10 rows: reading it (all, narrow, no stats)
// and writing 20 rows.
func BenchmarkScoreParts(b *testing.B) {
	sc := scoreSchema()
	data := scoreLeaf(b, 10)
	b.Logf("leaf of 10: %d bytes", len(data))
	read := func(b *testing.B, opts ReaderOptions) {
		for n := 0; n < b.N; n++ {
			r, err := NewReader(bytes.NewReader(data), opts)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.All(context.Background()); err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
	}
	b.Run("read-all", func(b *testing.B) { read(b, ReaderOptions{}) })
	b.Run("read-nostats", func(b *testing.B) { read(b, ReaderOptions{StatsFields: []int{}}) })
	b.Run("read-narrow", func(b *testing.B) { read(b, ReaderOptions{Columns: []int{IDLocation, IDTracking}}) })
	rows := make([]TrackedFile, 20)
	for i := range rows {
		rows[i] = scoreRow(i)
	}
	write := func(b *testing.B, rows []TrackedFile) {
		for n := 0; n < b.N; n++ {
			w, err := NewWriter(io.Discard, WriterOptions{Content: ContentDataLeaf, Schema: sc})
			if err != nil {
				b.Fatal(err)
			}
			for i := range rows {
				if err := w.Write(&rows[i]); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("write-20", func(b *testing.B) { write(b, rows) })
	bare := make([]TrackedFile, 20)
	for i := range bare {
		bare[i] = scoreRow(i)
		bare[i].ContentStats = nil
	}
	b.Run("write-20-nostats", func(b *testing.B) { write(b, bare) })
}

// BenchmarkLeafRewrite reads a 100-column table's leaf of N rows in full
// and writes it again with one row changed (its status and one field's
// stats), as a commit that rewrites a leaf does.
func BenchmarkLeafRewrite(b *testing.B) {
	sc := scoreSchema()
	for _, n := range []int{1, 100, 10_000} {
		data := scoreLeaf(b, n)
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for it := 0; it < b.N; it++ {
				r, err := NewReader(bytes.NewReader(data), ReaderOptions{})
				if err != nil {
					b.Fatal(err)
				}
				rows, err := r.All(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				r.Close()
				rows[0].Tracking.Status = StatusModified
				rows[0].ContentStats[2] = &FieldStats{LowerBound: 0.5, UpperBound: 0.75}
				w, err := NewWriter(io.Discard, WriterOptions{Content: ContentDataLeaf, Schema: sc})
				if err != nil {
					b.Fatal(err)
				}
				for i := range rows {
					if err := w.Write(&rows[i]); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}

// BenchmarkWideRead reads a 100-column table's leaf of 10k rows in full.
func BenchmarkWideRead(b *testing.B) {
	data := scoreLeaf(b, 10_000)
	b.ReportAllocs()
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		r, err := NewReader(bytes.NewReader(data), ReaderOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Each(context.Background(), func(*TrackedFile) error { return nil }); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
	b.ReportMetric(float64(b.N*10_000)/b.Elapsed().Seconds(), "entries/s")
}

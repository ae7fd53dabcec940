package v4manifest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/apache/iceberg-go"
)

const benchEntries = 100_000

// wideSchema has 50 long columns, all with stats.
func wideSchema() *iceberg.Schema {
	fields := make([]iceberg.NestedField, 50)
	for i := range fields {
		fields[i] = iceberg.NestedField{ID: i + 1, Name: fmt.Sprintf("c%d", i+1), Type: iceberg.PrimitiveTypes.Int64}
	}
	return iceberg.NewSchema(0, fields...)
}

func wideRow(i int) TrackedFile {
	stats := make(map[int]*FieldStats, 50)
	for f := 1; f <= 50; f++ {
		stats[f] = &FieldStats{LowerBound: int64(i), UpperBound: int64(i + f), ValueCount: ptr(int64(1000)), NullValueCount: ptr(int64(0)), TightBounds: ptr(true)}
	}
	return TrackedFile{
		Tracking:    Tracking{Status: StatusExisting, SnapshotID: ptr(int64(1)), SequenceNumber: ptr(int64(1)), FileSequenceNumber: ptr(int64(1)), FirstRowID: ptr(int64(i) * 1000)},
		ContentType: ContentData, FormatVersion: 4, Location: fmt.Sprintf("data/%08d.parquet", i), FileFormat: "parquet",
		RecordCount: 1000, FileSizeInBytes: 1 << 20, ContentStats: stats,
	}
}

// BenchmarkLeafWrite writes a 100k-entry data leaf with stats for 50
// columns. Reports entries/s and allocated bytes per entry.
func BenchmarkLeafWrite(b *testing.B) {
	sc := wideSchema()
	rows := make([]TrackedFile, 1024)
	for i := range rows {
		rows[i] = wideRow(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		w, err := NewWriter(io.Discard, WriterOptions{Content: ContentDataLeaf, Schema: sc})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < benchEntries; i++ {
			if err := w.Write(&rows[i%len(rows)]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	entries := float64(b.N * benchEntries)
	b.ReportMetric(entries/b.Elapsed().Seconds(), "entries/s")
}

func benchLeaf(b *testing.B) []byte {
	b.Helper()
	sc := wideSchema()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{Content: ContentDataLeaf, Schema: sc})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < benchEntries; i++ {
		r := wideRow(i)
		if err := w.Write(&r); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkLeafRead reads the same leaf: the location+tracking projection
// the commit path uses to find base files, and a full read.
func BenchmarkLeafRead(b *testing.B) {
	data := benchLeaf(b)
	b.Logf("leaf: %d entries, %d bytes (%.1f bytes/entry)", benchEntries, len(data), float64(len(data))/benchEntries)
	for _, c := range []struct {
		name string
		cols []int
	}{{"location+tracking", []int{IDLocation, IDTracking}}, {"all", nil}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				r, err := NewReader(bytes.NewReader(data), ReaderOptions{Columns: c.cols})
				if err != nil {
					b.Fatal(err)
				}
				count := 0
				if err := r.Each(context.Background(), func(*TrackedFile) error { count++; return nil }); err != nil {
					b.Fatal(err)
				}
				r.Close()
				if count != benchEntries {
					b.Fatalf("read %d entries", count)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N*benchEntries)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}

package service_test

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
	"github.com/lakehold/catalog/v4manifest"
)

const (
	benchCols    = 100
	benchRows    = 100_000 // rows per base file
	benchUpdated = 2       // columns updated per commit
)

// writeDoubles writes a Parquet file with the given double columns.
func writeDoubles(tb testing.TB, path string, ids []int, rows int) int64 {
	fields := make([]arrow.Field, len(ids))
	for i, id := range ids {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", id), Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: md(id)}
	}
	sc := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range ids {
		fb := b.Field(i).(*array.Float64Builder)
		for r := 0; r < rows; r++ {
			fb.Append(float64(r*7+i) * 1.000001)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	require.NoError(tb, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(tb, err)
	w, err := pqarrow.NewFileWriter(sc, f, nil, pqarrow.DefaultWriterProps())
	require.NoError(tb, err)
	require.NoError(tb, w.Write(rec))
	require.NoError(tb, w.Close())
	st, err := os.Stat(path)
	require.NoError(tb, err)
	return st.Size()
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// peakHeap samples the heap while fn runs and returns its peak and its
// size when fn started (callers collect garbage first, so the latter is
// what was live before: the benchmark's own data and the caches).
func peakHeap(fn func()) (peakBytes, startBytes uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	startBytes = sample[0].Value.Uint64()
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(done)
	return peak.Load(), startBytes
}

// BenchmarkColumnUpdate commits a 2-of-100-column update of two base files
// (in different leaves) in tables of 1k, 10k and 100k base files (each 100k
// rows, stats for all 100 columns in the manifests). Reported per commit:
// latency, manifest and metadata bytes written, base-file index rows
// written, peak heap (and commit-heap-MB: its growth over the heap before
// the commit, the benchmark's own data and the caches), and the bytes of
// the column-file path (column files + manifests) relative to a
// copy-on-write rewrite of the same base files (base file sizes + the same
// manifests). Run it with -benchtime=100x or more: the root's data rows
// move to a leaf one commit in 32, and shorter runs leave that out. Reported once: the time and
// index rows of the files commit that adds the bases, and the time of a
// column commit that first rebuilds the whole index (a table from before
// the index).
func BenchmarkColumnUpdate(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("bases=%d", n), func(b *testing.B) { benchColumnUpdate(b, n) })
	}
}

// benchTable is a wide v4 table of some base files, with its service.
type benchTable struct {
	svc      *service.Service
	st       *sqlstore.Store
	counted  *indexRowCounter
	dir      string
	id       service.Ident
	bases    int
	baseSize int64
	setup    []float64 // the files commit's seconds, index rows, swap ms
}

var benchColIDs = []int{7, 8}

// newBenchTable creates the table and commits its base files (each 100k
// rows, stats for all columns), measuring that commit.
func newBenchTable(b *testing.B, bases int) *benchTable {
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(b.TempDir(), "c.db"))
	require.NoError(b, err)
	b.Cleanup(st.Close)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	bt := &benchTable{st: st, counted: &indexRowCounter{Store: st}, bases: bases, id: service.Ident{Namespace: []string{"ns"}, Name: "wide"}}
	bt.svc = service.New(bt.counted, storage.NewProvider(), service.Options{Logger: quiet})
	_, err = bt.svc.CreateWarehouse(ctx, "wh", "file://"+b.TempDir(), nil)
	require.NoError(b, err)
	_, err = bt.svc.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
	require.NoError(b, err)
	var fields []string
	all := make([]int, benchCols)
	for id := 1; id <= benchCols; id++ {
		fields = append(fields, fmt.Sprintf(`{"id":%d,"name":"c%d","type":"double","required":false}`, id, id))
		all[id-1] = id
	}
	res, err := bt.svc.Tables().CreateTable(ctx, "wh", []string{"ns"}, service.CreateTableInput{
		Name: "wide", Properties: map[string]string{"format-version": "4"},
		Schema: []byte(`{"type":"struct","schema-id":0,"fields":[` + strings.Join(fields, ",") + `]}`),
	})
	require.NoError(b, err)
	var meta struct {
		Location string `json:"location"`
	}
	require.NoError(b, jsonUnmarshal(res.Metadata, &meta))
	bt.dir = strings.TrimPrefix(meta.Location, "file://")
	// One real base file, for its size.
	bt.baseSize = writeDoubles(b, filepath.Join(bt.dir, "data/real-base.parquet"), all, benchRows)
	stats := func(i int) map[int]*v4manifest.FieldStats {
		m := make(map[int]*v4manifest.FieldStats, benchCols)
		for f := 1; f <= benchCols; f++ {
			m[f] = &v4manifest.FieldStats{LowerBound: float64(i), UpperBound: float64(i + f), ValueCount: ptr(int64(benchRows)), NullValueCount: ptr(int64(0))}
		}
		return m
	}
	adds := make([]service.DataFileInput, bases)
	for i := range adds {
		adds[i] = service.DataFileInput{Location: fmt.Sprintf("data/base-%06d.parquet", i), FileFormat: "parquet",
			RecordCount: benchRows, FileSizeInBytes: bt.baseSize, Stats: stats(i)}
	}
	start := time.Now()
	_, err = bt.svc.CommitFiles(ctx, "wh", service.FilesCommit{Ident: bt.id, AddDataFiles: adds})
	require.NoError(b, err)
	// Reported at the end: ResetTimer drops metrics reported before it.
	bt.setup = []float64{time.Since(start).Seconds(), float64(bt.counted.rows.Swap(0)), float64(bt.counted.swapNs.Swap(0)) / 1e6}
	bt.counted.leaves.Store(0)
	return bt
}

// columnCommit writes a real 2-column file for each of two bases half
// the table apart (two leaves rewritten once the table has more than
// one) and returns the commit of both, and one file's size. Each base
// gets its own file: the catalog refuses one file named twice.
func (bt *benchTable) columnCommit(b *testing.B, i int) (service.ColumnFilesCommit, int64) {
	c := service.ColumnFilesCommit{Ident: bt.id}
	var size int64
	for k, base := range []int{(i * 7919) % bt.bases, (i*7919 + bt.bases/2) % bt.bases} {
		name := fmt.Sprintf("data/cf-%d-%d.parquet", i, k)
		size = writeDoubles(b, filepath.Join(bt.dir, name), benchColIDs, benchRows)
		c.ColumnFiles = append(c.ColumnFiles, service.ColumnFileInput{
			DataFile: fmt.Sprintf("data/base-%06d.parquet", base), Location: name, FileFormat: "parquet",
			FieldIDs: benchColIDs, FileSizeInBytes: size, RecordCount: benchRows})
	}
	return c, size
}

// rebuildCommit reports the time of a column commit on a table whose
// index is gone (as before the index existed): it indexes every leaf.
func (bt *benchTable) rebuildCommit(b *testing.B) {
	ctx := context.Background()
	o, err := bt.st.ObjectGet(ctx, store.ObjectRef{Warehouse: "wh", Namespace: []string{"ns"}, Name: "wide", Kind: store.KindTable})
	require.NoError(b, err)
	require.NoError(b, bt.st.FileIndexForget(ctx, o.ID))
	commit, _ := bt.columnCommit(b, b.N)
	start := time.Now()
	_, err = bt.svc.CommitColumnFiles(ctx, "wh", commit)
	require.NoError(b, err)
	b.ReportMetric(float64(time.Since(start).Milliseconds()), "rebuild-commit-ms")
}

func benchColumnUpdate(b *testing.B, bases int) {
	ctx := context.Background()
	bt := newBenchTable(b, bases)
	runtime.GC()
	var manifestBytes, colBytes int64
	var peak, growth uint64
	var err error
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		commit, size := bt.columnCommit(b, i)
		before := dirSize(filepath.Join(bt.dir, "metadata"))
		runtime.GC()
		b.StartTimer()
		p, start := peakHeap(func() {
			_, err = bt.svc.CommitColumnFiles(ctx, "wh", commit)
		})
		b.StopTimer()
		require.NoError(b, err)
		peak, growth = max(peak, p), max(growth, p-min(p, start))
		manifestBytes += dirSize(filepath.Join(bt.dir, "metadata")) - before
		colBytes += 2 * size
		b.StartTimer()
	}
	b.StopTimer()
	c, n := bt.counted, float64(b.N)
	perOp, col, base := float64(manifestBytes)/n, float64(colBytes)/n, 2*float64(bt.baseSize)
	b.ReportMetric(perOp, "manifest-bytes/op")
	b.ReportMetric(float64(c.rows.Swap(0))/n, "index-file-rows/op")
	b.ReportMetric(float64(c.leaves.Swap(0))/n, "index-leaf-rows/op")
	b.ReportMetric(float64(c.swapNs.Swap(0))/1e6/n, "swap-ms/op")
	b.ReportMetric(float64(c.lookNs.Swap(0))/1e6/n, "index-lookup-ms/op")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(growth)/(1<<20), "commit-heap-MB")
	b.ReportMetric(100*(col+perOp)/(base+perOp), "%-of-cow-bytes")
	b.ReportMetric(100*col/base, "%-colfile-vs-base")
	b.ReportMetric(bt.setup[0], "setup-commit-s")
	b.ReportMetric(bt.setup[1], "setup-index-rows")
	b.ReportMetric(bt.setup[2], "setup-swap-ms")
	bt.rebuildCommit(b)
}

// indexRowCounter counts the base-file index rows (files and leaves)
// written with swaps, and the time spent in swaps and in index lookups.
type indexRowCounter struct {
	store.Store
	rows, leaves   atomic.Int64
	swapNs, lookNs atomic.Int64
}

func (c *indexRowCounter) FileIndexLeaves(ctx context.Context, tableID string, leaves []string) (map[string]string, error) {
	defer c.since(&c.lookNs, time.Now())
	return c.Store.FileIndexLeaves(ctx, tableID, leaves)
}

func (c *indexRowCounter) FileIndexLookup(ctx context.Context, tableID string, locs []string) ([]store.IndexEntry, error) {
	defer c.since(&c.lookNs, time.Now())
	return c.Store.FileIndexLookup(ctx, tableID, locs)
}

func (c *indexRowCounter) since(sum *atomic.Int64, t time.Time) { sum.Add(int64(time.Since(t))) }

func (c *indexRowCounter) ObjectsSwap(ctx context.Context, swaps []store.Swap) error {
	defer c.since(&c.swapNs, time.Now())
	err := c.Store.ObjectsSwap(ctx, swaps)
	if err == nil {
		for _, sw := range swaps {
			c.leaves.Add(int64(len(sw.Index)))
			for _, l := range sw.Index {
				c.rows.Add(int64(len(l.Locations)))
			}
		}
	}
	return err
}

func ptr[T any](v T) *T { return &v }

package v4manifest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"
)

func TestPoolAllocator(t *testing.T) {
	allocators := map[string]func() memory.Allocator{
		"shared": func() memory.Allocator { return &poolAllocator{limit: 8 << 20} },
		"writer": func() memory.Allocator { return &writerAlloc{} },
	}
	for _, poison := range []bool{false, true} {
		poisonFreed.Store(poison)
		t.Cleanup(func() { poisonFreed.Store(false) })
		for name, mk := range allocators {
			for _, size := range []int{0, 1, 63, 64, 65, 1000, 4096, 1<<20 + 3} {
				t.Run(fmt.Sprint(name, size, "poison", poison), func(t *testing.T) { checkAllocator(t, mk(), size) })
			}
		}
	}
	(&poolAllocator{limit: 1 << 20}).Free(make([]byte, 10, 100)) // not one of ours: ignored, no panic
	(&writerAlloc{}).Free(nil)

	// A buffer written past its length (then shrunk) comes back all zero.
	poisonFreed.Store(false)
	wa := &writerAlloc{}
	b := wa.Allocate(1000)
	full := b[:cap(b)]
	for i := range full {
		full[i] = 7
	}
	wa.Free(b[:10])
	again := wa.Allocate(cap(b))
	require.Equal(t, unsafe.SliceData(b), unsafe.SliceData(again))
	require.Equal(t, make([]byte, cap(b)), again)
}

// checkAllocator: buffers are zeroed, aligned, power-of-two sized, keep
// their contents when grown and come back zeroed when recycled.
func checkAllocator(t *testing.T, p memory.Allocator, size int) {
	b := p.Allocate(size)
	require.Len(t, b, size)
	require.GreaterOrEqual(t, cap(b), size)
	require.Zero(t, cap(b)&(cap(b)-1), "capacity is a power of two")
	if size > 0 {
		require.Zero(t, uintptr(unsafe.Pointer(&b[0]))%poolAlign, "64-byte aligned")
	}
	for i := range b {
		b[i] = byte(i) | 1
	}
	grown := p.Reallocate(2*size+1, b)
	require.Len(t, grown, 2*size+1)
	for i := 0; i < size; i++ {
		require.Equal(t, byte(i)|1, grown[i], "contents kept")
	}
	require.Equal(t, make([]byte, size+1), grown[size:], "new bytes are zero")
	p.Free(grown)
	again := p.Allocate(2*size + 1)
	require.Equal(t, make([]byte, 2*size+1), again, "recycled buffers come back zeroed")
	if wa, ok := p.(*writerAlloc); ok {
		require.Equal(t, unsafe.SliceData(grown), unsafe.SliceData(again), "a writer reuses what it freed")
		wa.release()
		p.Free(again) // after release: to the shared pool, not kept
		require.Zero(t, len(wa.free[sizeClass(2*size+1)]))
		return
	}
	p.Free(again)
}

// poisoned makes freed pool buffers garbage for the rest of the test.
func poisoned(t *testing.T) {
	poisonFreed.Store(true)
	t.Cleanup(func() { poisonFreed.Store(false) })
}

// concurrentRows are the rows of writer w: every kind of sample row, each
// with values (location, record count, long and string bounds, partition)
// that belong to w and i alone, so that a buffer shared by mistake between
// writers, or reused while still referenced, shows up as a wrong value.
func concurrentRows(w, n int) []TrackedFile {
	rows := make([]TrackedFile, n)
	for i := range rows {
		r := sampleRows()[i%4]
		r.Location = fmt.Sprintf("s3://b/t/data/w%d-%05d.parquet", w, i)
		r.RecordCount = int64(w*1_000_000 + i)
		if i%7 == 3 {
			r.ContentStats = nil
		} else if r.ContentStats != nil {
			r.ContentStats[3] = bounds(int64(-i), int64(w)<<40|int64(i))
			r.ContentStats[13] = &FieldStats{LowerBound: fmt.Sprintf("w%d", w), UpperBound: fmt.Sprintf("w%d-%d", w, i), AvgValueSizeInBytes: ptr(int32(i))}
		}
		if r.Partition != nil && r.Partition[1000] != nil {
			r.Partition[1000] = int32(w*10_000 + i)
		}
		rows[i] = r
	}
	return rows
}

// TestConcurrentWritersShareThePoolSafely runs several writers at once, as
// the service does, on the shared buffer pool with freed buffers poisoned.
// Batches, row groups and stats chunks are small so that many buffers go
// round the pool. Each manifest must read back entry by entry as written
// and be byte-identical to the same rows written alone. Run it with -race.
func TestConcurrentWritersShareThePoolSafely(t *testing.T) {
	poisoned(t)
	sc := allTypesSchema()
	opts := WriterOptions{Content: ContentDataLeaf, Schema: sc, Specs: twoSpecs(t, sc), BatchRows: statsChunk + 300, RowGroupRows: 1500}
	const writers, n = 4, 2500
	out := make([][]byte, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			mw, err := NewWriter(&buf, opts)
			if err != nil {
				errs[w] = err
				return
			}
			rows := concurrentRows(w, n)
			for i := range rows {
				if err := mw.Write(&rows[i]); err != nil {
					errs[w] = err
					_ = mw.Close()
					return
				}
			}
			errs[w] = mw.Close()
			out[w] = buf.Bytes()
		}()
	}
	wg.Wait()
	for w := range writers {
		require.NoError(t, errs[w], "writer %d", w)
		want := concurrentRows(w, n)
		got := readAll(t, out[w], ReaderOptions{})
		require.Len(t, got, n, "writer %d", w)
		for i := range want {
			require.Equal(t, want[i], got[i], "writer %d row %d", w, i)
		}
		require.True(t, bytes.Equal(writeAll(t, opts, want), out[w]), "writer %d: concurrent output differs from the same rows written alone", w)
	}
}

// TestWriteKeepsNothingOfTheRow reuses one TrackedFile (and its stats) for
// every row, changing it after each Write: what was written must not move.
func TestWriteKeepsNothingOfTheRow(t *testing.T) {
	poisoned(t)
	sc := allTypesSchema()
	opts := WriterOptions{Content: ContentDataLeaf, Schema: sc, Specs: twoSpecs(t, sc), BatchRows: 100}
	want := concurrentRows(0, 1200)
	var buf bytes.Buffer
	mw, err := NewWriter(&buf, opts)
	require.NoError(t, err)
	var tf TrackedFile
	stats := map[int]*FieldStats{}
	for i := range want {
		tf = want[i]
		// Copy the row's stats into the reused map and FieldStats.
		clear(stats)
		for f, fs := range want[i].ContentStats {
			cp := *fs
			stats[f] = &cp
		}
		if want[i].ContentStats != nil {
			tf.ContentStats = stats
		}
		require.NoError(t, mw.Write(&tf))
		for _, fs := range stats {
			*fs = FieldStats{LowerBound: iceberg.Date(1)} // wrong type and value
		}
	}
	require.NoError(t, mw.Close())
	got := readAll(t, buf.Bytes(), ReaderOptions{})
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i], got[i], "row %d", i)
	}
}

// TestReadRowsOutliveTheirReader reads several manifests, then checks every
// row: a row must own its values (strings, bytes, bounds), not point into
// a reader buffer that a later read recycles.
func TestReadRowsOutliveTheirReader(t *testing.T) {
	poisoned(t)
	sc := allTypesSchema()
	opts := WriterOptions{Content: ContentDataLeaf, Schema: sc, Specs: twoSpecs(t, sc), RowGroupRows: 700}
	const files, n = 3, 1500
	got := make([][]TrackedFile, files)
	for w := range files {
		got[w] = readAll(t, writeAll(t, opts, concurrentRows(w, n)), ReaderOptions{})
	}
	for w := range files {
		want := concurrentRows(w, n)
		require.Len(t, got[w], n)
		for i := range want {
			require.Equal(t, want[i], got[w][i], "file %d row %d", w, i)
		}
	}
}

package v4manifest

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// poolAllocator is an Arrow allocator that recycles the buffers released to
// it. A manifest writer builds every batch into fresh builder buffers and
// the Parquet encoder allocates its level and page buffers per batch; with
// Go's allocator each batch costs a full set of new, zeroed buffers
// (kilobytes per row for a wide stats column). Recycling them keeps the
// writer's allocation per row near the size of what it writes. Buffers are
// grouped by power-of-two capacity and handed out zeroed and 64-byte
// aligned, as memory.GoAllocator does. Free buffers sit in sync.Pools, so
// writers share them and the garbage collector reclaims them when idle.
// It is safe for concurrent use.
type poolAllocator struct {
	free [64]sync.Pool // of *[]byte, by log2 of capacity
}

// bufferPool is shared by all writers.
var bufferPool = &poolAllocator{}

var _ memory.Allocator = (*poolAllocator)(nil)

const poolAlign = 64

// sizeClass is the log2 of the capacity served for size bytes.
func sizeClass(size int) int {
	if size <= poolAlign {
		return 6
	}
	return bits.Len(uint(size - 1))
}

// Allocate returns a zeroed, 64-byte aligned buffer of size bytes.
func (p *poolAllocator) Allocate(size int) []byte {
	c := sizeClass(size)
	var b []byte
	if bp, _ := p.free[c].Get().(*[]byte); bp != nil {
		b = *bp
	}
	if b == nil {
		raw := make([]byte, 1<<c+poolAlign)
		shift := int(-uintptr(unsafe.Pointer(unsafe.SliceData(raw))) & (poolAlign - 1))
		return raw[shift : shift+size : shift+1<<c]
	}
	b = b[:size]
	clear(b)
	return b
}

// Reallocate grows (or shrinks) b to size bytes, keeping its contents; new
// bytes are zero.
func (p *poolAllocator) Reallocate(size int, b []byte) []byte { return reallocate(p, size, b) }

func reallocate(a memory.Allocator, size int, b []byte) []byte {
	if cap(b) >= size {
		old := len(b)
		b = b[:size]
		if size > old {
			clear(b[old:])
		}
		return b
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// poisonFreed makes Free overwrite every buffer it takes back. Tests set
// it so that anything still reading a buffer after its owner released it
// (a record, builder or Parquet page that outlived its reference) reads
// garbage and fails a read-back comparison instead of passing by luck.
var poisonFreed atomic.Bool

// poison is the byte freed buffers are filled with under poisonFreed.
const poison = 0xA5

// takeBack returns the size class of a freed buffer, or -1 when b is not
// one of the pool's buffers (then it is left to the garbage collector).
func takeBack(b []byte) int {
	c := cap(b)
	if c < poolAlign || c&(c-1) != 0 {
		return -1
	}
	if poisonFreed.Load() {
		full := b[:c]
		for i := range full {
			full[i] = poison
		}
	}
	return bits.Len(uint(c)) - 1
}

// Free keeps b for reuse when it is one of the pool's buffers.
func (p *poolAllocator) Free(b []byte) {
	if c := takeBack(b); c >= 0 {
		b = b[:0]
		p.free[c].Put(&b)
	}
}

// writerAlloc is one writer's allocator. The buffers its writer frees are
// kept for that writer's next batches: the shared pool's sync.Pools are
// emptied by every garbage collection, which a wide leaf triggers several
// times, so a writer relying on them alone regrows its buffers again and
// again. When the writer closes, its buffers go to the shared pool for
// the next writers. Each buffer sits in one place at a time (the mutex
// guards the lists; the writer and its encoding goroutine both use it).
type writerAlloc struct {
	mu     sync.Mutex
	free   [64][][]byte // by log2 of capacity
	closed bool
}

var _ memory.Allocator = (*writerAlloc)(nil)

// Allocate returns a zeroed, 64-byte aligned buffer of size bytes.
func (a *writerAlloc) Allocate(size int) []byte {
	c := sizeClass(size)
	a.mu.Lock()
	if n := len(a.free[c]); n > 0 {
		b := a.free[c][n-1]
		a.free[c][n-1] = nil
		a.free[c] = a.free[c][:n-1]
		a.mu.Unlock()
		b = b[:size]
		clear(b)
		return b
	}
	a.mu.Unlock()
	return bufferPool.Allocate(size)
}

// Reallocate grows (or shrinks) b to size bytes, keeping its contents; new
// bytes are zero.
func (a *writerAlloc) Reallocate(size int, b []byte) []byte { return reallocate(a, size, b) }

// Free keeps b for the writer, or gives it to the shared pool once the
// writer is closed.
func (a *writerAlloc) Free(b []byte) {
	c := takeBack(b)
	if c < 0 {
		return
	}
	a.mu.Lock()
	if !a.closed {
		a.free[c] = append(a.free[c], b[:0])
		a.mu.Unlock()
		return
	}
	a.mu.Unlock()
	b = b[:0]
	bufferPool.free[c].Put(&b)
}

// release hands the kept buffers to the shared pool; buffers freed later
// go there directly.
func (a *writerAlloc) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	for c := range a.free {
		for _, b := range a.free[c] {
			bufferPool.free[c].Put(&b)
		}
		a.free[c] = nil
	}
}

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
// the Parquet encoder allocates its level and page buffers per batch; a
// reader gets a page and an array per column of a wide manifest. With Go's
// allocator each costs a new, zeroed buffer, and a column commit's reads
// alone were tens of megabytes of garbage: collections that took the
// second core from the work. Buffers are grouped by power-of-two capacity
// and handed out zeroed and 64-byte aligned, as memory.GoAllocator does.
// Free buffers are kept up to limit bytes, on lists the garbage collector
// does not empty (a sync.Pool is emptied by every collection, which a wide
// read triggers); beyond it they are left to the collector. It is safe for
// concurrent use.
type poolAllocator struct {
	mu    sync.Mutex
	free  [64][][]byte // by log2 of capacity
	idle  int          // bytes on the free lists
	limit int          // most idle bytes kept
}

// bufferPool is shared by all readers and writers. It keeps up to 64 MiB
// of free buffers: about what two concurrent reads of the widest leaves
// (hundreds of stats columns, 2,048 rows) hold at once.
var bufferPool = &poolAllocator{limit: 64 << 20}

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
	p.mu.Lock()
	if n := len(p.free[c]); n > 0 {
		b = p.free[c][n-1]
		p.free[c][n-1] = nil
		p.free[c] = p.free[c][:n-1]
		p.idle -= cap(b)
	}
	p.mu.Unlock()
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

// Free keeps b for reuse when it is one of the pool's buffers and the
// pool holds less than its limit.
func (p *poolAllocator) Free(b []byte) {
	if c := takeBack(b); c >= 0 {
		p.put(c, b)
	}
}

// put keeps b, of size class c, unless that would pass the limit.
func (p *poolAllocator) put(c int, b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.idle+cap(b) > p.limit {
		return
	}
	p.free[c] = append(p.free[c], b[:0])
	p.idle += cap(b)
}

// writerAlloc is one writer's allocator. The buffers its writer frees are
// kept for that writer's next batches, whatever the shared pool's limit:
// a large leaf would otherwise regrow them again and again while other
// reads and writes fill the pool. When the writer closes, its buffers go
// to the shared pool (up to its limit) for the next readers and writers. Each buffer sits in one place at a time (the mutex
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
	bufferPool.put(c, b)
}

// release hands the kept buffers to the shared pool; buffers freed later
// go there directly.
func (a *writerAlloc) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	for c := range a.free {
		for _, b := range a.free[c] {
			bufferPool.put(c, b)
		}
		a.free[c] = nil
	}
}

package v4manifest

import (
	"math/bits"
	"sync"
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
// aligned, as memory.GoAllocator does. It is safe for concurrent use (the
// writer builds and encodes on two goroutines) and is dropped with its
// writer.
type poolAllocator struct {
	mu   sync.Mutex
	free [64][][]byte // by log2 of capacity
}

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
	p.mu.Lock()
	var b []byte
	if n := len(p.free[c]); n > 0 {
		b = p.free[c][n-1]
		p.free[c] = p.free[c][:n-1]
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
func (p *poolAllocator) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		old := len(b)
		b = b[:size]
		if size > old {
			clear(b[old:])
		}
		return b
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free keeps b for reuse when it is one of the pool's buffers.
func (p *poolAllocator) Free(b []byte) {
	c := cap(b)
	if c < poolAlign || c&(c-1) != 0 {
		return // not one of ours
	}
	class := bits.Len(uint(c)) - 1
	p.mu.Lock()
	p.free[class] = append(p.free[class], b[:0])
	p.mu.Unlock()
}

package tablemeta

import (
	"container/list"
	"errors"
	"sync"

	"github.com/apache/iceberg-go/table"
)

// Bounds of the parsed-metadata cache. A metadata file never changes once
// written, so an entry keyed by its location is correct on every replica
// for as long as it lives; the bounds only cap memory. A parsed document
// costs a few times its JSON size, which the byte bound approximates.
const (
	metaCacheMaxEntries = 1024
	metaCacheMaxBytes   = 256 << 20
	metaCacheOverhead   = 4 // parsed bytes per JSON byte, roughly
)

// Entry is one table metadata file, parsed once: the metadata, its real
// format version, the stored bytes, and where each snapshot lies in them
// (data[from:to] for the i-th snapshot of meta's list) so that the next
// commit can copy them instead of re-encoding.
// Nothing in it is modified after it is cached.
type Entry struct {
	Meta    table.Metadata
	Version int
	Data    []byte
	Spans   [][2]int // nil when the snapshot list could not be located
	NSnaps  int
}

// Size is what the cache counts for e: roughly its parsed size.
func (e *Entry) Size() int64 {
	return int64(len(e.Data))*metaCacheOverhead + 1024
}

// Cache is a bounded LRU of Entry by metadata location. Its zero
// value is ready to use.
type Cache struct {
	mu    sync.Mutex
	order *list.List // front: most recently used; values are *metaCacheItem
	items map[string]*list.Element
	bytes int64
}

type metaCacheItem struct {
	loc string
	e   *Entry
}

// Get returns the entry cached for loc, or nil.
func (c *Cache) Get(loc string) *Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[loc]
	if !ok {
		return nil
	}
	c.order.MoveToFront(el)
	return el.Value.(*metaCacheItem).e
}

// Add caches e under loc, evicting the least recently used entries beyond
// the bounds. An entry larger than the byte bound is not cached.
func (c *Cache) Add(loc string, e *Entry) {
	if e == nil || e.Size() > metaCacheMaxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items == nil {
		c.items, c.order = map[string]*list.Element{}, list.New()
	}
	if el, ok := c.items[loc]; ok {
		c.order.MoveToFront(el)
		return // same location, same immutable file
	}
	c.items[loc] = c.order.PushFront(&metaCacheItem{loc: loc, e: e})
	c.bytes += e.Size()
	for c.order.Len() > metaCacheMaxEntries || c.bytes > metaCacheMaxBytes {
		el := c.order.Back()
		it := el.Value.(*metaCacheItem)
		c.order.Remove(el)
		delete(c.items, it.loc)
		c.bytes -= it.e.Size()
	}
}

// NewEntry parses stored metadata once and locates its snapshots. A
// document whose snapshot list cannot be located still parses: commits on
// it then encode every snapshot.
func NewEntry(data []byte) (*Entry, error) {
	meta, version, err := parseStored(data)
	if err != nil {
		return nil, err
	}
	d := hold(meta)
	e := &Entry{Meta: d, Version: version, Data: data}
	snaps := d.snaps
	e.NSnaps = len(snaps)
	e.Spans = snapshotSpans(data, snaps)
	return e, nil
}

// parseStored is Parse with one decoding of the document for
// formats 1 to 3: iceberg-go reads the format version itself and refuses
// the ones it does not model, and only then is the v4 view built.
func parseStored(data []byte) (table.Metadata, int, error) {
	meta, err := table.ParseMetadataBytes(data)
	if err == nil {
		return meta, meta.Version(), nil
	}
	if !errors.Is(err, table.ErrInvalidMetadataFormatVersion) {
		return nil, 0, err
	}
	return Parse(data)
}

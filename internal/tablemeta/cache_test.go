package tablemeta

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMetaCacheBounds: the cache keeps at most metaCacheMaxEntries entries
// and about metaCacheMaxBytes, evicting the least recently used; a
// document too large for the byte bound is not cached at all.
func TestMetaCacheBounds(t *testing.T) {
	var c Cache
	small := &Entry{Data: make([]byte, 10)}
	for i := 0; i < metaCacheMaxEntries; i++ {
		c.Add(fmt.Sprint(i), small)
	}
	require.Same(t, small, c.Get("0"), "0 becomes the most recently used")
	for i := metaCacheMaxEntries; i < metaCacheMaxEntries+5; i++ {
		c.Add(fmt.Sprint(i), small)
	}
	require.Equal(t, metaCacheMaxEntries, c.order.Len())
	require.NotNil(t, c.Get("0"), "used recently: kept")
	require.Nil(t, c.Get("1"), "least recently used: evicted")
	require.NotNil(t, c.Get(fmt.Sprint(metaCacheMaxEntries+4)))

	third := &Entry{Data: make([]byte, metaCacheMaxBytes/metaCacheOverhead/3)}
	for i := 0; i < 3; i++ {
		c.Add(fmt.Sprint("big", i), third)
	}
	require.LessOrEqual(t, c.bytes, int64(metaCacheMaxBytes))
	require.Nil(t, c.Get("big0"), "the byte bound evicts")
	require.NotNil(t, c.Get("big2"))

	huge := &Entry{Data: make([]byte, metaCacheMaxBytes/metaCacheOverhead+1)}
	c.Add("huge", huge)
	require.Nil(t, c.Get("huge"))
	c.Add("none", nil)
	require.Nil(t, c.Get("none"))
}

package service

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMetaCacheBounds: the cache keeps at most metaCacheMaxEntries entries
// and about metaCacheMaxBytes, evicting the least recently used; a
// document too large for the byte bound is not cached at all.
func TestMetaCacheBounds(t *testing.T) {
	var c metaCache
	small := &metaEntry{data: make([]byte, 10)}
	for i := 0; i < metaCacheMaxEntries; i++ {
		c.add(fmt.Sprint(i), small)
	}
	require.Same(t, small, c.get("0"), "0 becomes the most recently used")
	for i := metaCacheMaxEntries; i < metaCacheMaxEntries+5; i++ {
		c.add(fmt.Sprint(i), small)
	}
	require.Equal(t, metaCacheMaxEntries, c.order.Len())
	require.NotNil(t, c.get("0"), "used recently: kept")
	require.Nil(t, c.get("1"), "least recently used: evicted")
	require.NotNil(t, c.get(fmt.Sprint(metaCacheMaxEntries+4)))

	third := &metaEntry{data: make([]byte, metaCacheMaxBytes/metaCacheOverhead/3)}
	for i := 0; i < 3; i++ {
		c.add(fmt.Sprint("big", i), third)
	}
	require.LessOrEqual(t, c.bytes, int64(metaCacheMaxBytes))
	require.Nil(t, c.get("big0"), "the byte bound evicts")
	require.NotNil(t, c.get("big2"))

	huge := &metaEntry{data: make([]byte, metaCacheMaxBytes/metaCacheOverhead+1)}
	c.add("huge", huge)
	require.Nil(t, c.get("huge"))
	c.add("none", nil)
	require.Nil(t, c.get("none"))
}

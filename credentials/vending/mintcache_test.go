package vending

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMintCache: concurrent requests for one key share one mint, the value
// is reused until its refresh time and minted again after it, a failed
// mint is not cached, and the cache stays within maxMinted.
func TestMintCache(t *testing.T) {
	var c mintCache[int]
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	var mints atomic.Int32
	release := make(chan struct{})
	mint := func() (int, time.Time, error) {
		<-release
		return int(mints.Add(1)), now.Add(time.Minute), nil
	}
	var wg sync.WaitGroup
	got := make([]int, 8)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i], _ = c.get("k", clock, mint) }()
	}
	time.Sleep(50 * time.Millisecond) // let them all wait on the one mint
	close(release)
	wg.Wait()
	require.Equal(t, int32(1), mints.Load())
	require.Equal(t, []int{1, 1, 1, 1, 1, 1, 1, 1}, got)

	v, _ := c.get("k", clock, mint)
	require.Equal(t, 1, v, "reused before the refresh time")
	at, ok := c.refreshAt("k")
	require.True(t, ok)
	require.Equal(t, now.Add(time.Minute), at)
	now = now.Add(time.Minute)
	v, _ = c.get("k", clock, mint)
	require.Equal(t, 2, v, "minted again at the refresh time")

	_, err := c.get("bad", clock, func() (int, time.Time, error) { return 0, time.Time{}, fmt.Errorf("sts refused") })
	require.ErrorContains(t, err, "sts refused")
	_, ok = c.refreshAt("bad")
	require.False(t, ok, "a failed mint is not cached")

	for i := 0; i < maxMinted+100; i++ {
		c.put(fmt.Sprint("x", i), mintedItem[int]{v: i, refreshAt: now.Add(time.Duration(i%2) * time.Hour)}, now)
	}
	require.LessOrEqual(t, len(c.items), maxMinted)
}

package vending

import (
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// maxMinted bounds each vendor's cache: past it, an insert first drops the
// entries due for a refresh, then, if still full, one entry at random.
const maxMinted = 16384

// mintCache keeps what a vendor minted per key (table location, access
// level, profile) until its refresh time, and makes concurrent requests
// for one key share one mint. Its zero value is ready to use.
type mintCache[T any] struct {
	mu    sync.Mutex
	items map[string]mintedItem[T]
	group singleflight.Group
}

type mintedItem[T any] struct {
	v         T
	refreshAt time.Time
}

// get returns the cached value of key while now is before its refresh
// time, else mints one (once for all concurrent callers) and caches it
// until the refresh time mint gives. mint's error is returned as it is.
func (c *mintCache[T]) get(key string, now func() time.Time, mint func() (T, time.Time, error)) (T, error) {
	c.mu.Lock()
	e, ok := c.items[key]
	c.mu.Unlock()
	if ok && now().Before(e.refreshAt) {
		return e.v, nil
	}
	res, err, _ := c.group.Do(key, func() (any, error) {
		v, refreshAt, err := mint()
		if err != nil {
			return nil, err
		}
		c.put(key, mintedItem[T]{v: v, refreshAt: refreshAt}, now())
		return v, nil
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return res.(T), nil
}

// put stores it under key, keeping the cache within maxMinted.
func (c *mintCache[T]) put(key string, it mintedItem[T], now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items == nil {
		c.items = map[string]mintedItem[T]{}
	}
	if _, ok := c.items[key]; !ok && len(c.items) >= maxMinted {
		for k, e := range c.items {
			if !now.Before(e.refreshAt) {
				delete(c.items, k)
			}
		}
		for k := range c.items {
			if len(c.items) < maxMinted {
				break
			}
			delete(c.items, k)
		}
	}
	c.items[key] = it
}

// refreshAt returns when key's cached value is minted again, if cached.
func (c *mintCache[T]) refreshAt(key string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	return e.refreshAt, ok
}

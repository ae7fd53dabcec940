package tableaccess

import (
	"context"
	"errors"
	"time"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/store"
)

// warehouseEntry is a cached warehouse row: rows are read on every commit
// for storage properties and change rarely. Correctness does not depend
// on the cache (it only configures file IO).
type warehouseEntry struct {
	w       *store.Warehouse
	expires time.Time
}

const warehouseCacheTTL = 10 * time.Second

// GetWarehouse reads the named warehouse from the store, uncached: 404
// NoSuchWarehouseException when there is none, the store's error (503 and
// the like) when the read fails.
func (a *Access) GetWarehouse(ctx context.Context, name string) (*store.Warehouse, error) {
	w, err := a.opts.Store.WarehouseGet(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fault.Wrap(fault.NoSuchWarehouse, err, "Warehouse does not exist: %s", name)
	}
	return w, storefault.Of(err, name)
}

// Warehouse returns the named warehouse, from a cache of a few seconds;
// errors as GetWarehouse.
func (a *Access) Warehouse(ctx context.Context, name string) (*store.Warehouse, error) {
	a.whMu.Lock()
	e, ok := a.whEntries[name]
	a.whMu.Unlock()
	if ok && time.Now().Before(e.expires) {
		return e.w, nil
	}
	w, err := a.GetWarehouse(ctx, name)
	if err != nil {
		return nil, err
	}
	a.whMu.Lock()
	if a.whEntries == nil {
		a.whEntries = map[string]warehouseEntry{}
	}
	a.whEntries[name] = warehouseEntry{w: w, expires: time.Now().Add(warehouseCacheTTL)}
	a.whMu.Unlock()
	return w, nil
}

// ForgetWarehouse drops a warehouse from the cache, after its row changed.
func (a *Access) ForgetWarehouse(name string) {
	a.whMu.Lock()
	delete(a.whEntries, name)
	a.whMu.Unlock()
}

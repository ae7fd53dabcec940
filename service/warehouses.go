package service

import (
	"context"

	"github.com/lakehold/catalog/service/warehouses"
)

// Warehouses are created, read and deleted by warehouses.Registry; these
// names and methods keep the service's API whole. The cache of warehouse
// rows (s.ta.Warehouse) stays here: every request reads through it.

// DeleteWarehouse removes a warehouse with no namespaces
// (warehouses.Registry.Delete, which says what is returned when).
func (s *Service) DeleteWarehouse(ctx context.Context, name string) error {
	return s.whs.Delete(ctx, name)
}

// SetStorageProfile validates, seals and stores a warehouse's storage
// profile (warehouses.Registry.SetStorageProfile, which says what is
// returned when).
func (s *Service) SetStorageProfile(ctx context.Context, name string, raw []byte) (any, error) {
	return s.whs.SetStorageProfile(ctx, name, raw)
}

// StorageProfile returns a warehouse's profile without secrets
// (warehouses.Registry.StorageProfile, which says what is returned when).
func (s *Service) StorageProfile(ctx context.Context, name string) (any, error) {
	return s.whs.StorageProfile(ctx, name)
}

// newWarehouses is the service's warehouse registry: a changed profile
// drops the warehouse from s.whCache, so the next request reads it anew.
func (s *Service) newWarehouses() *warehouses.Registry {
	return warehouses.New(warehouses.Deps{Store: s.store, Tables: s.ta, Sealer: s.opts.Sealer})
}

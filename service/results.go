package service

import (
	"context"

	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/v4read"
	"github.com/lakehold/catalog/store"
)

// The service's own result types: callers (the HTTP layer, the CLI) see
// these, never the store's rows or the manifest model.

// Warehouse is a warehouse as callers see it. The storage profile is
// served separately (its secrets never leave the service).
type Warehouse struct {
	Name       string
	Location   string
	Properties map[string]string
}

func warehouseOf(w *store.Warehouse) *Warehouse {
	if w == nil {
		return nil
	}
	return &Warehouse{Name: w.Name, Location: w.Location, Properties: w.Properties}
}

// Namespace is a namespace with its properties.
type Namespace struct {
	Levels     []string
	Properties map[string]string
}

func namespaceOf(ns *store.Namespace) *Namespace {
	if ns == nil {
		return nil
	}
	return &Namespace{Levels: ns.Levels, Properties: ns.Properties}
}

// Page asks for one page of a list: Token from the previous page's next
// token ("" for the first), Size the most entries wanted (0: no limit).
type Page struct {
	Token string
	Size  int
}

func (p Page) store() store.Page { return store.Page{Token: p.Token, Size: p.Size} }

// DeletionVectorRef is the deletion vector of a data file (v4read.DeletionVectorRef).
type DeletionVectorRef = v4read.DeletionVectorRef

// CreateWarehouse registers a warehouse: 400 for a bad name or location
// (or one overlapping another warehouse), 409 when the name is taken.
func (s *Service) CreateWarehouse(ctx context.Context, name, loc string, props map[string]string) (*Warehouse, error) {
	if err := s.ta.Authorize(ctx, PrivManageWarehouses, Resource{Kind: ResourceServer}); err != nil {
		return nil, err
	}
	w, err := s.whs.Create(ctx, name, loc, props)
	return warehouseOf(w), err
}

// GetWarehouse returns a warehouse or 404 NoSuchWarehouseException.
func (s *Service) GetWarehouse(ctx context.Context, name string) (*Warehouse, error) {
	if err := s.ta.Authorize(ctx, PrivManageWarehouses, access.WarehouseResource(name)); err != nil {
		return nil, err
	}
	w, err := s.whs.Get(ctx, name)
	return warehouseOf(w), err
}

// ListWarehouses returns every warehouse.
func (s *Service) ListWarehouses(ctx context.Context) ([]*Warehouse, error) {
	if err := s.ta.Authorize(ctx, PrivManageWarehouses, Resource{Kind: ResourceServer}); err != nil {
		return nil, err
	}
	ws, err := s.whs.List(ctx)
	out := make([]*Warehouse, len(ws))
	for i, w := range ws {
		out[i] = warehouseOf(w)
	}
	return out, err
}

// EnsureWarehouse creates the warehouse when missing and returns it; 409
// when it exists with another location. It is the operator's startup path
// (serve --warehouse) and is not authorized.
func (s *Service) EnsureWarehouse(ctx context.Context, name, where string) (*Warehouse, error) {
	w, err := s.whs.Ensure(ctx, name, where)
	return warehouseOf(w), err
}

package service

import (
	"context"
	"strings"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/store"
)

// ConfigWarehouse resolves the warehouse a /v1/config request names: by
// name, or — as Java and PyIceberg clients send it — by its location. It
// returns 404 NoSuchWarehouse when neither matches, and also when the
// caller holds no privilege on the server, the warehouse or anything in it
// (like Polaris, configuration needs some access to the catalog; any
// privilege will do, as a client cannot work without its config).
func (s *Service) ConfigWarehouse(ctx context.Context, ref string) (*Warehouse, error) {
	w, err := s.resolveConfigWarehouse(ctx, ref)
	if err != nil {
		return nil, err
	}
	err = s.ta.Authorize(ctx, PrivNamespaceList, access.WarehouseResource(w.Name))
	switch fault.KindOf(err) {
	case fault.NoSuchWarehouse:
		return nil, fault.New(fault.NoSuchWarehouse, "Warehouse does not exist: %s", ref)
	case fault.Forbidden: // sees something inside: enough for the config
	default:
		if err != nil {
			return nil, err
		}
	}
	return warehouseOf(w), nil
}

func (s *Service) resolveConfigWarehouse(ctx context.Context, ref string) (*store.Warehouse, error) {
	w, err := s.whs.Get(ctx, ref)
	if fault.KindOf(err) != fault.NoSuchWarehouse || !strings.Contains(ref, "://") {
		return w, err
	}
	ws, err := s.whs.List(ctx)
	if err != nil {
		return nil, err
	}
	want := strings.TrimRight(ref, "/")
	for _, w := range ws {
		if w.Location == want {
			return w, nil
		}
	}
	return nil, fault.New(fault.NoSuchWarehouse, "Warehouse does not exist: %s", ref)
}

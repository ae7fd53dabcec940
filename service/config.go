package service

import (
	"context"
	"strings"
)

// ConfigWarehouse resolves the warehouse a /v1/config request names: by
// name, or — as Java and PyIceberg clients send it — by its location. It
// returns 404 NoSuchWarehouse when neither matches.
func (s *Service) ConfigWarehouse(ctx context.Context, ref string) (*Warehouse, error) {
	w, err := s.getWarehouse(ctx, ref)
	if KindOf(err) != KindNoSuchWarehouse || !strings.Contains(ref, "://") {
		return warehouseOf(w), err
	}
	ws, err := s.listWarehouses(ctx)
	if err != nil {
		return nil, err
	}
	want := strings.TrimRight(ref, "/")
	for _, w := range ws {
		if w.Location == want {
			return warehouseOf(w), nil
		}
	}
	return nil, newErr(KindNoSuchWarehouse, "Warehouse does not exist: %s", ref)
}

package service

import (
	"context"
	"strings"

	"github.com/lakehold/catalog/store"
)

// ConfigWarehouse resolves the warehouse a /v1/config request names: by
// name, or — as Java and PyIceberg clients send it — by its location. It
// returns 404 NoSuchWarehouse when neither matches.
func (s *Service) ConfigWarehouse(ctx context.Context, ref string) (*store.Warehouse, error) {
	w, err := s.GetWarehouse(ctx, ref)
	if KindOf(err) != KindNoSuchWarehouse || !strings.Contains(ref, "://") {
		return w, err
	}
	ws, err := s.ListWarehouses(ctx)
	if err != nil {
		return nil, err
	}
	want := strings.TrimRight(ref, "/")
	for _, w := range ws {
		if w.Location == want {
			return w, nil
		}
	}
	return nil, newErr(KindNoSuchWarehouse, "Warehouse does not exist: %s", ref)
}

package service

import (
	"context"

	"github.com/lakehold/catalog/v4manifest"
)

// CurrentRoot returns the root rows of the table's current snapshot as the
// root cache holds them (ok false when it holds none) and as read from the
// root manifest itself, bypassing the cache.
func (s *Service) CurrentRoot(ctx context.Context, warehouse string, id Ident) (cached, read []v4manifest.TrackedFile, ok bool, err error) {
	w, err := s.ta.Warehouse(ctx, warehouse)
	if err != nil {
		return nil, nil, false, err
	}
	st, err := s.v4.Load(ctx, w, id)
	if err != nil {
		return nil, nil, false, err
	}
	loc := st.Metadata().CurrentSnapshot().ManifestList
	cached, ok = s.readers.CachedRoot(loc, st.Location())
	read, err = s.readers.Manifest(ctx, w, loc, st.Location(), nil, nil)
	return cached, read, ok, err
}

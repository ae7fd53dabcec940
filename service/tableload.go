package service

import (
	"context"
	"errors"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/store"
)

// readTable reads a table's pointer and its parsed metadata, for every
// path that works on the parsed document (commits, planning, v4 routes,
// maintenance, eligibility): from the cache when this metadata location
// was parsed before (the full document is then not fetched), else from
// the store, parsed once and cached. The entry is shared: callers must not
// modify it. The object's Metadata may be the refs-only document; use the
// entry's. Errors: 404 NoSuchTableException when the table does not exist,
// the store's error (503 and the like) when it fails, 500 when the stored
// metadata does not parse.
func (s *Service) readTable(ctx context.Context, warehouse string, id Ident) (*store.Object, *tablemeta.Entry, error) {
	ref := objRef(id, warehouse, store.KindTable)
	obj, err := s.store.ObjectGetRefs(ctx, ref)
	if err == nil {
		if e := s.metaCache.Get(obj.MetadataLocation); e != nil {
			return obj, e, nil
		}
		if obj.RefsOnly {
			obj, err = s.store.ObjectGet(ctx, ref)
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, tableNotFound(err, id)
	}
	if err != nil {
		return nil, nil, storeErr(err, warehouse)
	}
	e, err := tablemeta.NewEntry(obj.Metadata)
	if err != nil {
		return nil, nil, fault.Wrap(fault.Internal, err, "stored metadata of %s does not parse", id)
	}
	s.metaCache.Add(obj.MetadataLocation, e)
	return obj, e, nil
}

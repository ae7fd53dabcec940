package tableaccess

import (
	"context"
	"errors"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/store"
)

// ReadTable reads a table's pointer and its parsed metadata, for every
// path that works on the parsed document (commits, planning, v4 routes,
// maintenance, eligibility): from the cache when this metadata location
// was parsed before (the full document is then not fetched), else from
// the store, parsed once and cached. The entry is shared: callers must not
// modify it. The object's Metadata may be the refs-only document; use the
// entry's. Errors: 404 NoSuchTableException when the table does not exist,
// the store's error (503 and the like) when it fails, 500 when the stored
// metadata does not parse.
func (a *Access) ReadTable(ctx context.Context, warehouse string, id ident.Ident) (*store.Object, *tablemeta.Entry, error) {
	ref := ObjectRef(id, warehouse, store.KindTable)
	obj, err := a.opts.Store.ObjectGetRefs(ctx, ref)
	if err == nil {
		if e := a.meta.Get(obj.MetadataLocation); e != nil {
			return obj, e, nil
		}
		if obj.RefsOnly {
			obj, err = a.opts.Store.ObjectGet(ctx, ref)
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, ident.TableNotFound(err, id)
	}
	if err != nil {
		return nil, nil, storefault.Of(err, warehouse)
	}
	e, err := tablemeta.NewEntry(obj.Metadata)
	if err != nil {
		return nil, nil, fault.Wrap(fault.Internal, err, "stored metadata of %s does not parse", id)
	}
	a.meta.Add(obj.MetadataLocation, e)
	return obj, e, nil
}

// CacheMeta keeps a landed commit's parsed metadata for the next load.
func (a *Access) CacheMeta(metaLoc string, e *tablemeta.Entry) { a.meta.Add(metaLoc, e) }

// CachedMeta returns the parsed metadata at metaLoc when it is cached,
// else nil.
func (a *Access) CachedMeta(metaLoc string) *tablemeta.Entry { return a.meta.Get(metaLoc) }

// ObjectRef is the store's reference to id of kind in warehouse.
func ObjectRef(id ident.Ident, warehouse string, kind store.ObjectKind) store.ObjectRef {
	return store.ObjectRef{Warehouse: warehouse, Namespace: id.Namespace, Name: id.Name, Kind: kind}
}

// LoadRow is a table load's one visit here: it checks id, authorizes
// table-read-metadata as AuthorizeLoad does, reads the table's row (with
// refs, the stored refs-only document when there is one) and refuses a
// format version 4 table to a client that does not read v4. Errors: 400
// for a bad identifier or the v4 guard, 403 when denied (404 when the
// name does not exist), 404 NoSuchTableException when the table is
// missing, the store's error (503 and the like) when it fails.
func (a *Access) LoadRow(ctx context.Context, warehouse string, id ident.Ident, refs bool) (*store.Object, error) {
	if err := ident.ValidateIdent(id); err != nil {
		return nil, err
	}
	if err := a.AuthorizeLoad(ctx, access.PrivTableReadMetadata, store.KindTable, warehouse, id); err != nil {
		return nil, err
	}
	get := a.opts.Store.ObjectGet
	if refs {
		get = a.opts.Store.ObjectGetRefs // the stored refs-only document, when there is one
	}
	obj, err := get(ctx, ObjectRef(id, warehouse, store.KindTable))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ident.TableNotFound(err, id)
	}
	if err != nil {
		return nil, storefault.Of(err, warehouse)
	}
	if err := GuardV4(ctx, obj.FormatVersion, "Cannot load "+id.String()); err != nil {
		return nil, err
	}
	return obj, nil
}

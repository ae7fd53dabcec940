package tables

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/storageaccess"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
)

// TableETag returns the entity tag of a table's current representation
// (metadata location + snapshot mode) with one indexed lookup: the
// If-None-Match path. 404 when the table is missing or hidden, 403
// without table-read-metadata.
func (t *Tables) TableETag(ctx context.Context, warehouse string, id ident.Ident, snapshots string) (string, error) {
	if err := t.ta.Authorize(ctx, access.PrivTableReadMetadata, access.TableResource(warehouse, id.Namespace, id.Name)); err != nil {
		return "", err
	}
	return t.tableETag(ctx, warehouse, id, snapshots)
}

func (t *Tables) tableETag(ctx context.Context, warehouse string, id ident.Ident, snapshots string) (string, error) {
	loc, err := t.store.ObjectMetadataLocation(ctx, tableaccess.ObjectRef(id, warehouse, store.KindTable))
	if errors.Is(err, store.ErrNotFound) {
		return "", ident.TableNotFound(err, id)
	}
	if err != nil {
		return "", storefault.Of(err, warehouse)
	}
	return ETag(loc, snapshots), nil
}

// ETag derives the entity tag for a metadata location served in a
// snapshot mode ("all" or "refs").
func ETag(metadataLocation, snapshots string) string {
	if snapshots == "" {
		snapshots = "all"
	}
	h := fnv.New128a()
	h.Write([]byte(metadataLocation))
	h.Write([]byte{0})
	h.Write([]byte(snapshots))
	return fmt.Sprintf(`"%x"`, h.Sum(nil))
}

// LoadTable returns a table's current metadata from the catalog database
// (no object-store read, except a stat when VerifyMetadataOnLoad is set).
// snapshots "refs" keeps only snapshots that are the head of a branch or
// tag. 404 NoSuchTable when missing, 404 NotFound when the metadata file
// vanished, 400 for another snapshots value.
func (t *Tables) LoadTable(ctx context.Context, warehouse string, id ident.Ident, snapshots string, deleg storageaccess.Delegation) (*TableResult, error) {
	if snapshots != "" && snapshots != "all" && snapshots != "refs" {
		return nil, fault.New(fault.BadRequest, "Invalid snapshots mode: %s (expected all or refs)", snapshots)
	}
	obj, err := t.ta.LoadRow(ctx, warehouse, id, snapshots == "refs")
	if err != nil {
		return nil, err
	}
	var w *store.Warehouse
	if t.verify || deleg != storageaccess.NoDelegation {
		if w, err = t.ta.Warehouse(ctx, warehouse); err != nil {
			return nil, err
		}
	}
	if t.verify {
		io, err := t.ta.FileIO(ctx, w, obj.MetadataLocation)
		if err != nil {
			return nil, err
		}
		ok, err := io.Exists(ctx, obj.MetadataLocation)
		if err != nil {
			return nil, fault.Wrap(fault.Unavailable, err, "Cannot check metadata file %s", locations.FileName(w, obj.Location, obj.MetadataLocation))
		}
		if !ok {
			// The table's own metadata-location, which every load answer
			// carries anyway; Java clients and the RCK match on this text.
			return nil, fault.New(fault.NotFound, "Failed to open input stream for file: %s", obj.MetadataLocation)
		}
	}
	data := obj.Metadata
	if snapshots == "refs" && !obj.RefsOnly {
		if data, err = t.refsOnlyCached(obj.MetadataLocation, data); err != nil {
			return nil, fault.Wrap(fault.Internal, err, "filter snapshots")
		}
	}
	if w == nil {
		return &TableResult{MetadataLocation: obj.MetadataLocation, Metadata: data, Config: map[string]string{}}, nil
	}
	return t.tableResult(ctx, w, id, obj.MetadataLocation, data, obj.Location, deleg)
}

// refsOnlyCached memoises refsOnly per metadata location. A metadata file
// never changes once written, so the cache needs no invalidation and is
// safe across replicas; it only saves the filtering work.
func (t *Tables) refsOnlyCached(metadataLocation string, data []byte) ([]byte, error) {
	if v, ok := t.refs.Get(metadataLocation); ok {
		return v, nil
	}
	out, err := tablemeta.RefsOnly(data)
	if err != nil {
		return nil, err
	}
	t.refs.Add(metadataLocation, out)
	return out, nil
}

// TableExists reports whether a table exists (404 NoSuchTable otherwise,
// also when hidden from the caller; 403 without table-list).
func (t *Tables) TableExists(ctx context.Context, warehouse string, id ident.Ident) error {
	if err := t.ta.AuthorizeLoad(ctx, access.PrivTableList, store.KindTable, warehouse, id); err != nil {
		return err
	}
	_, err := t.tableETag(ctx, warehouse, id, "")
	return err
}

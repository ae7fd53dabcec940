package tables

import (
	"context"
	"errors"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storagepath"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/storageaccess"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
)

// RegisterTable adopts an existing metadata file as a table (with
// overwrite, replacing a table of that name). 404 when the namespace is
// missing or the file cannot be read, 409 when the name is taken or the
// table's location overlaps another table's or view's, 400 when
// the file or the locations it names are outside the warehouse (location
// policy) or it does not parse.
func (t *Tables) RegisterTable(ctx context.Context, warehouse string, nsLevels []string, name, metadataLocation string, overwrite bool, deleg storageaccess.Delegation) (*TableResult, error) {
	id := ident.Ident{Namespace: nsLevels, Name: name}
	if overwrite {
		// Replacing a table re-points it: a write to that table too.
		if err := t.ta.Authorize(ctx, access.PrivTableWriteMetadata, access.TableResource(warehouse, id.Namespace, id.Name)); err != nil {
			return nil, err
		}
	}
	w, data, err := t.ta.ReadForRegister(ctx, warehouse, id, metadataLocation, access.PrivTableCreate)
	if err != nil {
		return nil, err
	}
	if err := t.broker.CheckVend(ctx, w, id, deleg); err != nil {
		return nil, err
	}
	metaLoc, _ := storagepath.Normalize(metadataLocation) // readForRegister checked it
	meta, version, err := tablemeta.Parse(data)
	if err != nil {
		// The parser's text may quote the file: not for clients.
		return nil, fault.Wrap(fault.BadRequest, err, "Invalid table metadata in %s: not a table metadata file", locations.FileName(w, w.Location, metaLoc))
	}
	if err := tableaccess.GuardV4(ctx, version, "Cannot register "+id.String()); err != nil {
		return nil, err
	}
	if err := locations.CheckTableMetadataLocations(w, meta); err != nil {
		return nil, err
	}
	loc, _ := storagepath.Normalize(meta.Location()) // checked above
	if !locations.TablePrefixes(w, loc).Contains(metaLoc) {
		return nil, fault.New(fault.BadRequest, "Invalid metadata-location: it must be inside the table location")
	}
	obj := &store.Object{
		Warehouse: warehouse, Namespace: nsLevels, Name: name, Kind: store.KindTable,
		Location: loc, MetadataLocation: metaLoc, Metadata: tableaccess.CompactJSON(data), FormatVersion: version,
	}
	if refs, err := tablemeta.RefsOnly(obj.Metadata); err == nil {
		obj.RefsMetadata = refs
	}
	ectx := t.ta.WithEvent(ctx, func() store.Event {
		return changeevents.Create(changeevents.RegisterTable, tableaccess.TableObject(warehouse, id, meta), tableaccess.Who(ctx), nil)
	})
	if overwrite {
		err = t.store.ObjectReplace(ectx, obj)
	} else {
		err = t.store.ObjectCreate(ectx, obj)
	}
	if errors.Is(err, store.ErrLocationOverlap) {
		return nil, registerOverlap(err, id)
	}
	if err != nil {
		return nil, tableaccess.PutErr(err, store.KindTable, id, warehouse)
	}
	return t.tableResult(ctx, w, id, metaLoc, obj.Metadata, loc, deleg)
}

// registerOverlap is the 409 for registering metadata whose location
// equals, contains or lies inside another table's or view's. One location
// belongs to one live name (docs/design.md, "Register"): with two, a purge
// of either deletes the other's files, and credentials vended for one
// reach the other's. The other object is not named: the caller may not be
// allowed to see it.
func registerOverlap(err error, id ident.Ident) error {
	return fault.Wrap(fault.AlreadyExists, err, "Cannot register %s: its location is already used by another table or view in this warehouse "+
		"(two names over the same files would let a purge of one delete the other's data); "+
		"drop that table without purge first, or re-register it under its own name with overwrite; "+
		"in a soft-delete warehouse a dropped table keeps its location until its retention ends: undrop it instead", id)
}

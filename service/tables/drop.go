package tables

import (
	"context"
	"errors"
	"time"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/service/upkeep"
	"github.com/lakehold/catalog/store"
)

// Drops are requests: they stay here and enqueue the jobs of package
// upkeep (the purge of a dropped table, the end of a soft drop's
// retention) in their own transaction.

// dropWithPurge removes the table's row and enqueues its purge in the same
// transaction: a drop that lands always has its purge job, one that does
// not has none. The job is built from the row read first; a commit that
// lands in between moves the metadata pointer, and the drop is tried again
// on the new row.
func (t *Tables) dropWithPurge(ctx context.Context, ref store.ObjectRef) error {
	_, err := t.dropIf(ctx, ref, changeevents.DropTable, true, nil)
	return err
}

// dropIf removes the object ref names, with its drop event (op) and, when
// purge is set, its purge-table job, in one transaction; check, when not
// nil, may refuse the drop (nothing is removed and its error returned).
// The event and the job are built from the row read first: a commit that
// lands in between moves the metadata pointer, and the drop is tried
// again on the new row.
func (t *Tables) dropIf(ctx context.Context, ref store.ObjectRef, op string, purge bool, check func(*store.Object) error) (*store.Object, error) {
	for range 5 {
		read := t.store.ObjectGetRefs
		if purge {
			read = t.store.ObjectGet // the purge job needs the full document
		}
		obj, err := read(ctx, ref)
		if err != nil {
			return nil, err
		}
		dctx := t.ta.WithEvent(ctx, func() store.Event {
			return changeevents.Drop(op, tableaccess.ObjectOf(obj), tableaccess.Who(ctx), purge)
		})
		if purge {
			job, err := upkeep.PurgeJob(obj)
			if err != nil {
				return nil, err
			}
			dctx = store.WithJobs(dctx, job)
		}
		gone, err := t.store.ObjectDeleteIf(dctx, ref, func(o *store.Object) error {
			if o.MetadataLocation != obj.MetadataLocation {
				return errMovedUnderDrop
			}
			if check != nil {
				return check(o)
			}
			return nil
		})
		if !errors.Is(err, errMovedUnderDrop) {
			return gone, err
		}
	}
	return nil, fault.New(fault.Unavailable, "The %s kept changing while it was being dropped; retry", ref.Kind)
}

var errMovedUnderDrop = errors.New("table committed during drop")

// softDrop moves the object ref names to the warehouse's deleted objects
// with its expire-deleted job, both in one transaction. The job needs the
// object's id, read first; an object replaced in between is read again.
func (t *Tables) softDrop(ctx context.Context, w *store.Warehouse, ref store.ObjectRef, retention time.Duration, purge bool) error {
	for range 5 {
		obj, err := t.store.ObjectGetRefs(ctx, ref)
		if err != nil {
			return err
		}
		expires := time.UnixMilli(t.ta.Now().Add(retention).UnixMilli()) // as the store keeps it
		job := upkeep.ExpireDeletedJob(w.Name, ref, obj.ID, expires)
		ectx := t.ta.WithEvent(ctx, func() store.Event {
			return changeevents.Drop(dropOp(ref.Kind), tableaccess.ObjectOf(obj), tableaccess.Who(ctx), purge)
		})
		_, err = t.store.ObjectSoftDelete(store.WithJobs(ectx, job), ref, obj.ID, expires, purge)
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return fault.New(fault.Unavailable, "The %s kept changing while it was being dropped; retry", ref.Kind)
}

// dropObject drops a table or view by w's deletion profile: soft-deleted,
// or removed (a table with purge: with its purge-table job).
func (t *Tables) dropObject(ctx context.Context, w *store.Warehouse, ref store.ObjectRef, purge bool) error {
	if soft, retention := upkeep.SoftDeletion(w); soft {
		return t.softDrop(ctx, w, ref, retention, purge)
	}
	if purge && ref.Kind == store.KindTable {
		return t.dropWithPurge(ctx, ref)
	}
	_, err := t.dropIf(ctx, ref, dropOp(ref.Kind), false, nil)
	return err
}

// DropTable removes a table from the catalog; with purge it also enqueues,
// in the same transaction, a purge-table job that deletes the files its
// metadata references (never the whole directory), run by a worker of any
// replica. In a warehouse with the soft deletion profile the table is kept
// for undrop instead, and purged (with purge) when its retention ends
// (deleted.go). 404 when the table or the warehouse is missing.
func (t *Tables) DropTable(ctx context.Context, warehouse string, id ident.Ident, purge bool) error {
	if err := t.ta.Authorize(ctx, access.PrivTableDrop, access.TableResource(warehouse, id.Namespace, id.Name)); err != nil {
		return err
	}
	if purge {
		// Purging deletes the table's files: a data write as well.
		if err := t.ta.Authorize(ctx, access.PrivTableWriteData, access.TableResource(warehouse, id.Namespace, id.Name)); err != nil {
			return err
		}
	}
	w, err := t.ta.Warehouse(ctx, warehouse)
	if err != nil {
		return err
	}
	err = t.dropObject(ctx, w, tableaccess.ObjectRef(id, warehouse, store.KindTable), purge)
	if errors.Is(err, store.ErrNotFound) {
		return ident.TableNotFound(err, id)
	}
	return storefault.Of(err, warehouse)
}

// DropView removes a view (its files stay), or soft-deletes it in a
// warehouse with the soft deletion profile. It is here, not in package
// views, because drops share this room's deletion profile path. 403 when
// denied, 404 when the view or the warehouse is missing.
func (t *Tables) DropView(ctx context.Context, warehouse string, id ident.Ident) error {
	if err := t.ta.Authorize(ctx, access.PrivViewDrop, access.ViewResource(warehouse, id.Namespace, id.Name)); err != nil {
		return err
	}
	w, err := t.ta.Warehouse(ctx, warehouse)
	if err != nil {
		return err
	}
	err = t.dropObject(ctx, w, tableaccess.ObjectRef(id, warehouse, store.KindView), false)
	if errors.Is(err, store.ErrNotFound) {
		return ident.ViewNotFound(err, id)
	}
	return storefault.Of(err, warehouse)
}

// UnregisterTable removes a table from the catalog and deletes none of its
// files (the REST spec's unregisterTable): it answers the metadata
// location and the metadata the table last had, so that the caller can
// register it with another catalog. It needs table-drop and
// table-read-metadata (the answer carries the metadata). Errors: 404
// NoSuchTableException when the table is missing, 403 without those
// privileges, the 400 of guardV4 for a format version 4 table and a
// client that does not read v4 (checked in the store's transaction, so
// nothing is removed), the store's 503.
func (t *Tables) UnregisterTable(ctx context.Context, warehouse string, id ident.Ident) (*TableResult, error) {
	r := access.TableResource(warehouse, id.Namespace, id.Name)
	if err := t.ta.Authorize(ctx, access.PrivTableDrop, r); err != nil {
		return nil, err
	}
	if err := t.ta.Authorize(ctx, access.PrivTableReadMetadata, r); err != nil {
		return nil, err
	}
	obj, err := t.dropIf(ctx, tableaccess.ObjectRef(id, warehouse, store.KindTable), changeevents.UnregisterTable, false, func(o *store.Object) error {
		return tableaccess.GuardV4(ctx, o.FormatVersion, "Cannot unregister "+id.String())
	})
	var fe *fault.Error
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, ident.TableNotFound(err, id)
	case errors.As(err, &fe):
		return nil, err
	case err != nil:
		return nil, storefault.Of(err, warehouse)
	}
	return &TableResult{MetadataLocation: obj.MetadataLocation, Metadata: obj.Metadata, Config: map[string]string{}}, nil
}

// dropOp is the drop operation of a kind of object.
func dropOp(kind store.ObjectKind) string {
	if kind == store.KindView {
		return changeevents.DropView
	}
	return changeevents.DropTable
}

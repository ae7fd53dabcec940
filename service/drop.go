package service

import (
	"context"
	"errors"
	"time"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/fault"
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
func (s *Service) dropWithPurge(ctx context.Context, ref store.ObjectRef) error {
	_, err := s.dropIf(ctx, ref, changeevents.DropTable, true, nil)
	return err
}

// dropIf removes the object ref names, with its drop event (op) and, when
// purge is set, its purge-table job, in one transaction; check, when not
// nil, may refuse the drop (nothing is removed and its error returned).
// The event and the job are built from the row read first: a commit that
// lands in between moves the metadata pointer, and the drop is tried
// again on the new row.
func (s *Service) dropIf(ctx context.Context, ref store.ObjectRef, op string, purge bool, check func(*store.Object) error) (*store.Object, error) {
	for range 5 {
		read := s.store.ObjectGetRefs
		if purge {
			read = s.store.ObjectGet // the purge job needs the full document
		}
		obj, err := read(ctx, ref)
		if err != nil {
			return nil, err
		}
		dctx := s.ta.WithEvent(ctx, func() store.Event {
			return changeevents.Drop(op, tableaccess.ObjectOf(obj), tableaccess.Who(ctx), purge)
		})
		if purge {
			job, err := upkeep.PurgeJob(obj)
			if err != nil {
				return nil, err
			}
			dctx = store.WithJobs(dctx, job)
		}
		gone, err := s.store.ObjectDeleteIf(dctx, ref, func(o *store.Object) error {
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
func (s *Service) softDrop(ctx context.Context, w *store.Warehouse, ref store.ObjectRef, retention time.Duration, purge bool) error {
	for range 5 {
		obj, err := s.store.ObjectGetRefs(ctx, ref)
		if err != nil {
			return err
		}
		expires := time.UnixMilli(s.now().Add(retention).UnixMilli()) // as the store keeps it
		job := upkeep.ExpireDeletedJob(w.Name, ref, obj.ID, expires)
		ectx := s.ta.WithEvent(ctx, func() store.Event {
			return changeevents.Drop(dropOp(ref.Kind), tableaccess.ObjectOf(obj), tableaccess.Who(ctx), purge)
		})
		_, err = s.store.ObjectSoftDelete(store.WithJobs(ectx, job), ref, obj.ID, expires, purge)
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return fault.New(fault.Unavailable, "The %s kept changing while it was being dropped; retry", ref.Kind)
}

// dropObject drops a table or view by w's deletion profile: soft-deleted,
// or removed (a table with purge: with its purge-table job).
func (s *Service) dropObject(ctx context.Context, w *store.Warehouse, ref store.ObjectRef, purge bool) error {
	if soft, retention := upkeep.SoftDeletion(w); soft {
		return s.softDrop(ctx, w, ref, retention, purge)
	}
	if purge && ref.Kind == store.KindTable {
		return s.dropWithPurge(ctx, ref)
	}
	_, err := s.dropIf(ctx, ref, dropOp(ref.Kind), false, nil)
	return err
}

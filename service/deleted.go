package service

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/store"
)

// Soft delete. A warehouse whose lakehold.deletion-profile property is
// "soft" keeps dropped tables and views for lakehold.deletion-retention-ms
// (default 7 days): they leave lists and loads at once and free their
// name, and can be undropped until then. The drop enqueues, in its own
// transaction, an expire-deleted job that runs at the end of the retention:
// it purges the files when the drop asked for it (purgeRequested=true,
// Spark's DROP TABLE ... PURGE, PyIceberg's purge_table) and forgets the
// object. Without the property (or with "hard") a drop is final, as before.
const (
	PropDeletionProfile   = "lakehold.deletion-profile"
	PropDeletionRetention = "lakehold.deletion-retention-ms"
	// JobExpireDeleted ends a soft-deleted object's retention.
	JobExpireDeleted = "expire-deleted"
	// DefaultDeletionRetention is the retention without the property.
	DefaultDeletionRetention = 7 * 24 * time.Hour
)

// softDeletion reports whether w soft-deletes, and for how long.
// checkDeletionProps refuses a deletion profile other than hard or soft
// and a retention that is not a count of milliseconds (400): a typo would
// otherwise make every drop final, purging at once.
func checkDeletionProps(props map[string]string) error {
	if p, ok := props[PropDeletionProfile]; ok && p != "hard" && p != "soft" {
		return fault.New(fault.BadRequest, "Invalid %s: %q (hard or soft)", PropDeletionProfile, p)
	}
	if r, ok := props[PropDeletionRetention]; ok {
		if ms, err := strconv.ParseInt(r, 10, 64); err != nil || ms < 0 {
			return fault.New(fault.BadRequest, "Invalid %s: %q (milliseconds, 0 or more)", PropDeletionRetention, r)
		}
	}
	return nil
}

func softDeletion(w *store.Warehouse) (bool, time.Duration) {
	if w.Properties[PropDeletionProfile] != "soft" {
		return false, 0
	}
	if ms, err := strconv.ParseInt(w.Properties[PropDeletionRetention], 10, 64); err == nil && ms >= 0 {
		return true, time.Duration(ms) * time.Millisecond
	}
	return true, DefaultDeletionRetention
}

// deletedArgs names one soft drop: the object and the end of that drop's
// retention (an object undropped and dropped again has a job per drop;
// only the one of its current drop acts).
type deletedArgs struct {
	Warehouse string `json:"warehouse"`
	ID        string `json:"id"`
	ExpiresAt int64  `json:"expires-at-ms"`
}

// softDrop moves the object ref names to the warehouse's deleted objects
// with its expire-deleted job, both in one transaction. The job needs the
// object's id, read first; an object replaced in between is read again.
func (s *Service) softDrop(ctx context.Context, w *store.Warehouse, ref store.ObjectRef, retention time.Duration, purge bool) error {
	for range 5 {
		obj, err := s.store.ObjectGetRefs(ctx, ref)
		if err != nil {
			return err
		}
		expires := time.UnixMilli(s.now().Add(retention).UnixMilli())                                      // as the store keeps it
		raw, _ := json.Marshal(deletedArgs{Warehouse: w.Name, ID: obj.ID, ExpiresAt: expires.UnixMilli()}) // cannot fail
		job := store.Job{Kind: JobExpireDeleted, Args: raw, Warehouse: w.Name, Table: ref.String(), RunAt: expires}
		ectx := s.withEvent(ctx, func() store.Event { return changeevents.Drop(dropOp(ref.Kind), objectOf(obj), who(ctx), purge) })
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
	if soft, retention := softDeletion(w); soft {
		return s.softDrop(ctx, w, ref, retention, purge)
	}
	if purge && ref.Kind == store.KindTable {
		return s.dropWithPurge(ctx, ref)
	}
	_, err := s.dropIf(ctx, ref, dropOp(ref.Kind), false, nil)
	return err
}

// runExpireDeleted is the expire-deleted handler: at the end of the
// retention it purges the object's files when the drop asked for it, then
// forgets the object. One that was undropped meanwhile is left alone.
func (s *Service) runExpireDeleted(ctx context.Context, j *store.JobInfo) error {
	var a deletedArgs
	if err := json.Unmarshal(j.Args, &a); err != nil || a.ID == "" {
		return errors.New("expire-deleted: malformed job arguments")
	}
	w, err := s.warehouse(ctx, a.Warehouse)
	if err != nil {
		return skipGone(JobExpireDeleted, err)
	}
	d, err := s.store.DeletedGet(ctx, a.Warehouse, a.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // undropped, or forgotten by an earlier attempt
	}
	if err != nil {
		return errors.New("expire-deleted: " + clientText(storeErr(err, a.Warehouse)))
	}
	if d.ExpiresAt.UnixMilli() != a.ExpiresAt {
		return nil // the job of an earlier drop, undropped since: the current drop has its own
	}
	if d.Purge && d.Kind == store.KindTable {
		obj := &store.Object{Warehouse: a.Warehouse, Namespace: d.Namespace, Name: d.Name, Kind: d.Kind, Location: d.Location,
			MetadataLocation: d.MetadataLocation, Metadata: d.Metadata}
		if err := s.maint.PurgeTableFiles(ctx, w, obj, j.Attempt < purgeLenientAttempt); err != nil {
			return err
		}
	}
	if _, err := s.store.DeletedRemove(ctx, a.Warehouse, a.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return errors.New("expire-deleted: " + clientText(storeErr(err, a.Warehouse)))
	}
	return nil
}

// DeletedObject is a soft-deleted table or view as ListDeleted shows it.
type DeletedObject struct {
	ID        string
	Kind      store.ObjectKind
	Ident     Ident
	DeletedAt time.Time
	ExpiresAt time.Time
	Purge     bool
}

// ListDeleted lists a warehouse's soft-deleted tables and views, newest
// first. It needs deleted-list on the warehouse; 404 for a missing
// warehouse, 400 for a bad page token.
func (s *Service) ListDeleted(ctx context.Context, warehouse string, page Page) ([]DeletedObject, string, error) {
	if err := s.authorize(ctx, PrivDeletedList, warehouseResource(warehouse)); err != nil {
		return nil, "", err
	}
	if _, err := s.warehouse(ctx, warehouse); err != nil {
		return nil, "", err
	}
	list, next, err := s.store.DeletedList(ctx, warehouse, page.store())
	if err != nil {
		return nil, "", storeErr(err, warehouse)
	}
	out := make([]DeletedObject, len(list))
	for i, d := range list {
		out[i] = DeletedObject{ID: d.ID, Kind: d.Kind, Ident: Ident{Namespace: d.Namespace, Name: d.Name},
			DeletedAt: d.DeletedAt, ExpiresAt: d.ExpiresAt, Purge: d.Purge}
	}
	return out, next, nil
}

// Undrop brings a soft-deleted table or view back under its old name, or
// under to when given (for when the old name is taken), with its metadata
// as it was. It needs deleted-undrop on the warehouse and table-create
// (view-create) on the destination namespace. Errors: 404 for an unknown
// deleted object (or one whose retention ended) or a missing namespace,
// 409 when the name is taken, 400 when another object now uses its
// location.
func (s *Service) Undrop(ctx context.Context, warehouse, id string, to *Ident) (Ident, store.ObjectKind, error) {
	if err := s.authorize(ctx, PrivDeletedUndrop, warehouseResource(warehouse)); err != nil {
		return Ident{}, "", err
	}
	d, err := s.store.DeletedGet(ctx, warehouse, id)
	if errors.Is(err, store.ErrNotFound) {
		return Ident{}, "", fault.Wrap(fault.NotFound, err, "No deleted table or view %s in warehouse %s", id, warehouse)
	}
	if err != nil {
		return Ident{}, "", storeErr(err, warehouse)
	}
	dest := Ident{Namespace: d.Namespace, Name: d.Name}
	if to != nil {
		if err := validateIdent(*to); err != nil {
			return Ident{}, "", err
		}
		dest = *to
	}
	create := PrivTableCreate
	if d.Kind == store.KindView {
		create = PrivViewCreate
	}
	if err := s.authorize(ctx, create, namespaceResource(warehouse, dest.Namespace)); err != nil {
		return Ident{}, "", err
	}
	if !d.ExpiresAt.After(s.now()) {
		return Ident{}, "", fault.New(fault.NotFound, "The retention of %s ended: it is being purged", dest)
	}
	back := changeevents.Object{Warehouse: warehouse, Namespace: dest.Namespace, Name: dest.Name, Kind: d.Kind,
		UUID: changeevents.MetadataUUID(d.Metadata), Location: d.Location}
	ectx := s.withEvent(ctx, func() store.Event { return changeevents.Undrop(back, who(ctx), id) })
	_, err = s.store.Undrop(ectx, warehouse, id, dest.Namespace, dest.Name)
	switch {
	case errors.Is(err, store.ErrNoSuchNamespace):
		return Ident{}, "", nsNotFound(err, dest.Namespace)
	case errors.Is(err, store.ErrNotFound):
		return Ident{}, "", fault.Wrap(fault.NotFound, err, "No deleted table or view %s in warehouse %s", id, warehouse)
	case err != nil:
		return Ident{}, "", putErr(err, d.Kind, dest, warehouse)
	}
	return dest, d.Kind, nil
}

package upkeep

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/service/tableaccess"
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

// CheckDeletionProps refuses a deletion profile other than hard or soft
// and a retention that is not a count of milliseconds (400): a typo would
// otherwise make every drop final, purging at once.
func CheckDeletionProps(props map[string]string) error {
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

// SoftDeletion reports whether w soft-deletes, and for how long.
func SoftDeletion(w *store.Warehouse) (bool, time.Duration) {
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

// ExpireDeletedJob is the expire-deleted job of the soft drop of the
// object ref names in warehouse, whose id is id, retained until expires.
func ExpireDeletedJob(warehouse string, ref store.ObjectRef, id string, expires time.Time) store.Job {
	raw, _ := json.Marshal(deletedArgs{Warehouse: warehouse, ID: id, ExpiresAt: expires.UnixMilli()}) // cannot fail
	return store.Job{Kind: JobExpireDeleted, Args: raw, Warehouse: warehouse, Table: ref.String(), RunAt: expires}
}

// runExpireDeleted is the expire-deleted handler: at the end of the
// retention it purges the object's files when the drop asked for it, then
// forgets the object. One that was undropped meanwhile is left alone.
func (u *Upkeep) runExpireDeleted(ctx context.Context, j *store.JobInfo) error {
	var a deletedArgs
	if err := json.Unmarshal(j.Args, &a); err != nil || a.ID == "" {
		return errors.New("expire-deleted: malformed job arguments")
	}
	w, err := u.d.Tables.Warehouse(ctx, a.Warehouse)
	if err != nil {
		return SkipGone(JobExpireDeleted, err)
	}
	d, err := u.d.Tables.Store().DeletedGet(ctx, a.Warehouse, a.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // undropped, or forgotten by an earlier attempt
	}
	if err != nil {
		return errors.New("expire-deleted: " + clientText(storefault.Of(err, a.Warehouse)))
	}
	if d.ExpiresAt.UnixMilli() != a.ExpiresAt {
		return nil // the job of an earlier drop, undropped since: the current drop has its own
	}
	if d.Purge && d.Kind == store.KindTable {
		obj := &store.Object{Warehouse: a.Warehouse, Namespace: d.Namespace, Name: d.Name, Kind: d.Kind, Location: d.Location,
			MetadataLocation: d.MetadataLocation, Metadata: d.Metadata}
		if err := u.d.Maint.PurgeTableFiles(ctx, w, obj, j.Attempt < purgeLenientAttempt); err != nil {
			return err
		}
	}
	if _, err := u.d.Tables.Store().DeletedRemove(ctx, a.Warehouse, a.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return errors.New("expire-deleted: " + clientText(storefault.Of(err, a.Warehouse)))
	}
	return nil
}

// DeletedObject is a soft-deleted table or view as ListDeleted shows it.
type DeletedObject struct {
	ID        string
	Kind      store.ObjectKind
	Ident     ident.Ident
	DeletedAt time.Time
	ExpiresAt time.Time
	Purge     bool
}

// ListDeleted lists a warehouse's soft-deleted tables and views, newest
// first. It needs deleted-list on the warehouse; 404 for a missing
// warehouse, 400 for a bad page token.
func (u *Upkeep) ListDeleted(ctx context.Context, warehouse string, page store.Page) ([]DeletedObject, string, error) {
	if err := u.d.Tables.Authorize(ctx, access.PrivDeletedList, access.WarehouseResource(warehouse)); err != nil {
		return nil, "", err
	}
	if _, err := u.d.Tables.Warehouse(ctx, warehouse); err != nil {
		return nil, "", err
	}
	list, next, err := u.d.Tables.Store().DeletedList(ctx, warehouse, page)
	if err != nil {
		return nil, "", storefault.Of(err, warehouse)
	}
	out := make([]DeletedObject, len(list))
	for i, d := range list {
		out[i] = DeletedObject{ID: d.ID, Kind: d.Kind, Ident: ident.Ident{Namespace: d.Namespace, Name: d.Name},
			DeletedAt: d.DeletedAt, ExpiresAt: d.ExpiresAt, Purge: d.Purge}
	}
	return out, next, nil
}

// Undrop brings a soft-deleted table or view back into its own namespace
// under its old name or, only while that name is taken, under to.Name,
// with its metadata as it was. It never moves an object to another
// namespace: its location lies under that namespace's and grants there
// would reach it (rename it afterwards, which checks both sides). It
// needs deleted-undrop on the warehouse and table-create (view-create)
// on its namespace, and under a new name also table-drop (view-drop) on
// its old name, as a rename would. Errors: 404 for an unknown deleted
// object (or one whose retention ended) or a missing namespace, 400 for
// another namespace or a new name while the old one is free, 409 when
// the name is taken, 400 when another object now uses its location.
func (u *Upkeep) Undrop(ctx context.Context, warehouse, id string, to *ident.Ident) (ident.Ident, store.ObjectKind, error) {
	if err := u.d.Tables.Authorize(ctx, access.PrivDeletedUndrop, access.WarehouseResource(warehouse)); err != nil {
		return ident.Ident{}, "", err
	}
	d, err := u.d.Tables.Store().DeletedGet(ctx, warehouse, id)
	if errors.Is(err, store.ErrNotFound) {
		return ident.Ident{}, "", fault.Wrap(fault.NotFound, err, "No deleted table or view %s in warehouse %s", id, warehouse)
	}
	if err != nil {
		return ident.Ident{}, "", storefault.Of(err, warehouse)
	}
	own := ident.Ident{Namespace: d.Namespace, Name: d.Name}
	dest, err := u.undropRights(ctx, warehouse, d.Kind, own, to)
	if err != nil {
		return ident.Ident{}, "", err
	}
	if !d.ExpiresAt.After(u.d.Tables.Now()) {
		return ident.Ident{}, "", fault.New(fault.NotFound, "The retention of %s ended: it is being purged", own)
	}
	back := changeevents.Object{Warehouse: warehouse, Namespace: dest.Namespace, Name: dest.Name, Kind: d.Kind,
		UUID: changeevents.MetadataUUID(d.Metadata), Location: d.Location}
	ectx := u.d.Tables.WithEvent(ctx, func() store.Event { return changeevents.Undrop(back, tableaccess.Who(ctx), id) })
	_, err = u.d.Tables.Store().Undrop(ectx, warehouse, id, dest.Name)
	switch {
	case errors.Is(err, store.ErrNoSuchNamespace):
		return ident.Ident{}, "", ident.NamespaceNotFound(err, dest.Namespace)
	case errors.Is(err, store.ErrNotFound):
		return ident.Ident{}, "", fault.Wrap(fault.NotFound, err, "No deleted table or view %s in warehouse %s", id, warehouse)
	case errors.Is(err, store.ErrOwnNameFree):
		return ident.Ident{}, "", ownNameFree(err, own)
	case err != nil:
		return ident.Ident{}, "", tableaccess.PutErr(err, d.Kind, dest, warehouse)
	}
	return dest, d.Kind, nil
}

// undropRights authorizes the undrop of the deleted object whose own
// identifier is own, to the name to gives (nil: its own), and returns
// where it comes back. Authorization comes first, so that a caller
// without rights in the object's namespace learns nothing of the rules.
func (u *Upkeep) undropRights(ctx context.Context, warehouse string, kind store.ObjectKind, own ident.Ident, to *ident.Ident) (ident.Ident, error) {
	create, drop, res := access.PrivTableCreate, access.PrivTableDrop, access.TableResource(warehouse, own.Namespace, own.Name)
	if kind == store.KindView {
		create, drop, res = access.PrivViewCreate, access.PrivViewDrop, access.ViewResource(warehouse, own.Namespace, own.Name)
	}
	if err := u.d.Tables.Authorize(ctx, create, access.NamespaceResource(warehouse, own.Namespace)); err != nil {
		return ident.Ident{}, err
	}
	if to == nil {
		return own, nil
	}
	if err := ident.ValidateIdent(*to); err != nil {
		return ident.Ident{}, err
	}
	if !slices.Equal(to.Namespace, own.Namespace) {
		return ident.Ident{}, fault.New(fault.BadRequest,
			"Cannot undrop %s into namespace %s: an undrop brings an object back into its own namespace (rename it afterwards)",
			own, ident.NamespaceString(to.Namespace))
	}
	if to.Name != own.Name {
		// A new name is a rename of the old one: the grants held on the
		// old name no longer reach it, those on the new one do.
		if err := u.d.Tables.Authorize(ctx, drop, res); err != nil {
			return ident.Ident{}, err
		}
	}
	return *to, nil
}

// ownNameFree is the 400 of an undrop under a new name while the
// object's own name is free.
func ownNameFree(err error, own ident.Ident) error {
	return fault.Wrap(fault.BadRequest, err,
		"Cannot undrop %s under a new name: its own name is free (a new name is only for a taken one); undrop it without a name", own)
}

package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

const deletedCols = `d.id, w.name, d.namespace_key, d.name, d.kind, d.location, d.metadata_location, d.format_version, d.deleted_at, d.expires_at, d.purge`

const deletedFrom = ` FROM deleted_objects d JOIN warehouses w ON w.id = d.warehouse_id`

func scanDeleted(r sqldb.Row, withMeta bool) (*store.DeletedObject, error) {
	d := &store.DeletedObject{}
	var nsKey, kind string
	var deleted, expires int64
	var purge int
	var packed []byte
	dest := []any{&d.ID, &d.Warehouse, &nsKey, &d.Name, &kind, &d.Location, &d.MetadataLocation, &d.FormatVersion, &deleted, &expires, &purge}
	if withMeta {
		dest = append(dest, &packed)
	}
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	d.Namespace, d.Kind, d.Purge = nsLevels(nsKey), store.ObjectKind(kind), purge == 1
	d.DeletedAt, d.ExpiresAt = time.UnixMilli(deleted), time.UnixMilli(expires)
	if withMeta {
		meta, err := unpack(packed)
		if err != nil {
			return nil, fmt.Errorf("metadata of deleted %s: %w", d.ID, err)
		}
		d.Metadata = meta
	}
	return d, nil
}

// ObjectSoftDelete implements store.DeletedObjects.
func (s *Store) ObjectSoftDelete(ctx context.Context, ref store.ObjectRef, id string, expiresAt time.Time, purge bool) (*store.DeletedObject, error) {
	var d *store.DeletedObject
	err := s.inTx(ctx, func(q sqldb.Querier) error {
		o := &store.Object{}
		err := scanObject(q.QueryRow(ctx, `SELECT `+objectCols+objectByName,
			ref.Warehouse, nsKey(ref.Namespace), ref.Name, string(ref.Kind)), o)
		if s.db.Classify(err) == sqldb.ClassNoRows || (err == nil && o.ID != id) {
			return notFound(ref)
		}
		if err != nil {
			return err
		}
		// The base-file index goes: the next column-file commit after an
		// undrop rebuilds it from the leaves.
		if err := deleteIndex(ctx, q, `id = $1`, o.ID); err != nil {
			return err
		}
		n, err := q.Exec(ctx, `DELETE FROM catalog_objects WHERE id = $1 AND metadata_location = $2`, o.ID, o.MetadataLocation)
		if err != nil {
			return err
		}
		if n == 0 {
			return sqldb.ErrRetryTx
		}
		now := s.clock.Now()
		flag := 0
		if purge {
			flag = 1
		}
		if _, err := q.Exec(ctx, `INSERT INTO deleted_objects (id, warehouse_id, namespace_key, name, kind, location, metadata_location,
			metadata, format_version, deleted_at, expires_at, purge) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			o.ID, o.WarehouseID, nsKey(ref.Namespace), o.Name, string(o.Kind), o.Location, o.MetadataLocation, pack(o.Metadata),
			o.FormatVersion, now.UnixMilli(), expiresAt.UnixMilli(), flag); err != nil {
			return err
		}
		d = &store.DeletedObject{ID: o.ID, Warehouse: ref.Warehouse, Namespace: ref.Namespace, Name: o.Name, Kind: o.Kind,
			Location: o.Location, MetadataLocation: o.MetadataLocation, FormatVersion: o.FormatVersion,
			DeletedAt: time.UnixMilli(now.UnixMilli()), ExpiresAt: time.UnixMilli(expiresAt.UnixMilli()), Purge: purge}
		return nil
	})
	if err != nil {
		return nil, s.wrap(err, "soft-delete "+string(ref.Kind))
	}
	return d, nil
}

// DeletedList implements store.DeletedObjects. Pages run newest first; the
// token is the last row's deletion time and id.
func (s *Store) DeletedList(ctx context.Context, warehouse string, page store.Page) ([]*store.DeletedObject, string, error) {
	afterAt, afterID := int64(1<<62), ""
	if page.Token != "" {
		last, err := decodeToken(page.Token)
		if err != nil {
			return nil, "", err
		}
		at, id, ok := strings.Cut(last, "|")
		n, perr := strconv.ParseInt(at, 10, 64)
		if !ok || perr != nil {
			return nil, "", fmt.Errorf("%w: invalid page token", store.ErrInvalidPageToken)
		}
		afterAt, afterID = n, id
	}
	size := page.Size
	if size <= 0 {
		size = 100
	}
	rows, err := s.db.Query(ctx, `SELECT `+deletedCols+deletedFrom+`
		WHERE w.name = $1 AND (d.deleted_at < $2 OR (d.deleted_at = $2 AND d.id < $3) OR $3 = '')
		ORDER BY d.deleted_at DESC, d.id DESC LIMIT $4`, warehouse, afterAt, afterID, probeLimit(size))
	if err != nil {
		return nil, "", s.wrap(err, "list deleted objects")
	}
	defer rows.Close()
	var out []*store.DeletedObject
	for rows.Next() {
		d, err := scanDeleted(rows, false)
		if err != nil {
			return nil, "", s.wrap(err, "list deleted objects")
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, "", s.wrap(err, "list deleted objects")
	}
	next := ""
	if len(out) > size {
		out = out[:size]
		last := out[size-1]
		next = encodeToken(strconv.FormatInt(last.DeletedAt.UnixMilli(), 10) + "|" + last.ID)
	}
	return out, next, nil
}

// DeletedGet implements store.DeletedObjects.
func (s *Store) DeletedGet(ctx context.Context, warehouse, id string) (*store.DeletedObject, error) {
	d, err := scanDeleted(s.db.QueryRow(ctx, `SELECT `+deletedCols+`, d.metadata`+deletedFrom+` WHERE w.name = $1 AND d.id = $2`, warehouse, id), true)
	if s.db.Classify(err) == sqldb.ClassNoRows {
		return nil, fmt.Errorf("%w: deleted object %s", store.ErrNotFound, id)
	}
	return d, s.wrap(err, "get deleted object")
}

// Undrop implements store.DeletedObjects.
func (s *Store) Undrop(ctx context.Context, warehouse, id, name string) (*store.Object, error) {
	var o *store.Object
	err := s.inTx(ctx, func(q sqldb.Querier) error {
		d, err := scanDeleted(q.QueryRow(ctx, `SELECT `+deletedCols+`, d.metadata`+deletedFrom+` WHERE w.name = $1 AND d.id = $2`, warehouse, id), true)
		if s.db.Classify(err) == sqldb.ClassNoRows {
			return fmt.Errorf("%w: deleted object %s", store.ErrNotFound, id)
		}
		if err != nil {
			return err
		}
		if !d.ExpiresAt.After(s.clock.Now()) {
			// Its retention ended: the expire-deleted job may be purging it.
			return fmt.Errorf("%w: deleted object %s (retention ended)", store.ErrNotFound, id)
		}
		o = &store.Object{ID: d.ID, Warehouse: warehouse, Namespace: d.Namespace, Name: name, Kind: d.Kind, Location: d.Location,
			MetadataLocation: d.MetadataLocation, Metadata: d.Metadata, FormatVersion: d.FormatVersion}
		nsID, whID, err := s.namespaceRow(ctx, q, warehouse, d.Namespace)
		if err != nil {
			return err
		}
		if name != d.Name {
			// Checked in the transaction that takes the new name: a new
			// name is only for a taken one.
			if kind, err := s.existingKind(ctx, q, nsID, d.Name); err != nil {
				return err
			} else if kind == "" {
				return fmt.Errorf("%w: %s", store.ErrOwnNameFree, d.Name)
			}
		}
		if kind, err := s.existingKind(ctx, q, nsID, name); err != nil {
			return err
		} else if kind != "" {
			return &store.AlreadyExistsError{Kind: kind, Name: o.Ref().String()}
		}
		if err := lockWarehouse(ctx, q, whID); err != nil {
			return err
		}
		// Its own deleted row, which this transaction removes, holds
		// the location: only the others count.
		if err := s.checkOverlap(ctx, q, whID, id, o.Location); err != nil {
			return err
		}
		o.NamespaceID, o.WarehouseID, o.UpdatedAt = nsID, whID, s.clock.Now()
		if _, err := q.Exec(ctx,
			`INSERT INTO catalog_objects (id, warehouse_id, namespace_id, name, kind, location, metadata_location, metadata, refs_metadata, format_version, updated_at)
			 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, $9, $10)`,
			o.ID, whID, nsID, name, string(o.Kind), o.Location, o.MetadataLocation, pack(o.Metadata), o.FormatVersion, o.UpdatedAt.UnixMilli()); err != nil {
			if s.db.Classify(err) == sqldb.ClassUnique {
				return &store.AlreadyExistsError{Kind: o.Kind, Name: o.Ref().String()}
			}
			return err
		}
		// Orphan candidates and tombstones are kept by table id through a
		// soft delete: the row comes back held when it has any, or a
		// commit could add a file a removal deleted.
		if err := setHold(ctx, q, o.ID); err != nil {
			return err
		}
		_, err = q.Exec(ctx, `DELETE FROM deleted_objects WHERE id = $1`, id)
		return err
	})
	if err != nil {
		return nil, s.wrap(err, "undrop")
	}
	return o, nil
}

// DeletedRemove implements store.DeletedObjects.
func (s *Store) DeletedRemove(ctx context.Context, warehouse, id string) (*store.DeletedObject, error) {
	var d *store.DeletedObject
	err := s.inTx(ctx, func(q sqldb.Querier) error {
		var err error
		d, err = scanDeleted(q.QueryRow(ctx, `SELECT `+deletedCols+`, d.metadata`+deletedFrom+` WHERE w.name = $1 AND d.id = $2`, warehouse, id), true)
		if s.db.Classify(err) == sqldb.ClassNoRows {
			return fmt.Errorf("%w: deleted object %s", store.ErrNotFound, id)
		}
		if err != nil {
			return err
		}
		if _, err = q.Exec(ctx, `DELETE FROM deleted_objects WHERE id = $1`, id); err != nil {
			return err
		}
		return deleteReports(ctx, q, id)
	})
	if err != nil {
		return nil, s.wrap(err, "forget deleted object")
	}
	return d, nil
}

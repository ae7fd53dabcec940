package sqlstore

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

var _ store.Store = (*Store)(nil)

// levelSep joins namespace levels into one key column.
const levelSep = "\x1f"

func nsKey(levels []string) string { return strings.Join(levels, levelSep) }

func nsLevels(key string) []string { return strings.Split(key, levelSep) }

func encodeToken(last string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(last))
}

// decodeToken returns the last key of the previous page. A token that does
// not decode to a key we could have issued (valid UTF-8, no NUL) is refused
// before it reaches SQL, where Postgres would reject the bytes.
func decodeToken(tok string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return "", fmt.Errorf("%w: invalid page token", store.ErrInvalidPageToken)
	}
	return string(b), nil
}

func marshalProps(p map[string]string) string {
	if p == nil {
		return "{}"
	}
	b, _ := json.Marshal(p)
	return string(b)
}

func unmarshalProps(s string) map[string]string {
	p := map[string]string{}
	_ = json.Unmarshal([]byte(s), &p)
	return p
}

// ---- warehouses ----

// WarehouseCreate implements store.Store.
func (s *Store) WarehouseCreate(ctx context.Context, w *store.Warehouse) error {
	w.ID = uuid.NewString()
	w.CreatedAt = s.clock.Now()
	_, err := s.db.Exec(ctx,
		`INSERT INTO warehouses (id, name, location, properties, storage_profile, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		w.ID, w.Name, w.Location, marshalProps(w.Properties), w.StorageProfile, w.CreatedAt.UnixMilli())
	if err != nil && s.db.Classify(err) == sqldb.ClassUnique {
		return &store.AlreadyExistsError{Name: w.Name}
	}
	return s.wrap(err, "create warehouse")
}

const warehouseCols = `id, name, location, properties, storage_profile, created_at`

func scanWarehouse(r sqldb.Row) (*store.Warehouse, error) {
	var w store.Warehouse
	var props string
	var created int64
	if err := r.Scan(&w.ID, &w.Name, &w.Location, &props, &w.StorageProfile, &created); err != nil {
		return nil, err
	}
	w.Properties = unmarshalProps(props)
	w.CreatedAt = time.UnixMilli(created)
	return &w, nil
}

// WarehouseGet implements store.Store.
func (s *Store) WarehouseGet(ctx context.Context, name string) (*store.Warehouse, error) {
	w, err := scanWarehouse(s.db.QueryRow(ctx, `SELECT `+warehouseCols+` FROM warehouses WHERE name = $1`, name))
	if err != nil {
		if s.db.Classify(err) == sqldb.ClassNoRows {
			return nil, fmt.Errorf("%w: %s", store.ErrNoSuchWarehouse, name)
		}
		return nil, s.wrap(err, "get warehouse")
	}
	return w, nil
}

// WarehouseList implements store.Store.
func (s *Store) WarehouseList(ctx context.Context) ([]*store.Warehouse, error) {
	ws, err := s.warehouseList(ctx)
	if err != nil {
		return nil, s.wrap(err, "list warehouses")
	}
	return ws, nil
}

func (s *Store) warehouseList(ctx context.Context) ([]*store.Warehouse, error) {
	rows, err := s.db.Query(ctx, `SELECT `+warehouseCols+` FROM warehouses ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*store.Warehouse{}
	for rows.Next() {
		w, err := scanWarehouse(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// WarehouseSetProfile implements store.Store.
func (s *Store) WarehouseSetProfile(ctx context.Context, name, profile string) error {
	n, err := s.db.Exec(ctx, `UPDATE warehouses SET storage_profile = $1 WHERE name = $2`, profile, name)
	if err != nil {
		return s.wrap(err, "set storage profile")
	}
	if n == 0 {
		return fmt.Errorf("%w: warehouse %s", store.ErrNoSuchWarehouse, name)
	}
	return nil
}

// WarehouseDelete implements store.Store.
func (s *Store) WarehouseDelete(ctx context.Context, name string) error {
	n, err := s.db.Exec(ctx, `DELETE FROM warehouses WHERE name = $1`, name)
	if err != nil {
		if s.db.Classify(err) == sqldb.ClassForeignKey {
			return fmt.Errorf("%w: warehouse %s holds namespaces", store.ErrNotEmpty, name)
		}
		return s.wrap(err, "delete warehouse")
	}
	if n == 0 {
		return fmt.Errorf("%w: %s", store.ErrNoSuchWarehouse, name)
	}
	return nil
}

// ---- namespaces ----

func (s *Store) warehouseID(ctx context.Context, q sqldb.Querier, name string) (string, error) {
	var id string
	if err := q.QueryRow(ctx, `SELECT id FROM warehouses WHERE name = $1`, name).Scan(&id); err != nil {
		if s.db.Classify(err) == sqldb.ClassNoRows {
			return "", fmt.Errorf("%w: warehouse %s", store.ErrNoSuchWarehouse, name)
		}
		return "", err
	}
	return id, nil
}

// NamespaceCreate implements store.Store.
func (s *Store) NamespaceCreate(ctx context.Context, warehouse string, levels []string, props map[string]string) (*store.Namespace, error) {
	ns := &store.Namespace{ID: uuid.NewString(), Levels: levels, Properties: props}
	err := s.inTx(ctx, func(q sqldb.Querier) error {
		whID, err := s.warehouseID(ctx, q, warehouse)
		if err != nil {
			return err
		}
		ns.WarehouseID = whID
		var parentID *string
		if len(levels) > 1 {
			var pid string
			err := q.QueryRow(ctx, `SELECT id FROM namespaces WHERE warehouse_id = $1 AND name_key = $2`,
				whID, nsKey(levels[:len(levels)-1])).Scan(&pid)
			if err != nil {
				if s.db.Classify(err) == sqldb.ClassNoRows {
					return fmt.Errorf("%w: parent namespace %s", store.ErrNoSuchNamespace, strings.Join(levels[:len(levels)-1], "."))
				}
				return err
			}
			parentID = &pid
		}
		_, err = q.Exec(ctx,
			`INSERT INTO namespaces (id, warehouse_id, name_key, parent_key, parent_id, properties) VALUES ($1, $2, $3, $4, $5, $6)`,
			ns.ID, whID, nsKey(levels), nsKey(levels[:len(levels)-1]), parentID, marshalProps(props))
		if err != nil && s.db.Classify(err) == sqldb.ClassUnique {
			return &store.AlreadyExistsError{Name: strings.Join(levels, ".")}
		}
		return err
	})
	if err != nil {
		return nil, s.wrap(err, "create namespace")
	}
	return ns, nil
}

// namespaceByName finds one namespace row by warehouse and levels: the
// warehouse by its unique name, then the namespace by its unique
// (warehouse_id, name_key). plan_internal_test.go checks the plan.
const namespaceByName = ` FROM warehouses w JOIN namespaces n ON n.warehouse_id = w.id
	WHERE w.name = $1 AND n.name_key = $2`

// NamespaceGet implements store.Store.
func (s *Store) NamespaceGet(ctx context.Context, warehouse string, levels []string) (*store.Namespace, error) {
	var ns store.Namespace
	var props string
	err := s.reads().QueryRow(ctx,
		`SELECT n.id, n.warehouse_id, n.properties`+namespaceByName, warehouse, nsKey(levels)).Scan(&ns.ID, &ns.WarehouseID, &props)
	if err != nil {
		if s.db.Classify(err) == sqldb.ClassNoRows {
			return nil, fmt.Errorf("%w: %s", store.ErrNoSuchNamespace, strings.Join(levels, "."))
		}
		return nil, s.wrap(err, "get namespace")
	}
	ns.Levels = levels
	ns.Properties = unmarshalProps(props)
	return &ns, nil
}

// NamespaceList implements store.Store.
func (s *Store) NamespaceList(ctx context.Context, warehouse string, parent []string, page store.Page) ([][]string, string, error) {
	out, next, err := s.namespaceList(ctx, warehouse, parent, page)
	if err != nil {
		return nil, "", s.wrap(err, "list namespaces")
	}
	return out, next, nil
}

// namespaceListSQL and namespaceListOrder enclose one page of a
// namespace's children (more conditions may go between them): a range of
// the index on (parent_key, warehouse_id, name_key), read in its order.
const (
	namespaceListSQL   = `SELECT n.name_key FROM namespaces n WHERE n.warehouse_id = $1 AND n.parent_key = $2 AND n.name_key > $3`
	namespaceListOrder = ` ORDER BY n.name_key LIMIT $4`
)

func (s *Store) namespaceList(ctx context.Context, warehouse string, parent []string, page store.Page) ([][]string, string, error) {
	var whID string
	if len(parent) > 0 {
		ns, err := s.NamespaceGet(ctx, warehouse, parent)
		if err != nil {
			return nil, "", err
		}
		whID = ns.WarehouseID
	} else {
		id, err := s.warehouseID(ctx, s.db, warehouse)
		if err != nil {
			return nil, "", err
		}
		whID = id
	}
	after := ""
	if page.Token != "" {
		var err error
		if after, err = decodeToken(page.Token); err != nil {
			return nil, "", err
		}
	}
	sql := namespaceListSQL
	a := sqlArgs{args: []any{whID, nsKey(parent), after, probeLimit(page.Size)}}
	if page.Visible != nil {
		sql += ` AND ` + a.visibleNamespaceCond(page.Visible, warehouse, parent)
	}
	rows, err := s.db.Query(ctx, sql+namespaceListOrder, a.args...)
	if err != nil {
		return nil, "", err
	}
	keys, next, err := pageOf(rows, page.Size)
	if err != nil {
		return nil, "", err
	}
	out := make([][]string, len(keys))
	for i, k := range keys {
		out[i] = nsLevels(k)
	}
	return out, next, nil
}

// probeLimit is the LIMIT for a page of size n: one row more than the page,
// so that the page knows whether another follows (no token, and no empty
// last page, when it does not). Size 0 means no limit.
func probeLimit(n int) int64 {
	if n <= 0 {
		return 1 << 62 // "no limit" in a form both databases accept
	}
	return int64(n) + 1
}

// pageOf reads the keys of one page from rows fetched with probeLimit(size)
// and returns the token of the next page: the last key of this one, and ""
// when the probe row is absent.
func pageOf(rows sqldb.Rows, size int) ([]string, string, error) {
	defer rows.Close()
	out := make([]string, 0, pageCap(size))
	// One destination for every row: Scan's arguments escape to the heap
	// (the variable and the slice of them), which per row was two hundred
	// allocations for a 100-name page.
	var k string
	dest := []any{&k}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, "", err
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	if size <= 0 || len(out) <= size {
		return out, "", nil
	}
	out = out[:size]
	return out, encodeToken(out[size-1]), nil
}

// pageCap is the room pageOf makes for a page of size n (0: no limit) up
// front: the whole page with its probe row, up to a bound, so that a
// client's pageSize cannot make every request allocate a huge slice.
func pageCap(n int) int {
	const most = 1024
	if n <= 0 || n >= most {
		return 64
	}
	return n + 1
}

// NamespaceUpdateProperties implements store.Store.
func (s *Store) NamespaceUpdateProperties(ctx context.Context, warehouse string, levels []string, removals []string, updates map[string]string) (removed, missing []string, err error) {
	err = s.inTx(ctx, func(q sqldb.Querier) error {
		removed, missing = []string{}, []string{}
		var id, raw string
		err := q.QueryRow(ctx,
			`SELECT n.id, n.properties`+namespaceByName, warehouse, nsKey(levels)).Scan(&id, &raw)
		if err != nil {
			if s.db.Classify(err) == sqldb.ClassNoRows {
				return fmt.Errorf("%w: %s", store.ErrNoSuchNamespace, strings.Join(levels, "."))
			}
			return err
		}
		props := unmarshalProps(raw)
		for _, k := range removals {
			if _, ok := props[k]; ok {
				delete(props, k)
				removed = append(removed, k)
			} else {
				missing = append(missing, k)
			}
		}
		for k, v := range updates {
			props[k] = v
		}
		// The properties column is compared on write so that two concurrent
		// updates cannot both read the same old value (lost update).
		n, err := q.Exec(ctx, `UPDATE namespaces SET properties = $1 WHERE id = $2 AND properties = $3`,
			marshalProps(props), id, raw)
		if err != nil {
			return err
		}
		if n == 0 {
			return sqldb.ErrRetryTx
		}
		return nil
	})
	if err != nil {
		return nil, nil, s.wrap(err, "update namespace properties")
	}
	return removed, missing, nil
}

// NamespaceDelete implements store.Store.
func (s *Store) NamespaceDelete(ctx context.Context, warehouse string, levels []string) error {
	err := s.inTx(ctx, func(q sqldb.Querier) error {
		var id string
		err := q.QueryRow(ctx,
			`SELECT n.id`+namespaceByName, warehouse, nsKey(levels)).Scan(&id)
		if err != nil {
			if s.db.Classify(err) == sqldb.ClassNoRows {
				return fmt.Errorf("%w: %s", store.ErrNoSuchNamespace, strings.Join(levels, "."))
			}
			return err
		}
		_, err = q.Exec(ctx, `DELETE FROM namespaces WHERE id = $1`, id)
		if err != nil && s.db.Classify(err) == sqldb.ClassForeignKey {
			return fmt.Errorf("%w: %s", store.ErrNotEmpty, strings.Join(levels, "."))
		}
		return err
	})
	return s.wrap(err, "delete namespace")
}

// ---- tables and views ----

// objectCols selects an object row for scanObject: the metadata column
// and a 0/1 flag saying whether it holds the refs-only document.
const (
	objectHead = `o.id, o.warehouse_id, o.namespace_id, o.name, o.kind, o.location, o.metadata_location, `
	objectTail = `, o.format_version, o.updated_at`
	objectCols = objectHead + `o.metadata, 0` + objectTail
	// objectRefsCols reads refs_metadata when it holds a document of its
	// own, and metadata when it is NULL (not derived) or refsSame. CASE
	// evaluates only the branch it takes, so Postgres never de-TOASTs the
	// column it does not return; length() of a TOASTed value reads only its
	// header.
	objectRefsCols = objectHead + `CASE WHEN o.refs_metadata IS NULL OR length(o.refs_metadata) = 1 THEN o.metadata ELSE o.refs_metadata END,
		CASE WHEN o.refs_metadata IS NULL THEN 0 ELSE 1 END` + objectTail
)

// refsSame is stored in refs_metadata when the refs-only document is the
// metadata itself. A zstd frame starts with a 4-byte magic number, so one
// byte is never a packed document; an empty value would not do, as SQLite
// drivers may bind an empty blob as NULL.
var refsSame = []byte{0}

// packRefs encodes a refs-only document for refs_metadata: NULL when not
// derived, refsSame when it equals the metadata, else compressed.
func packRefs(meta, refs []byte) []byte {
	switch {
	case refs == nil:
		return nil
	case bytes.Equal(refs, meta):
		return refsSame
	}
	return pack(refs)
}

func scanObject(r sqldb.Row, o *store.Object) error {
	var kind string
	var updated int64
	var packed []byte
	var refsOnly int
	if err := r.Scan(&o.ID, &o.WarehouseID, &o.NamespaceID, &o.Name, &kind, &o.Location,
		&o.MetadataLocation, &packed, &refsOnly, &o.FormatVersion, &updated); err != nil {
		return err
	}
	meta, err := unpack(packed)
	if err != nil {
		return fmt.Errorf("metadata of %s: %w", o.ID, err)
	}
	o.Metadata = meta
	o.RefsOnly = refsOnly == 1
	o.Kind = store.ObjectKind(kind)
	o.UpdatedAt = time.UnixMilli(updated)
	return nil
}

// notFound builds the error for a missing table, view or function.
func notFound(ref store.ObjectRef) error {
	switch ref.Kind {
	case store.KindView:
		return fmt.Errorf("%w: %s", store.ErrNoSuchView, ref.String())
	case store.KindFunction:
		return fmt.Errorf("%w: %s", store.ErrNoSuchFunction, ref.String())
	}
	return fmt.Errorf("%w: %s", store.ErrNoSuchTable, ref.String())
}

// ObjectGet implements store.Store.
func (s *Store) ObjectGet(ctx context.Context, ref store.ObjectRef) (*store.Object, error) {
	return s.objectGet(ctx, ref, objectCols)
}

// ObjectGetRefs implements store.Store.
func (s *Store) ObjectGetRefs(ctx context.Context, ref store.ObjectRef) (*store.Object, error) {
	return s.objectGet(ctx, ref, objectRefsCols)
}

// objectByName finds one object row by warehouse, namespace, name and kind
// through unique indexes, one row read in each table: the object is
// reached only through its namespace (n.id = o.namespace_id), never
// through o.warehouse_id. Joined on o.warehouse_id, SQLite without
// statistics walked the index on (warehouse_id, location) over every
// object of the warehouse, reading the namespace of each: the last table
// of 10,000 took 11 ms to load, the first 0.04 ms (BenchmarkLookups).
// plan_internal_test.go checks the plan on both databases.
const objectByName = ` FROM warehouses w
	JOIN namespaces n ON n.warehouse_id = w.id JOIN catalog_objects o ON o.namespace_id = n.id
	WHERE w.name = $1 AND n.name_key = $2 AND o.name = $3 AND o.kind = $4`

func (s *Store) objectGet(ctx context.Context, ref store.ObjectRef, cols string) (*store.Object, error) {
	o := &store.Object{}
	err := scanObject(s.reads().QueryRow(ctx, `SELECT `+cols+objectByName,
		ref.Warehouse, nsKey(ref.Namespace), ref.Name, string(ref.Kind)), o)
	if err != nil {
		if s.db.Classify(err) == sqldb.ClassNoRows {
			return nil, notFound(ref)
		}
		return nil, s.wrap(err, "get "+string(ref.Kind))
	}
	o.Namespace = ref.Namespace
	o.Warehouse = ref.Warehouse
	return o, nil
}

// ObjectMetadataLocation implements store.Store.
func (s *Store) ObjectMetadataLocation(ctx context.Context, ref store.ObjectRef) (string, error) {
	var loc string
	err := s.reads().QueryRow(ctx,
		`SELECT o.metadata_location`+objectByName,
		ref.Warehouse, nsKey(ref.Namespace), ref.Name, string(ref.Kind)).Scan(&loc)
	if err != nil {
		if s.db.Classify(err) == sqldb.ClassNoRows {
			return "", notFound(ref)
		}
		return "", s.wrap(err, "get metadata location")
	}
	return loc, nil
}

// ObjectList implements store.Store.
func (s *Store) ObjectList(ctx context.Context, warehouse string, namespace []string, kind store.ObjectKind, page store.Page) ([]string, string, error) {
	out, next, err := s.objectList(ctx, warehouse, namespace, kind, page)
	if err != nil {
		return nil, "", s.wrap(err, "list "+string(kind)+"s")
	}
	return out, next, nil
}

// objectListSQL is one page of a namespace's tables or views, the
// namespace looked up inside (namespaceByName): a range of the index on
// (namespace_id, kind, name), read in its order.
const objectListSQL = `SELECT name FROM catalog_objects WHERE namespace_id = (SELECT n.id` + namespaceByName + `)
	AND kind = $3 AND name > $4 ORDER BY name LIMIT $5`

func (s *Store) objectList(ctx context.Context, warehouse string, namespace []string, kind store.ObjectKind, page store.Page) ([]string, string, error) {
	after := ""
	if page.Token != "" {
		var err error
		if after, err = decodeToken(page.Token); err != nil {
			// A missing namespace is reported before a bad token.
			if _, nsErr := s.NamespaceGet(ctx, warehouse, namespace); nsErr != nil {
				return nil, "", nsErr
			}
			return nil, "", err
		}
	}
	if page.Visible == nil {
		// One round trip in the common case: the namespace is looked up
		// inside the listing. Only an empty page needs a second query, to
		// tell an empty namespace from a missing one.
		rows, err := s.reads().Query(ctx, objectListSQL,
			warehouse, nsKey(namespace), string(kind), after, probeLimit(page.Size))
		if err != nil {
			return nil, "", err
		}
		names, next, err := pageOf(rows, page.Size)
		if err != nil || len(names) > 0 {
			return names, next, err
		}
		if _, err := s.NamespaceGet(ctx, warehouse, namespace); err != nil {
			return nil, "", err
		}
		return names, "", nil
	}
	ns, err := s.NamespaceGet(ctx, warehouse, namespace)
	if err != nil {
		return nil, "", err
	}
	sql, args := filteredObjectList(page.Visible, warehouse, namespace, ns.ID, string(kind), after, probeLimit(page.Size))
	rows, err := s.reads().Query(ctx, sql, args...)
	if err != nil {
		return nil, "", err
	}
	return pageOf(rows, page.Size)
}

// lockWarehouse serialises location-changing operations in one warehouse:
// the overlap check (checkOverlap, overlap.go) is then race-free on every
// isolation level.
func lockWarehouse(ctx context.Context, q sqldb.Querier, whID string) error {
	_, err := q.Exec(ctx, `UPDATE warehouses SET lock_seq = lock_seq + 1 WHERE id = $1`, whID)
	return err
}

// existingKindSQL reads the kind of the object of a name in a namespace.
// The kinds are listed so that both indexes on (namespace_id, name) and
// (namespace_id, kind, name) find it by equality alone: unlisted, Postgres
// preferred the second, which covers kind, and read through the whole
// namespace for the name.
const existingKindSQL = `SELECT kind FROM catalog_objects WHERE namespace_id = $1 AND kind IN ('table', 'view', 'function') AND name = $2`

func (s *Store) existingKind(ctx context.Context, q sqldb.Querier, nsID, name string) (store.ObjectKind, error) {
	var kind string
	err := q.QueryRow(ctx, existingKindSQL, nsID, name).Scan(&kind)
	if err != nil {
		if s.db.Classify(err) == sqldb.ClassNoRows {
			return "", nil
		}
		return "", err
	}
	return store.ObjectKind(kind), nil
}

func (s *Store) namespaceRow(ctx context.Context, q sqldb.Querier, warehouse string, levels []string) (nsID, whID string, err error) {
	err = q.QueryRow(ctx,
		`SELECT n.id, n.warehouse_id`+namespaceByName, warehouse, nsKey(levels)).Scan(&nsID, &whID)
	if err != nil && s.db.Classify(err) == sqldb.ClassNoRows {
		return "", "", fmt.Errorf("%w: %s", store.ErrNoSuchNamespace, strings.Join(levels, "."))
	}
	return nsID, whID, err
}

// ObjectCreate implements store.Store.
func (s *Store) ObjectCreate(ctx context.Context, o *store.Object) error {
	return s.putObject(ctx, o, false)
}

// ObjectReplace implements store.Store.
func (s *Store) ObjectReplace(ctx context.Context, o *store.Object) error {
	return s.putObject(ctx, o, true)
}

func (s *Store) putObject(ctx context.Context, o *store.Object, replace bool) error {
	wh := o.Warehouse
	err := s.inTx(ctx, func(q sqldb.Querier) error {
		nsID, whID, err := s.namespaceRow(ctx, q, wh, o.Namespace)
		if err != nil {
			return err
		}
		kind, err := s.existingKind(ctx, q, nsID, o.Name)
		if err != nil {
			return err
		}
		if kind != "" && !(replace && kind == o.Kind) {
			return &store.AlreadyExistsError{Kind: kind, Name: o.Ref().String()}
		}
		if err := lockWarehouse(ctx, q, whID); err != nil {
			return err
		}
		if replace && kind != "" {
			replaced, err := s.replaceNotHeld(ctx, q, nsID, o.Name)
			if err != nil {
				return err
			}
			// The replaced table's reports go with it: the new one is
			// another table (a new id).
			if err := deleteReports(ctx, q, replaced); err != nil {
				return err
			}
			// The replaced table's index goes with it; the new object
			// gets a new id, so its leaves are indexed afresh.
			if err := deleteIndex(ctx, q, `namespace_id = $1 AND name = $2`, nsID, o.Name); err != nil {
				return err
			}
			if _, err := q.Exec(ctx, `DELETE FROM catalog_objects WHERE namespace_id = $1 AND name = $2`, nsID, o.Name); err != nil {
				return err
			}
		}
		if err := s.checkOverlap(ctx, q, whID, "", o.Location); err != nil {
			return err
		}
		o.ID = uuid.NewString()
		o.NamespaceID = nsID
		o.UpdatedAt = s.clock.Now()
		_, err = q.Exec(ctx,
			`INSERT INTO catalog_objects (id, warehouse_id, namespace_id, name, kind, location, metadata_location, metadata, refs_metadata, format_version, updated_at)
			 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			o.ID, whID, nsID, o.Name, string(o.Kind), o.Location, o.MetadataLocation, pack(o.Metadata),
			packRefs(o.Metadata, o.RefsMetadata), o.FormatVersion, o.UpdatedAt.UnixMilli())
		if err != nil && s.db.Classify(err) == sqldb.ClassUnique {
			return &store.AlreadyExistsError{Kind: o.Kind, Name: o.Ref().String()}
		}
		if err == nil {
			o.WarehouseID = whID
		}
		return err
	})
	return s.wrap(err, "put "+string(o.Kind))
}

// replaceNotHeld locks the row a replace removes, returns its id ("" when
// there is none any more) and refuses when an orphan-file removal holds
// it: the new metadata may name any file under the table, the removal's
// candidates among them.
func (s *Store) replaceNotHeld(ctx context.Context, q sqldb.Querier, nsID, name string) (string, error) {
	var id string
	var hold int
	err := q.QueryRow(ctx, `UPDATE catalog_objects SET orphan_hold = orphan_hold WHERE namespace_id = $1 AND name = $2
		RETURNING id, orphan_hold`, nsID, name).Scan(&id, &hold)
	if err != nil && s.db.Classify(err) == sqldb.ClassNoRows {
		return "", nil // dropped meanwhile: nothing is replaced
	}
	if err != nil || hold == 0 {
		return id, err
	}
	// Tombstones alone do not refuse a replace: the replacing table has a
	// new id, and no removal is deleting under the location any more.
	var one int
	err = q.QueryRow(ctx, `SELECT 1 FROM orphan_candidates WHERE table_id = $1 AND state = 'candidate' LIMIT 1`, id).Scan(&one)
	if s.db.Classify(err) == sqldb.ClassNoRows {
		return id, nil
	}
	if err == nil {
		return "", &store.OrphanHoldError{ObjectID: id}
	}
	return "", err
}

// ObjectDelete implements store.Store.
func (s *Store) ObjectDelete(ctx context.Context, ref store.ObjectRef) (*store.Object, error) {
	return s.ObjectDeleteIf(ctx, ref, nil)
}

// ObjectDeleteIf implements store.Store.
func (s *Store) ObjectDeleteIf(ctx context.Context, ref store.ObjectRef, check func(*store.Object) error) (*store.Object, error) {
	var o *store.Object
	var refused error
	err := s.inTx(ctx, func(q sqldb.Querier) error {
		o = &store.Object{}
		err := scanObject(q.QueryRow(ctx,
			`SELECT `+objectCols+objectByName,
			ref.Warehouse, nsKey(ref.Namespace), ref.Name, string(ref.Kind)), o)
		if err != nil {
			if s.db.Classify(err) == sqldb.ClassNoRows {
				return notFound(ref)
			}
			return err
		}
		o.Namespace = ref.Namespace
		o.Warehouse = ref.Warehouse
		if check != nil {
			if refused = check(o); refused != nil {
				return refused
			}
		}
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
		return deleteReports(ctx, q, o.ID)
	})
	if refused != nil && errors.Is(err, refused) {
		return nil, refused
	}
	if err != nil {
		return nil, s.wrap(err, "delete "+string(ref.Kind))
	}
	return o, nil
}

// ObjectRename implements store.Store.
func (s *Store) ObjectRename(ctx context.Context, from store.ObjectRef, toNamespace []string, toName string) error {
	err := s.inTx(ctx, func(q sqldb.Querier) error {
		var id, srcNS string
		err := q.QueryRow(ctx,
			`SELECT o.id, o.namespace_id`+objectByName,
			from.Warehouse, nsKey(from.Namespace), from.Name, string(from.Kind)).Scan(&id, &srcNS)
		if err != nil {
			if s.db.Classify(err) == sqldb.ClassNoRows {
				return notFound(from)
			}
			return err
		}
		dstNS, _, err := s.namespaceRow(ctx, q, from.Warehouse, toNamespace)
		if err != nil {
			return err
		}
		if dstNS == srcNS && toName == from.Name {
			return nil
		}
		kind, err := s.existingKind(ctx, q, dstNS, toName)
		if err != nil {
			return err
		}
		to := store.ObjectRef{Warehouse: from.Warehouse, Namespace: toNamespace, Name: toName, Kind: kind}
		if kind != "" {
			return &store.AlreadyExistsError{Kind: kind, Name: to.String()}
		}
		_, err = q.Exec(ctx, `UPDATE catalog_objects SET namespace_id = $1, name = $2, updated_at = $3 WHERE id = $4`,
			dstNS, toName, s.clock.Now().UnixMilli(), id)
		if err != nil && s.db.Classify(err) == sqldb.ClassUnique {
			return &store.AlreadyExistsError{Kind: from.Kind, Name: to.String()}
		}
		return err
	})
	return s.wrap(err, "rename "+string(from.Kind))
}

// ObjectsSwap implements store.Store. The common commit — one table, same
// location, no Idempotency-Key, no leaves to index — is a single UPDATE
// that is its own transaction: one round trip and one row written.
// Everything else (several tables, a moved table, a fenced key, a v4
// commit that wrote data leaves) runs in one explicit transaction.
func (s *Store) ObjectsSwap(ctx context.Context, swaps []store.Swap) error {
	err := s.objectsSwap(ctx, swaps)
	if errors.Is(err, store.ErrOutcomeUnknown) && s.swapLanded(ctx, swaps) {
		return nil
	}
	return err
}

// resolveTimeout bounds the re-read that settles an unknown swap outcome.
const resolveTimeout = 5 * time.Second

// swapLanded re-reads the first swapped pointer after an unknown outcome,
// on a fresh statement within resolveTimeout. Metadata locations are never
// reused, so a pointer (or its predecessor, if another commit has already
// followed) naming this swap's new location proves the swap — and, being
// one transaction, every swap with it — landed. Anything else, including a
// failed re-read, proves nothing: the lost statement may still be on its
// way, so the outcome stays unknown.
func (s *Store) swapLanded(ctx context.Context, swaps []store.Swap) bool {
	if len(swaps) == 0 {
		return false
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resolveTimeout)
	defer cancel()
	var cur, prev string
	err := s.db.QueryRow(rctx, `SELECT COALESCE(metadata_location, ''), COALESCE(previous_metadata_location, '')
		FROM catalog_objects WHERE id = $1`, swaps[0].ObjectID).Scan(&cur, &prev)
	want := swaps[0].NewMetadataLocation
	return err == nil && want != "" && (cur == want || prev == want)
}

func (s *Store) objectsSwap(ctx context.Context, swaps []store.Swap) error {
	if _, _, fenced := store.IdempotencyFence(ctx); len(swaps) == 1 && swaps[0].NewLocation == "" && len(swaps[0].Index) == 0 && !fenced && len(store.JobsOf(ctx)) == 0 && len(store.EventsOf(ctx)) == 0 {
		sql, args := swapStatement(swaps[0], s.clock.Now(), true)
		n, err := s.db.ExecAlone(ctx, sql, args...)
		if err != nil || n == 1 {
			return s.wrap(err, "swap metadata pointer")
		}
		// The pointer moved or the table is held by an orphan-file
		// removal: the transaction below tells which.
	}
	err := s.inTx(ctx, func(q sqldb.Querier) error {
		for _, sw := range swaps {
			if sw.NewLocation != "" {
				if err := s.checkMove(ctx, q, sw); err != nil {
					return err
				}
			}
			// Index rows before the compare-and-swap: on Postgres the row
			// lock the UPDATE takes is then held only until COMMIT, not
			// while the rows are copied. A lost swap rolls them back.
			if err := insertNewIndex(ctx, q, sw.ObjectID, sw.Index); err != nil {
				return err
			}
			if err := s.swapOne(ctx, q, sw); err != nil {
				return err
			}
		}
		return nil
	})
	return s.wrap(err, "swap metadata pointers")
}

// swapOne swaps one pointer inside a transaction. The first UPDATE
// lands on a table no orphan-file removal holds; when it matches nothing,
// the second, without that condition, tells a moved pointer from a hold
// and, having locked the row, lets heldAdd see every claim ordered before
// it.
func (s *Store) swapOne(ctx context.Context, q sqldb.Querier, sw store.Swap) error {
	for _, free := range []bool{true, false} {
		sql, args := swapStatement(sw, s.clock.Now(), free)
		n, err := q.Exec(ctx, sql, args...)
		if err != nil {
			return err
		}
		if n == 1 && free {
			return nil
		}
		if n == 1 {
			return s.heldAdd(ctx, q, sw)
		}
	}
	return swapConflict(sw)
}

// swapStatement is the compare-and-swap UPDATE of one pointer: it matches
// no row when the pointer moved (or the object was dropped) and, when
// free, when an orphan-file removal holds the table. On Postgres the hold
// is part of the row, so an UPDATE that waited for a removal's claim
// re-checks it on the row the claim committed.
func swapStatement(sw store.Swap, now time.Time, free bool) (string, []any) {
	sql := `UPDATE catalog_objects SET metadata_location = $1, previous_metadata_location = metadata_location,
	        metadata = $2, refs_metadata = $3, format_version = $4, updated_at = $5`
	p := sw.Packed
	if p == nil {
		p = packSwap(sw)
	}
	args := []any{sw.NewMetadataLocation, p.Metadata, p.Refs,
		sw.NewFormatVersion, now.UnixMilli(), sw.ObjectID, sw.ExpectedMetadataLocation}
	if sw.NewLocation != "" {
		sql += `, location = $8`
		args = append(args, sw.NewLocation)
	}
	sql += ` WHERE id = $6 AND metadata_location = $7`
	if free {
		sql += ` AND orphan_hold = 0`
	}
	return sql, args
}

// PrepareSwap compresses sw's documents into sw.Packed.
func (s *Store) PrepareSwap(sw *store.Swap) { sw.Packed = packSwap(*sw) }

func packSwap(sw store.Swap) *store.PackedMetadata {
	return &store.PackedMetadata{Metadata: pack(sw.NewMetadata), Refs: packRefs(sw.NewMetadata, sw.NewRefsMetadata)}
}

func swapConflict(sw store.Swap) error {
	return fmt.Errorf("%w: metadata location of %s is no longer %s", store.ErrConflict, sw.ObjectID, sw.ExpectedMetadataLocation)
}

// checkMove checks, inside the swap transaction and under the warehouse
// lock, that an object's new location overlaps no other object's.
func (s *Store) checkMove(ctx context.Context, q sqldb.Querier, sw store.Swap) error {
	var whID string
	if err := q.QueryRow(ctx, `SELECT warehouse_id FROM catalog_objects WHERE id = $1`, sw.ObjectID).Scan(&whID); err != nil {
		if s.db.Classify(err) == sqldb.ClassNoRows {
			return fmt.Errorf("%w: object %s was dropped", store.ErrConflict, sw.ObjectID)
		}
		return err
	}
	if err := lockWarehouse(ctx, q, whID); err != nil {
		return err
	}
	return s.checkOverlap(ctx, q, whID, sw.ObjectID, sw.NewLocation)
}

// ---- idempotency ----

// maxClaimAttempts bounds the claim loop: each round either inserts, takes
// over an expired lease, or reads a record; a record vanishing between two
// statements (abandoned, purged) is the only reason to go round again.
const maxClaimAttempts = 4

// IdempotencyBegin implements store.Store.
func (s *Store) IdempotencyBegin(ctx context.Context, c store.IdempotencyClaim) (*store.IdempotencyRecord, error) {
	rec, err := s.idempotencyBegin(ctx, c)
	if err != nil {
		return nil, s.wrap(err, "claim idempotency key")
	}
	return rec, nil
}

func (s *Store) idempotencyBegin(ctx context.Context, c store.IdempotencyClaim) (*store.IdempotencyRecord, error) {
	now := s.clock.Now()
	// Expired records are purged lazily: cheap, and bounded by request rate.
	if _, err := s.db.Exec(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, now.Add(-c.TTL).UnixMilli()); err != nil {
		return nil, err
	}
	lease := now.Add(c.Lease).UnixMilli()
	for attempt := 0; attempt < maxClaimAttempts; attempt++ {
		n, err := s.db.Exec(ctx,
			`INSERT INTO idempotency_keys (key, operation, fingerprint, owner, lease_until, created_at)
			 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (key) DO NOTHING`,
			c.Key, c.Operation, c.Fingerprint, c.Owner, lease, now.UnixMilli())
		if err != nil || n == 1 {
			return nil, err
		}
		// In flight under a lease that ran out: its holder died or hangs.
		// The same request may take it over unless the holder already
		// changed the catalog; another request may not (the caller answers
		// from the record read below). A fingerprint of '' comes from
		// before fingerprints were stored.
		n, err = s.db.Exec(ctx,
			`UPDATE idempotency_keys SET owner = $1, lease_until = $2, fingerprint = $3
			 WHERE key = $4 AND done = 0 AND mutated = 0 AND lease_until < $5 AND (fingerprint = $3 OR fingerprint = '')`,
			c.Owner, lease, c.Fingerprint, c.Key, now.UnixMilli())
		if err != nil || n == 1 {
			return nil, err
		}
		rec, err := s.idempotencyGet(ctx, c.Key)
		if s.db.Classify(err) == sqldb.ClassNoRows {
			continue // released between our statements: claim again
		}
		return rec, err
	}
	return nil, fmt.Errorf("%w: idempotency key %s changed hands %d times", sqldb.ErrRetryTx, c.Key, maxClaimAttempts)
}

func (s *Store) idempotencyGet(ctx context.Context, key string) (*store.IdempotencyRecord, error) {
	rec := &store.IdempotencyRecord{Key: key}
	var done, mutated int
	var headers, body string
	var created, lease int64
	err := s.db.QueryRow(ctx,
		`SELECT operation, fingerprint, owner, done, mutated, status, headers, body, created_at, lease_until
		 FROM idempotency_keys WHERE key = $1`, key).
		Scan(&rec.Operation, &rec.Fingerprint, &rec.Owner, &done, &mutated, &rec.Status, &headers, &body, &created, &lease)
	if err != nil {
		return nil, err
	}
	rec.Done, rec.Mutated = done == 1, mutated == 1
	rec.Headers = unmarshalProps(headers)
	rec.Body = []byte(body)
	rec.CreatedAt = time.UnixMilli(created)
	rec.LeaseUntil = time.UnixMilli(lease)
	return rec, nil
}

// IdempotencyRenew implements store.Store.
func (s *Store) IdempotencyRenew(ctx context.Context, key, owner string, lease time.Duration) error {
	n, err := s.db.Exec(ctx, `UPDATE idempotency_keys SET lease_until = $1 WHERE key = $2 AND owner = $3 AND done = 0`,
		s.clock.Now().Add(lease).UnixMilli(), key, owner)
	if err != nil {
		return s.wrap(err, "renew idempotency key")
	}
	if n == 0 {
		return fmt.Errorf("%w: %s", store.ErrNotHeld, key)
	}
	return nil
}

// IdempotencyFinish implements store.Store.
func (s *Store) IdempotencyFinish(ctx context.Context, rec *store.IdempotencyRecord) error {
	n, err := s.db.Exec(ctx,
		`UPDATE idempotency_keys SET done = 1, status = $1, headers = $2, body = $3
		 WHERE key = $4 AND owner = $5 AND done = 0`,
		rec.Status, marshalProps(rec.Headers), string(rec.Body), rec.Key, rec.Owner)
	if err != nil {
		return s.wrap(err, "store idempotent outcome")
	}
	if n == 0 {
		return fmt.Errorf("%w: %s", store.ErrNotHeld, rec.Key)
	}
	return nil
}

// IdempotencyAbandon implements store.Store.
func (s *Store) IdempotencyAbandon(ctx context.Context, key, owner string) error {
	_, err := s.db.Exec(ctx, `DELETE FROM idempotency_keys WHERE key = $1 AND owner = $2 AND done = 0 AND mutated = 0`, key, owner)
	if err == nil {
		_, err = s.db.Exec(ctx, `UPDATE idempotency_keys SET lease_until = 0 WHERE key = $1 AND owner = $2 AND done = 0`, key, owner)
	}
	return s.wrap(err, "release idempotency key")
}

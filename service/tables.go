package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/storageaccess"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/service/tableaccess"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/createdef"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storagepath"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/store"
)

// reservedTableProperties are derived from metadata and never stored.
var reservedTableProperties = []string{
	"format-version", "uuid", "snapshot-count", "current-snapshot-id", "current-snapshot-summary",
	"current-snapshot-timestamp-ms", "current-schema", "default-partition-spec", "default-sort-order",
}

// CreateTableInput is a createTable request.
type CreateTableInput struct {
	Name        string
	Location    string
	Schema      json.RawMessage
	Spec        json.RawMessage
	SortOrder   json.RawMessage
	StageCreate bool
	Properties  map[string]string
	// Delegation asks for storage credentials or remote signing in the
	// result.
	Delegation Delegation
}

// TableResult is what createTable, registerTable, loadTable and commits
// return: the metadata JSON as stored, its location ("" for a staged create)
// and per-table client config.
type TableResult struct {
	MetadataLocation   string
	Metadata           []byte
	Config             map[string]string
	StorageCredentials []credentials.StorageCredential
	// RemoteSigning is set exactly when Config turns remote signing on
	// (storageaccess.RemoteSigningOf).
	RemoteSigning *RemoteSigningConfig
	// Warning, when set, is a caution about what the change costs (the
	// HTTP layer sends it as a Warning header): V4UpgradeWarning.
	Warning string
}

// CreateTable creates (or, with StageCreate, only prepares) a table with
// fresh field, partition and sort ids. 404 when the namespace is missing,
// 409 when the name is taken by a table or view, 400 for an invalid schema,
// spec, order or format version, and for a location or write.*.path
// property outside the warehouse (location policy).
func (s *Service) CreateTable(ctx context.Context, warehouse string, nsLevels []string, in CreateTableInput) (*TableResult, error) {
	id := Ident{Namespace: nsLevels, Name: in.Name}
	w, ns, err := s.ta.CreateTarget(ctx, warehouse, id, PrivTableCreate)
	if err != nil {
		return nil, err
	}
	if err := s.broker.CheckVend(ctx, w, id, in.Delegation); err != nil {
		return nil, err
	}
	schema, spec, order, err := createdef.Decode(in.Schema, in.Spec, in.SortOrder)
	if err != nil {
		return nil, err
	}
	props := iceberg.Properties{}
	for k, v := range in.Properties {
		props[k] = v
	}
	version := 2
	if v, ok := props["format-version"]; ok {
		switch v {
		case "1", "2", "3", "4":
			version = int(v[0] - '0')
		default:
			return nil, fault.New(fault.BadRequest, "Unsupported format version: %s (supported: 1 to 4)", v)
		}
	}
	if err := tableaccess.GuardV4(ctx, version, "Cannot create "+id.String()); err != nil {
		return nil, err
	}
	loc, canon, err := locations.NewObjectLocation(w, ns, in.Name, in.Location, props)
	if err != nil {
		return nil, err
	}
	formatProps := iceberg.Properties{}
	for k, v := range props {
		formatProps[k] = v
	}
	for _, k := range reservedTableProperties[1:] {
		delete(formatProps, k)
	}
	if version == FormatV4 {
		formatProps["format-version"] = "3" // built through the v3 view
	}
	if err := s.ta.ClockGuard(); err != nil {
		return nil, err
	}
	meta, err := table.NewMetadata(schema, spec, order, loc, formatProps)
	if err != nil {
		return nil, fault.Wrap(fault.BadRequest, err, "Invalid table definition: %s", fault.ClientText(err))
	}
	data, err := tablemeta.Marshal(meta, version)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encode metadata")
	}
	if err := s.tc.CheckNewMetadata(nil, meta, data); err != nil {
		return nil, err
	}
	if in.StageCreate {
		// Nothing is persisted; the name is only checked to fail early.
		for _, k := range []store.ObjectKind{store.KindTable, store.KindView, store.KindFunction} {
			if _, err := s.store.ObjectMetadataLocation(ctx, objRef(id, warehouse, k)); err == nil {
				return nil, tableaccess.AlreadyExists(&store.AlreadyExistsError{Kind: k}, store.KindTable, id)
			}
		}
		if err := prepareStagedMetadataDir(w, canon, props); err != nil {
			return nil, err
		}
		return s.tableResult(ctx, w, id, "", data, canon, in.Delegation)
	}
	metaLoc := tableaccess.NewMetadataLocation(loc, meta.Properties(), "")
	if err := s.ta.WriteFile(ctx, w, metaLoc, data); err != nil {
		return nil, err
	}
	obj := &store.Object{
		Warehouse: warehouse, Namespace: nsLevels, Name: in.Name, Kind: store.KindTable,
		Location: canon, MetadataLocation: metaLoc, Metadata: data, RefsMetadata: data, FormatVersion: version,
	}
	ectx := s.ta.WithEvent(ctx, func() store.Event {
		return changeevents.Create(changeevents.CreateTable, tableaccess.TableObject(warehouse, id, meta), tableaccess.Who(ctx), changeevents.CreateTableUpdates(meta, version))
	})
	if err := s.store.ObjectCreate(ectx, obj); err != nil {
		if !commitengine.MayHaveLanded(err) {
			s.ta.DeleteTableFile(ctx, w, canon, metaLoc)
		}
		return nil, tableaccess.PutErr(err, store.KindTable, id, warehouse)
	}
	return s.tableResult(ctx, w, id, metaLoc, data, canon, in.Delegation)
}

// tableResult assembles a TableResult with the storage access the client
// asked for (storageaccess.Broker.Grant, which says what is returned when).
func (s *Service) tableResult(ctx context.Context, w *store.Warehouse, id Ident, metaLoc string, data []byte, location string, deleg Delegation) (*TableResult, error) {
	cfg, creds, err := s.broker.Grant(ctx, w, id, metaLoc, data, location, deleg)
	if err != nil {
		return nil, err
	}
	return &TableResult{MetadataLocation: metaLoc, Metadata: data, Config: cfg, StorageCredentials: creds,
		RemoteSigning: storageaccess.RemoteSigningOf(cfg)}, nil
}

// RegisterTable adopts an existing metadata file as a table (with
// overwrite, replacing a table of that name). 404 when the namespace is
// missing or the file cannot be read, 409 when the name is taken or the
// table's location overlaps another table's or view's, 400 when
// the file or the locations it names are outside the warehouse (location
// policy) or it does not parse.
func (s *Service) RegisterTable(ctx context.Context, warehouse string, nsLevels []string, name, metadataLocation string, overwrite bool, deleg Delegation) (*TableResult, error) {
	id := Ident{Namespace: nsLevels, Name: name}
	if overwrite {
		// Replacing a table re-points it: a write to that table too.
		if err := s.ta.Authorize(ctx, PrivTableWriteMetadata, access.TableResource(warehouse, id.Namespace, id.Name)); err != nil {
			return nil, err
		}
	}
	w, data, err := s.ta.ReadForRegister(ctx, warehouse, id, metadataLocation, PrivTableCreate)
	if err != nil {
		return nil, err
	}
	if err := s.broker.CheckVend(ctx, w, id, deleg); err != nil {
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
	ectx := s.ta.WithEvent(ctx, func() store.Event {
		return changeevents.Create(changeevents.RegisterTable, tableaccess.TableObject(warehouse, id, meta), tableaccess.Who(ctx), nil)
	})
	if overwrite {
		err = s.store.ObjectReplace(ectx, obj)
	} else {
		err = s.store.ObjectCreate(ectx, obj)
	}
	if errors.Is(err, store.ErrLocationOverlap) {
		return nil, registerOverlap(err, id)
	}
	if err != nil {
		return nil, tableaccess.PutErr(err, store.KindTable, id, warehouse)
	}
	return s.tableResult(ctx, w, id, metaLoc, obj.Metadata, loc, deleg)
}

// registerOverlap is the 409 for registering metadata whose location
// equals, contains or lies inside another table's or view's. One location
// belongs to one live name (docs/design.md, "Register"): with two, a purge
// of either deletes the other's files, and credentials vended for one
// reach the other's. The other object is not named: the caller may not be
// allowed to see it.
func registerOverlap(err error, id Ident) error {
	return fault.Wrap(fault.AlreadyExists, err, "Cannot register %s: its location is already used by another table or view in this warehouse "+
		"(two names over the same files would let a purge of one delete the other's data); "+
		"drop that table without purge first, or re-register it under its own name with overwrite; "+
		"in a soft-delete warehouse a dropped table keeps its location until its retention ends: undrop it instead", id)
}

// TableETag returns the entity tag of a table's current representation
// (metadata location + snapshot mode) with one indexed lookup: the
// If-None-Match path. 404 when the table is missing or hidden, 403
// without table-read-metadata.
func (s *Service) TableETag(ctx context.Context, warehouse string, id Ident, snapshots string) (string, error) {
	if err := s.ta.Authorize(ctx, PrivTableReadMetadata, access.TableResource(warehouse, id.Namespace, id.Name)); err != nil {
		return "", err
	}
	return s.tableETag(ctx, warehouse, id, snapshots)
}

func (s *Service) tableETag(ctx context.Context, warehouse string, id Ident, snapshots string) (string, error) {
	loc, err := s.store.ObjectMetadataLocation(ctx, objRef(id, warehouse, store.KindTable))
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
func (s *Service) LoadTable(ctx context.Context, warehouse string, id Ident, snapshots string, deleg Delegation) (*TableResult, error) {
	if snapshots != "" && snapshots != "all" && snapshots != "refs" {
		return nil, fault.New(fault.BadRequest, "Invalid snapshots mode: %s (expected all or refs)", snapshots)
	}
	if err := ident.ValidateIdent(id); err != nil {
		return nil, err
	}
	if err := s.ta.AuthorizeLoad(ctx, PrivTableReadMetadata, store.KindTable, warehouse, id); err != nil {
		return nil, err
	}
	get := s.store.ObjectGet
	if snapshots == "refs" {
		get = s.store.ObjectGetRefs // the stored refs-only document, when there is one
	}
	obj, err := get(ctx, objRef(id, warehouse, store.KindTable))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ident.TableNotFound(err, id)
	}
	if err != nil {
		return nil, storefault.Of(err, warehouse)
	}
	if err := tableaccess.GuardV4(ctx, obj.FormatVersion, "Cannot load "+id.String()); err != nil {
		return nil, err
	}
	var w *store.Warehouse
	if s.opts.VerifyMetadataOnLoad || deleg != NoDelegation {
		if w, err = s.ta.Warehouse(ctx, warehouse); err != nil {
			return nil, err
		}
	}
	if s.opts.VerifyMetadataOnLoad {
		io, err := s.ta.FileIO(ctx, w, obj.MetadataLocation)
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
		if data, err = s.refsOnlyCached(obj.MetadataLocation, data); err != nil {
			return nil, fault.Wrap(fault.Internal, err, "filter snapshots")
		}
	}
	if w == nil {
		return &TableResult{MetadataLocation: obj.MetadataLocation, Metadata: data, Config: map[string]string{}}, nil
	}
	return s.tableResult(ctx, w, id, obj.MetadataLocation, data, obj.Location, deleg)
}

// refsOnlyCached memoises refsOnly per metadata location. A metadata file
// never changes once written, so the cache needs no invalidation and is
// safe across replicas; it only saves the filtering work.
func (s *Service) refsOnlyCached(metadataLocation string, data []byte) ([]byte, error) {
	if v, ok := s.refsCache.Get(metadataLocation); ok {
		return v, nil
	}
	out, err := tablemeta.RefsOnly(data)
	if err != nil {
		return nil, err
	}
	s.refsCache.Add(metadataLocation, out)
	return out, nil
}

// TableExists reports whether a table exists (404 NoSuchTable otherwise,
// also when hidden from the caller; 403 without table-list).
func (s *Service) TableExists(ctx context.Context, warehouse string, id Ident) error {
	if err := s.ta.AuthorizeLoad(ctx, PrivTableList, store.KindTable, warehouse, id); err != nil {
		return err
	}
	_, err := s.tableETag(ctx, warehouse, id, "")
	return err
}

// CheckMetricsReport checks that the caller may report metrics for a table
// (table-read-metadata: reports describe its scans and commits) and that
// it exists: 404 NoSuchTable when missing or hidden, 403 when denied.
func (s *Service) CheckMetricsReport(ctx context.Context, warehouse string, id Ident) error {
	if err := s.ta.Authorize(ctx, PrivTableReadMetadata, access.TableResource(warehouse, id.Namespace, id.Name)); err != nil {
		return err
	}
	_, err := s.tableETag(ctx, warehouse, id, "")
	return err
}

// ListTables lists the table names in a namespace the caller may see: all
// of them with table-list on the namespace or a container, else those it
// holds a privilege on (404 when the namespace is missing or hidden).
func (s *Service) ListTables(ctx context.Context, warehouse string, nsLevels []string, page Page) ([]string, string, error) {
	return s.listObjects(ctx, warehouse, nsLevels, store.KindTable, PrivTableList, page)
}

func (s *Service) listObjects(ctx context.Context, warehouse string, nsLevels []string, kind store.ObjectKind, priv Privilege, page Page) ([]string, string, error) {
	if err := ident.ValidateNamespace(nsLevels); err != nil {
		return nil, "", err
	}
	vis, err := s.listVisibility(ctx, priv, access.NamespaceResource(warehouse, nsLevels))
	if err != nil {
		return nil, "", err
	}
	sp := page.store()
	sp.Visible = vis
	names, next, err := s.store.ObjectList(ctx, warehouse, nsLevels, kind, sp)
	if errors.Is(err, store.ErrNoSuchNamespace) {
		return nil, "", ident.NamespaceNotFound(err, nsLevels)
	}
	return names, next, storefault.Of(err, warehouse)
}

// DropTable removes a table from the catalog; with purge it also enqueues,
// in the same transaction, a purge-table job that deletes the files its
// metadata references (never the whole directory), run by a worker of any
// replica. In a warehouse with the soft deletion profile the table is kept
// for undrop instead, and purged (with purge) when its retention ends
// (deleted.go). 404 when the table or the warehouse is missing.
func (s *Service) DropTable(ctx context.Context, warehouse string, id Ident, purge bool) error {
	if err := s.ta.Authorize(ctx, PrivTableDrop, access.TableResource(warehouse, id.Namespace, id.Name)); err != nil {
		return err
	}
	if purge {
		// Purging deletes the table's files: a data write as well.
		if err := s.ta.Authorize(ctx, PrivTableWriteData, access.TableResource(warehouse, id.Namespace, id.Name)); err != nil {
			return err
		}
	}
	w, err := s.ta.Warehouse(ctx, warehouse)
	if err != nil {
		return err
	}
	err = s.dropObject(ctx, w, objRef(id, warehouse, store.KindTable), purge)
	if errors.Is(err, store.ErrNotFound) {
		return ident.TableNotFound(err, id)
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
func (s *Service) UnregisterTable(ctx context.Context, warehouse string, id Ident) (*TableResult, error) {
	r := access.TableResource(warehouse, id.Namespace, id.Name)
	if err := s.ta.Authorize(ctx, PrivTableDrop, r); err != nil {
		return nil, err
	}
	if err := s.ta.Authorize(ctx, PrivTableReadMetadata, r); err != nil {
		return nil, err
	}
	obj, err := s.dropIf(ctx, objRef(id, warehouse, store.KindTable), changeevents.UnregisterTable, false, func(o *store.Object) error {
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

// RenameTable renames a table, possibly into another namespace of the same
// warehouse. 404 NoSuchTable for a missing source, 404 NoSuchNamespace for a
// missing destination namespace, 409 when the destination name is taken.
func (s *Service) RenameTable(ctx context.Context, warehouse string, from, to Ident) error {
	return s.renameObject(ctx, warehouse, store.KindTable, from, to)
}

func (s *Service) renameObject(ctx context.Context, warehouse string, kind store.ObjectKind, from, to Ident) error {
	if err := ident.ValidateIdent(from); err != nil {
		return err
	}
	if err := ident.ValidateIdent(to); err != nil {
		return err
	}
	// A rename drops the object where it is and creates it where it goes.
	drop, create, res := PrivTableDrop, PrivTableCreate, access.TableResource(warehouse, from.Namespace, from.Name)
	if kind == store.KindView {
		drop, create, res = PrivViewDrop, PrivViewCreate, access.ViewResource(warehouse, from.Namespace, from.Name)
	}
	if err := s.ta.Authorize(ctx, drop, res); err != nil {
		return err
	}
	if err := s.ta.Authorize(ctx, create, access.NamespaceResource(warehouse, to.Namespace)); err != nil {
		return err
	}
	ectx := ctx
	if s.ta.EventsOn() {
		// The event names the object's UUID, read first; a rename of an
		// object that is gone by then fails in the store below.
		if obj, gerr := s.store.ObjectGetRefs(ctx, objRef(from, warehouse, kind)); gerr == nil {
			ectx = store.WithEvents(ctx, changeevents.Rename(tableaccess.ObjectOf(obj), tableaccess.Who(ctx), to.Namespace, to.Name))
		}
	}
	err := s.store.ObjectRename(ectx, objRef(from, warehouse, kind), to.Namespace, to.Name)
	var ae *store.AlreadyExistsError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNoSuchTable):
		return ident.TableNotFound(err, from)
	case errors.Is(err, store.ErrNoSuchView):
		return ident.ViewNotFound(err, from)
	case errors.Is(err, store.ErrNoSuchNamespace):
		return ident.NamespaceNotFound(err, to.Namespace)
	case errors.As(err, &ae):
		what := "Table"
		switch ae.Kind {
		case store.KindView:
			what = "View"
		case store.KindFunction:
			what = "Function"
		}
		return fault.Wrap(fault.AlreadyExists, err, "Cannot rename %s to %s. %s already exists", from, to, what)
	}
	return storefault.Of(err, warehouse)
}

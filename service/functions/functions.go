// Package functions is the catalog's functions (SQL UDFs): objects of
// kind function whose UDF metadata document is written as a metadata file
// under the function's location and kept in the store like a view's. The
// REST spec serves them read-only (listFunctions, loadFunction); they are
// created and dropped through the management API and the CLI. Privileges
// are the view privileges on the function's namespace (or a container):
// grants name no single function. Listing is package tables' (shared
// with tables and views). It takes tableaccess and the commit engine as
// values (Deps); it never sees the service.
package functions

import (
	"context"
	"errors"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/validation"
)

// Deps are what functions need from the catalog, as values.
type Deps struct {
	// Tables gives the store, authorize, the create target's checks,
	// metadata files, the event builders and the clock guard.
	Tables *tableaccess.Access
	// Engine removes a metadata file whose create did not land.
	Engine *commitengine.Engine
}

// Functions creates, loads and drops functions.
type Functions struct {
	d Deps
}

// New returns the functions over d.
func New(d Deps) *Functions { return &Functions{d: d} }

// Result is what the function routes return.
type Result struct {
	MetadataLocation string
	Metadata         []byte
}

// resource is the securable a function is authorized on: its namespace.
func resource(warehouse string, id ident.Ident) access.Resource {
	return access.NamespaceResource(warehouse, id.Namespace)
}

func ref(id ident.Ident, warehouse string) store.ObjectRef {
	return store.ObjectRef{Warehouse: warehouse, Namespace: id.Namespace, Name: id.Name, Kind: store.KindFunction}
}

// Create stores a function from its UDF metadata document. 400
// ValidationException (reason invalid-function-metadata) for a document
// that lacks a required field of the UDF spec, 400 for a location outside
// the warehouse, 403 without view-create on the namespace, 404 when the
// namespace is missing, 409 when a table, view or function has the name,
// 503 while the clock is off the database's.
func (f *Functions) Create(ctx context.Context, warehouse string, nsLevels []string, name string, doc []byte) (*Result, error) {
	id := ident.Ident{Namespace: nsLevels, Name: name}
	ta := f.d.Tables
	w, ns, err := ta.CreateTarget(ctx, warehouse, id, access.PrivViewCreate)
	if err != nil {
		return nil, err
	}
	meta, verr := validation.ValidateFunctionMetadata(doc)
	if verr != nil {
		e := fault.New(fault.Validation, "%s", verr.Message)
		e.Reason = verr.Reason
		return nil, e
	}
	loc, canon, err := locations.NewObjectLocation(w, ns, name, meta.Location, nil)
	if err != nil {
		return nil, err
	}
	if err := ta.ClockGuard(); err != nil {
		return nil, err
	}
	data := tableaccess.CompactJSON(doc)
	metaLoc := tableaccess.NewMetadataLocation(loc, nil, "")
	if err := ta.WriteFile(ctx, w, metaLoc, data); err != nil {
		return nil, err
	}
	obj := &store.Object{
		Warehouse: warehouse, Namespace: nsLevels, Name: name, Kind: store.KindFunction,
		Location: canon, MetadataLocation: metaLoc, Metadata: data, FormatVersion: meta.FormatVersion,
	}
	ectx := ta.WithEvent(ctx, func() store.Event {
		o := tableaccess.DocObject(warehouse, id, store.KindFunction, data)
		return changeevents.Create(changeevents.CreateFunction, o, tableaccess.Who(ctx), nil)
	})
	if err := ta.Store().ObjectCreate(ectx, obj); err != nil {
		f.d.Engine.DropUnlanded(ctx, w, err, metaLoc)
		return nil, tableaccess.PutErr(err, store.KindFunction, id, warehouse)
	}
	return &Result{MetadataLocation: metaLoc, Metadata: data}, nil
}

// Load returns a function's metadata: 404 NoSuchFunction when it is
// missing, 404 NoSuchNamespace when its namespace is, 403 without
// view-read on the namespace.
func (f *Functions) Load(ctx context.Context, warehouse string, id ident.Ident) (*Result, error) {
	if err := ident.ValidateIdent(id); err != nil {
		return nil, err
	}
	if err := f.d.Tables.Authorize(ctx, access.PrivViewRead, resource(warehouse, id)); err != nil {
		return nil, err
	}
	obj, err := f.d.Tables.Store().ObjectGet(ctx, ref(id, warehouse))
	if errors.Is(err, store.ErrNotFound) {
		return nil, f.missing(ctx, err, warehouse, id)
	}
	if err != nil {
		return nil, storefault.Of(err, warehouse)
	}
	return &Result{MetadataLocation: obj.MetadataLocation, Metadata: obj.Metadata}, nil
}

// missing tells a missing namespace (NoSuchNamespace) from a missing
// function (NoSuchFunction), as the spec's 404 examples do.
func (f *Functions) missing(ctx context.Context, err error, warehouse string, id ident.Ident) error {
	if _, nsErr := f.d.Tables.Store().NamespaceGet(ctx, warehouse, id.Namespace); errors.Is(nsErr, store.ErrNotFound) {
		return ident.NamespaceNotFound(nsErr, id.Namespace)
	}
	return ident.FunctionNotFound(err, id)
}

// Drop removes a function; its metadata file stays, as a dropped view's
// do, and soft deletion does not apply (a dropped function cannot be
// undropped). 403 without view-drop on the namespace, 404 NoSuchFunction
// when it is missing, 503 when it kept being replaced meanwhile.
func (f *Functions) Drop(ctx context.Context, warehouse string, id ident.Ident) error {
	if err := ident.ValidateIdent(id); err != nil {
		return err
	}
	if err := f.d.Tables.Authorize(ctx, access.PrivViewDrop, resource(warehouse, id)); err != nil {
		return err
	}
	err := f.drop(ctx, ref(id, warehouse))
	if errors.Is(err, store.ErrNotFound) {
		return f.missing(ctx, err, warehouse, id)
	}
	return storefault.Of(err, warehouse)
}

// drop deletes the function r names with its drop event, which carries
// the function's UUID: read first, deleted only while it is the function
// read (one dropped and created again in between is read again).
func (f *Functions) drop(ctx context.Context, r store.ObjectRef) error {
	st := f.d.Tables.Store()
	for range 5 {
		obj, err := st.ObjectGet(ctx, r)
		if err != nil {
			return err
		}
		dctx := f.d.Tables.WithEvent(ctx, func() store.Event {
			return changeevents.Drop(changeevents.DropFunction, tableaccess.ObjectOf(obj), tableaccess.Who(ctx), false)
		})
		_, err = st.ObjectDeleteIf(dctx, r, func(o *store.Object) error {
			if o.MetadataLocation != obj.MetadataLocation {
				return errReplacedUnderDrop
			}
			return nil
		})
		if !errors.Is(err, errReplacedUnderDrop) {
			return err
		}
	}
	return fault.New(fault.Unavailable, "The function kept changing while it was being dropped; retry")
}

var errReplacedUnderDrop = errors.New("function replaced during drop")

package service

import (
	"context"
	"errors"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/validation"
)

// Functions (SQL UDFs) are catalog objects of kind function: the UDF
// metadata document is written as a metadata file under the function's
// location and cached in the store like a view's. The REST spec serves
// them read-only (listFunctions, loadFunction); they are created and
// dropped through the management API. Privileges are the view
// privileges on the function's namespace (or a container): grants name
// no single function.

// FunctionResult is what the function routes return.
type FunctionResult struct {
	MetadataLocation string
	Metadata         []byte
}

// functionResource is the securable a function is authorized on: its
// namespace.
func functionResource(warehouse string, id Ident) Resource {
	return access.NamespaceResource(warehouse, id.Namespace)
}

// CreateFunction stores a function from its UDF metadata document. 400
// ValidationException (reason invalid-function-metadata) for a document
// that lacks a required field of the UDF spec, 400 for a location outside
// the warehouse, 403 without view-create on the namespace, 404 when the
// namespace is missing, 409 when a table, view or function has the name,
// 503 while the clock is off the database's.
func (s *Service) CreateFunction(ctx context.Context, warehouse string, nsLevels []string, name string, doc []byte) (*FunctionResult, error) {
	id := Ident{Namespace: nsLevels, Name: name}
	w, ns, err := s.ta.CreateTarget(ctx, warehouse, id, PrivViewCreate)
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
	if err := s.ta.ClockGuard(); err != nil {
		return nil, err
	}
	data := tableaccess.CompactJSON(doc)
	metaLoc := tableaccess.NewMetadataLocation(loc, nil, "")
	if err := s.ta.WriteFile(ctx, w, metaLoc, data); err != nil {
		return nil, err
	}
	obj := &store.Object{
		Warehouse: warehouse, Namespace: nsLevels, Name: name, Kind: store.KindFunction,
		Location: canon, MetadataLocation: metaLoc, Metadata: data, FormatVersion: meta.FormatVersion,
	}
	ectx := s.ta.WithEvent(ctx, func() store.Event {
		o := tableaccess.DocObject(warehouse, id, store.KindFunction, data)
		return changeevents.Create(changeevents.CreateFunction, o, tableaccess.Who(ctx), nil)
	})
	if err := s.store.ObjectCreate(ectx, obj); err != nil {
		s.engine.DropUnlanded(ctx, w, err, metaLoc)
		return nil, tableaccess.PutErr(err, store.KindFunction, id, warehouse)
	}
	return &FunctionResult{MetadataLocation: metaLoc, Metadata: data}, nil
}

// LoadFunction returns a function's metadata: 404 NoSuchFunction when it
// is missing, 404 NoSuchNamespace when its namespace is, 403 without
// view-read on the namespace.
func (s *Service) LoadFunction(ctx context.Context, warehouse string, id Ident) (*FunctionResult, error) {
	if err := ident.ValidateIdent(id); err != nil {
		return nil, err
	}
	if err := s.ta.Authorize(ctx, PrivViewRead, functionResource(warehouse, id)); err != nil {
		return nil, err
	}
	obj, err := s.store.ObjectGet(ctx, objRef(id, warehouse, store.KindFunction))
	if errors.Is(err, store.ErrNotFound) {
		return nil, s.functionMissing(ctx, err, warehouse, id)
	}
	if err != nil {
		return nil, storefault.Of(err, warehouse)
	}
	return &FunctionResult{MetadataLocation: obj.MetadataLocation, Metadata: obj.Metadata}, nil
}

// functionMissing tells a missing namespace (NoSuchNamespace) from a
// missing function (NoSuchFunction), as the spec's 404 examples do.
func (s *Service) functionMissing(ctx context.Context, err error, warehouse string, id Ident) error {
	if _, nsErr := s.store.NamespaceGet(ctx, warehouse, id.Namespace); errors.Is(nsErr, store.ErrNotFound) {
		return ident.NamespaceNotFound(nsErr, id.Namespace)
	}
	return ident.FunctionNotFound(err, id)
}

// DropFunction removes a function; its metadata file stays, as a dropped
// view's do, and soft deletion does not apply (a dropped function cannot
// be undropped). 403 without view-drop on the namespace, 404
// NoSuchFunction when it is missing.
func (s *Service) DropFunction(ctx context.Context, warehouse string, id Ident) error {
	if err := ident.ValidateIdent(id); err != nil {
		return err
	}
	if err := s.ta.Authorize(ctx, PrivViewDrop, functionResource(warehouse, id)); err != nil {
		return err
	}
	err := s.dropFunction(ctx, objRef(id, warehouse, store.KindFunction))
	if errors.Is(err, store.ErrNotFound) {
		return s.functionMissing(ctx, err, warehouse, id)
	}
	return storefault.Of(err, warehouse)
}

// dropFunction deletes the function ref names with its drop event, which
// carries the function's UUID: read first, deleted only while it is the
// function read (one dropped and created again in between is read again).
func (s *Service) dropFunction(ctx context.Context, ref store.ObjectRef) error {
	for range 5 {
		obj, err := s.store.ObjectGet(ctx, ref)
		if err != nil {
			return err
		}
		dctx := s.ta.WithEvent(ctx, func() store.Event {
			return changeevents.Drop(changeevents.DropFunction, tableaccess.ObjectOf(obj), tableaccess.Who(ctx), false)
		})
		_, err = s.store.ObjectDeleteIf(dctx, ref, func(o *store.Object) error {
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

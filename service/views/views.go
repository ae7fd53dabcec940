// Package views is the catalog's views: their creation and registration,
// loads and existence checks, and the commits that replace them
// (requirements checked and updates applied to the stored metadata, a new
// metadata file written, the pointer swapped by the commit engine).
// Listing, renaming and dropping are package tables', which shares them
// with tables. It takes the store, an authorizer, the commit loop, the writes
// of metadata files and the event builders as values (Deps); it never
// sees the service.
package views

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/view"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/createdef"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
)

// Deps are what views need from the catalog, as values.
type Deps struct {
	// Tables gives the store, authorize, the warehouse lookup, the checks
	// of a create or register, metadata files, the event builders and the
	// clock guard.
	Tables *tableaccess.Access
	// Engine runs the commit loop of a replace.
	Engine *commitengine.Engine
}

// Views creates, reads and replaces views; their drop is package
// tables' (the one drop path, by the warehouse's deletion profile).
type Views struct {
	d Deps
}

// New returns the views over d.
func New(d Deps) *Views {
	return &Views{d: d}
}

// CreateInput is a createView request.
type CreateInput struct {
	Name        string
	Location    string
	Schema      json.RawMessage
	ViewVersion json.RawMessage
	Properties  map[string]string
}

// Result is what view routes return.
type Result struct {
	MetadataLocation string
	Metadata         []byte
}

// objRef is id's key in the store.
func objRef(id ident.Ident, warehouse string) store.ObjectRef {
	return store.ObjectRef{Warehouse: warehouse, Namespace: id.Namespace, Name: id.Name, Kind: store.KindView}
}

// resource names a view securable.
func resource(warehouse string, id ident.Ident) access.Resource {
	return access.ViewResource(warehouse, id.Namespace, id.Name)
}

// object names a view by its new metadata, for its events.
func object(warehouse string, id ident.Ident, meta view.Metadata) changeevents.Object {
	return changeevents.Object{Warehouse: warehouse, Namespace: id.Namespace, Name: id.Name, Kind: store.KindView,
		UUID: meta.ViewUUID().String(), Location: meta.Location()}
}

// Create creates a view; the server assigns schema id 0 and version 1.
// 404 when the namespace is missing, 409 when a view or table has the name,
// 400 for an invalid schema or version.
func (v *Views) Create(ctx context.Context, warehouse string, nsLevels []string, in CreateInput) (*Result, error) {
	id := ident.Ident{Namespace: nsLevels, Name: in.Name}
	w, ns, err := v.d.Tables.CreateTarget(ctx, warehouse, id, access.PrivViewCreate)
	if err != nil {
		return nil, err
	}
	var schema iceberg.Schema
	if err := json.Unmarshal(in.Schema, &schema); err != nil {
		return nil, fault.Wrap(fault.BadRequest, err, "Invalid schema: %s", createdef.SchemaText(in.Schema, err))
	}
	var version view.Version
	if err := json.Unmarshal(in.ViewVersion, &version); err != nil {
		return nil, fault.Wrap(fault.BadRequest, err, "Invalid view-version: %s", fault.ClientText(err))
	}
	props := iceberg.Properties{}
	for k, val := range in.Properties {
		props[k] = val
	}
	loc, canon, err := locations.NewObjectLocation(w, ns, in.Name, in.Location, props)
	if err != nil {
		return nil, err
	}
	if err := v.d.Tables.ClockGuard(); err != nil {
		return nil, err
	}
	meta, err := view.NewMetadata(&version, &schema, loc, props)
	if err != nil {
		return nil, fault.Wrap(fault.IllegalArgument, err, "%s", fault.ClientText(err))
	}
	data, err := json.Marshal(meta)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encode view metadata")
	}
	metaLoc := tableaccess.NewMetadataLocation(loc, meta.Properties(), "")
	if err := v.d.Tables.WriteFile(ctx, w, metaLoc, data); err != nil {
		return nil, err
	}
	obj := &store.Object{
		Warehouse: warehouse, Namespace: nsLevels, Name: in.Name, Kind: store.KindView,
		Location: canon, MetadataLocation: metaLoc, Metadata: data, FormatVersion: meta.FormatVersion(),
	}
	ectx := v.d.Tables.WithEvent(ctx, func() store.Event {
		return changeevents.Create(changeevents.CreateView, object(warehouse, id, meta), tableaccess.Who(ctx), changeevents.CreateViewUpdates(data))
	})
	if err := v.d.Tables.Store().ObjectCreate(ectx, obj); err != nil {
		v.d.Engine.DropUnlanded(ctx, w, err, metaLoc)
		return nil, tableaccess.PutErr(err, store.KindView, id, warehouse)
	}
	return &Result{MetadataLocation: metaLoc, Metadata: data}, nil
}

// Load returns a view's metadata, or 404 NoSuchView.
func (v *Views) Load(ctx context.Context, warehouse string, id ident.Ident) (*Result, error) {
	if err := ident.ValidateIdent(id); err != nil {
		return nil, err
	}
	if err := v.d.Tables.AuthorizeLoad(ctx, access.PrivViewRead, store.KindView, warehouse, id); err != nil {
		return nil, err
	}
	obj, err := v.d.Tables.Store().ObjectGet(ctx, objRef(id, warehouse))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ident.ViewNotFound(err, id)
	}
	if err != nil {
		return nil, storefault.Of(err, warehouse)
	}
	return &Result{MetadataLocation: obj.MetadataLocation, Metadata: obj.Metadata}, nil
}

// Exists reports whether a view exists: nil when it does, 404 NoSuchView
// when not.
func (v *Views) Exists(ctx context.Context, warehouse string, id ident.Ident) error {
	if err := v.d.Tables.AuthorizeLoad(ctx, access.PrivViewRead, store.KindView, warehouse, id); err != nil {
		return err
	}
	_, err := v.d.Tables.Store().ObjectMetadataLocation(ctx, objRef(id, warehouse))
	if errors.Is(err, store.ErrNotFound) {
		return ident.ViewNotFound(err, id)
	}
	return storefault.Of(err, warehouse)
}

// Replace commits view updates with server-side retries on lost races:
// 404 when missing, 409 on a failed requirement or exhausted retries.
func (v *Views) Replace(ctx context.Context, warehouse string, id ident.Ident, requirements, updates json.RawMessage) (*Result, error) {
	if err := ident.ValidateIdent(id); err != nil {
		return nil, err
	}
	var reqs view.Requirements
	if len(requirements) > 0 && string(requirements) != "null" {
		if err := json.Unmarshal(requirements, &reqs); err != nil {
			return nil, fault.Wrap(fault.BadRequest, err, "Invalid requirements: %s", fault.ClientText(err))
		}
	}
	var ups view.Updates
	if err := json.Unmarshal(updates, &ups); err != nil {
		return nil, fault.Wrap(fault.BadRequest, err, "Invalid updates: %s", fault.ClientText(err))
	}
	if err := v.d.Tables.Authorize(ctx, access.PrivViewReplace, resource(warehouse, id)); err != nil {
		return nil, err
	}
	w, err := v.d.Tables.Warehouse(ctx, warehouse)
	if err != nil {
		return nil, err
	}
	var res *Result
	err = v.d.Engine.Run(ctx, w, "view", func(ctx context.Context) (*commitengine.Attempt, error) {
		var a *commitengine.Attempt
		res, a, err = v.stage(ctx, w, id, reqs, ups)
		if err == nil && len(a.Swaps) > 0 {
			v.d.Tables.AddEvent(a, func() store.Event {
				return changeevents.Update(tableaccess.DocObject(w.Name, id, store.KindView, res.Metadata), tableaccess.Who(ctx), updates, requirements)
			})
		}
		return a, err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// stage stages one attempt of a view commit: 404 when the view is gone,
// 409 on a failed requirement, 400 for an invalid update.
func (v *Views) stage(ctx context.Context, w *store.Warehouse, id ident.Ident, reqs view.Requirements, ups view.Updates) (*Result, *commitengine.Attempt, error) {
	obj, err := v.d.Tables.Store().ObjectGet(ctx, objRef(id, w.Name))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, ident.ViewNotFound(err, id)
	}
	if err != nil {
		return nil, nil, storefault.Of(err, w.Name)
	}
	base, err := view.ParseMetadataBytes(obj.Metadata)
	if err != nil {
		return nil, nil, fault.Wrap(fault.Internal, err, "stored metadata of view %s does not parse", id)
	}
	for _, r := range reqs {
		if err := r.Validate(base); err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "Requirement failed") {
				msg = "Requirement failed: " + msg
			}
			return nil, nil, fault.Wrap(fault.CommitFailed, err, "%s", msg)
		}
	}
	b, err := view.MetadataBuilderFromBase(base)
	if err != nil {
		return nil, nil, fault.Wrap(fault.Internal, err, "view metadata builder")
	}
	for _, u := range ups {
		if err := u.Apply(b); err != nil {
			return nil, nil, fault.Wrap(fault.IllegalArgument, err, "%s", fault.ClientText(err))
		}
	}
	if !b.HasChanges() {
		return &Result{MetadataLocation: obj.MetadataLocation, Metadata: obj.Metadata}, &commitengine.Attempt{}, nil
	}
	meta, err := b.Build()
	if err != nil {
		return nil, nil, fault.Wrap(fault.IllegalArgument, err, "%s", fault.ClientText(err))
	}
	data, err := json.Marshal(meta)
	if err != nil {
		return nil, nil, fault.Wrap(fault.Internal, err, "encode view metadata")
	}
	metaLoc, newLoc, err := v.d.Tables.WriteNextMetadata(ctx, w, obj, meta.Location(), meta.Properties(), data)
	if err != nil {
		return nil, nil, err
	}
	a := &commitengine.Attempt{Written: []string{metaLoc}, Swaps: []store.Swap{{
		ObjectID: obj.ID, ExpectedMetadataLocation: obj.MetadataLocation, NewMetadataLocation: metaLoc,
		NewMetadata: data, NewFormatVersion: meta.FormatVersion(), NewLocation: newLoc,
		AddsListed: true, // a view names no files of a table
	}}}
	return &Result{MetadataLocation: metaLoc, Metadata: data}, a, nil
}

// Register adopts an existing view metadata file. 404 when the namespace
// is missing or the file cannot be read, 409 when the name is taken by a
// view or table, 400 when the file is not view metadata.
func (v *Views) Register(ctx context.Context, warehouse string, nsLevels []string, name, metadataLocation string) (*Result, error) {
	id := ident.Ident{Namespace: nsLevels, Name: name}
	w, data, err := v.d.Tables.ReadForRegister(ctx, warehouse, id, metadataLocation, access.PrivViewCreate)
	if err != nil {
		return nil, err
	}
	meta, err := view.ParseMetadataBytes(data)
	if err != nil {
		return nil, fault.Wrap(fault.BadRequest, err, "Invalid view metadata in %s: the file is not view metadata JSON",
			locations.FileName(w, w.Location, metadataLocation))
	}
	loc, err := locations.CheckObjectLocation(w, meta.Location())
	if err != nil {
		return nil, err
	}
	if err := locations.CheckWritePaths(w, loc, meta.Properties()); err != nil {
		return nil, err
	}
	obj := &store.Object{
		Warehouse: warehouse, Namespace: nsLevels, Name: name, Kind: store.KindView,
		Location: loc, MetadataLocation: metadataLocation, Metadata: tableaccess.CompactJSON(data), FormatVersion: meta.FormatVersion(),
	}
	ectx := v.d.Tables.WithEvent(ctx, func() store.Event {
		return changeevents.Create(changeevents.CreateView, tableaccess.ObjectOf(obj), tableaccess.Who(ctx), nil)
	})
	if err := v.d.Tables.Store().ObjectCreate(ectx, obj); err != nil {
		return nil, tableaccess.PutErr(err, store.KindView, id, warehouse)
	}
	return &Result{MetadataLocation: metadataLocation, Metadata: obj.Metadata}, nil
}

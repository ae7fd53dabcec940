// Package views is the catalog's views: their creation and registration,
// loads and existence checks, drops, and the commits that replace them
// (requirements checked and updates applied to the stored metadata, a new
// metadata file written, the pointer swapped by the commit engine).
// Listing and renaming stay with the service, which shares them with
// tables. It takes the store, an authorizer, the commit loop, the writes
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
	"github.com/lakehold/catalog/service/tablecommit"
	"github.com/lakehold/catalog/store"
)

// Deps are what views need from the catalog, as values.
type Deps struct {
	Store store.Store
	// Authorize checks that the caller in ctx holds priv on r: nil when it
	// does, a refusal when it does not, any other error when it cannot
	// tell.
	Authorize func(ctx context.Context, priv access.Privilege, r access.Resource) error
	// AuthorizeLoad authorizes reading one object of kind; a refused
	// caller gets the 404 an allowed one would when it does not exist.
	AuthorizeLoad func(ctx context.Context, priv access.Privilege, kind store.ObjectKind, warehouse string, id ident.Ident) error
	// Warehouse returns the named warehouse, or its 404 (or the store's
	// error).
	Warehouse func(ctx context.Context, name string) (*store.Warehouse, error)
	// CreateTarget checks a new object's identifier, authorizes priv on
	// its namespace and returns the warehouse and namespace: 404 when the
	// namespace is missing (or hidden), 403 when denied.
	CreateTarget func(ctx context.Context, warehouse string, id ident.Ident, priv access.Privilege) (*store.Warehouse, *store.Namespace, error)
	// ReadForRegister does CreateTarget's checks and reads the metadata
	// file a register request names: 400 for a location outside the
	// warehouse, 404 when it cannot be read.
	ReadForRegister func(ctx context.Context, warehouse string, id ident.Ident, metadataLocation string, priv access.Privilege) (*store.Warehouse, []byte, error)
	// DropObject removes (or soft-deletes) an object: store.ErrNotFound
	// when it is missing, the store's errors otherwise.
	DropObject func(ctx context.Context, w *store.Warehouse, ref store.ObjectRef, purge bool) error
	// ClockGuard refuses creates (503) while this process's clock is off
	// the database's.
	ClockGuard func() error

	// RunCommit runs stage through the commit loop; DropUnlanded deletes
	// the files of a write that failed with err unless it may have landed.
	RunCommit    func(ctx context.Context, w *store.Warehouse, subject string, stage commitengine.Stage) error
	DropUnlanded func(ctx context.Context, w *store.Warehouse, err error, files ...string)
	// WriteFile writes a new metadata file; WriteNextMetadata writes the
	// one after obj's and returns its location and the object's location
	// (tablecommit.Committer).
	WriteFile         func(ctx context.Context, w *store.Warehouse, loc string, data []byte) error
	WriteNextMetadata func(ctx context.Context, w *store.Warehouse, obj *store.Object, loc string, props map[string]string, data []byte) (string, string, error)

	// PutErr maps the errors of creating an object.
	PutErr func(err error, kind store.ObjectKind, id ident.Ident, warehouse string) error
	// CompactJSON is a registered file's JSON without insignificant space.
	CompactJSON func(b []byte) []byte

	// AddEvent adds an event to a commit attempt and WithEvent to a
	// store change's context, when events are on; the rest build them.
	AddEvent  func(a *commitengine.Attempt, build func() store.Event)
	WithEvent func(ctx context.Context, build func() store.Event) context.Context
	Who       func(ctx context.Context) changeevents.Who
	ObjectOf  func(obj *store.Object) changeevents.Object
	DocObject func(warehouse string, id ident.Ident, kind store.ObjectKind, doc []byte) changeevents.Object
}

// Views creates, reads, replaces and drops views.
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
	w, ns, err := v.d.CreateTarget(ctx, warehouse, id, access.PrivViewCreate)
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
	if err := v.d.ClockGuard(); err != nil {
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
	metaLoc := tablecommit.NewMetadataLocation(loc, meta.Properties(), "")
	if err := v.d.WriteFile(ctx, w, metaLoc, data); err != nil {
		return nil, err
	}
	obj := &store.Object{
		Warehouse: warehouse, Namespace: nsLevels, Name: in.Name, Kind: store.KindView,
		Location: canon, MetadataLocation: metaLoc, Metadata: data, FormatVersion: meta.FormatVersion(),
	}
	ectx := v.d.WithEvent(ctx, func() store.Event {
		return changeevents.Create(changeevents.CreateView, object(warehouse, id, meta), v.d.Who(ctx), changeevents.CreateViewUpdates(data))
	})
	if err := v.d.Store.ObjectCreate(ectx, obj); err != nil {
		v.d.DropUnlanded(ctx, w, err, metaLoc)
		return nil, v.d.PutErr(err, store.KindView, id, warehouse)
	}
	return &Result{MetadataLocation: metaLoc, Metadata: data}, nil
}

// Load returns a view's metadata, or 404 NoSuchView.
func (v *Views) Load(ctx context.Context, warehouse string, id ident.Ident) (*Result, error) {
	if err := ident.ValidateIdent(id); err != nil {
		return nil, err
	}
	if err := v.d.AuthorizeLoad(ctx, access.PrivViewRead, store.KindView, warehouse, id); err != nil {
		return nil, err
	}
	obj, err := v.d.Store.ObjectGet(ctx, objRef(id, warehouse))
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
	if err := v.d.AuthorizeLoad(ctx, access.PrivViewRead, store.KindView, warehouse, id); err != nil {
		return err
	}
	_, err := v.d.Store.ObjectMetadataLocation(ctx, objRef(id, warehouse))
	if errors.Is(err, store.ErrNotFound) {
		return ident.ViewNotFound(err, id)
	}
	return storefault.Of(err, warehouse)
}

// Drop removes a view (its files stay), or soft-deletes it in a warehouse
// with the soft deletion profile. 404 when missing.
func (v *Views) Drop(ctx context.Context, warehouse string, id ident.Ident) error {
	if err := v.d.Authorize(ctx, access.PrivViewDrop, resource(warehouse, id)); err != nil {
		return err
	}
	w, err := v.d.Warehouse(ctx, warehouse)
	if err != nil {
		return err
	}
	err = v.d.DropObject(ctx, w, objRef(id, warehouse), false)
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
	if err := v.d.Authorize(ctx, access.PrivViewReplace, resource(warehouse, id)); err != nil {
		return nil, err
	}
	w, err := v.d.Warehouse(ctx, warehouse)
	if err != nil {
		return nil, err
	}
	var res *Result
	err = v.d.RunCommit(ctx, w, "view", func(ctx context.Context) (*commitengine.Attempt, error) {
		var a *commitengine.Attempt
		res, a, err = v.stage(ctx, w, id, reqs, ups)
		if err == nil && len(a.Swaps) > 0 {
			v.d.AddEvent(a, func() store.Event {
				return changeevents.Update(v.d.DocObject(w.Name, id, store.KindView, res.Metadata), v.d.Who(ctx), updates, requirements)
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
	obj, err := v.d.Store.ObjectGet(ctx, objRef(id, w.Name))
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
	metaLoc, newLoc, err := v.d.WriteNextMetadata(ctx, w, obj, meta.Location(), meta.Properties(), data)
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
	w, data, err := v.d.ReadForRegister(ctx, warehouse, id, metadataLocation, access.PrivViewCreate)
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
		Location: loc, MetadataLocation: metadataLocation, Metadata: v.d.CompactJSON(data), FormatVersion: meta.FormatVersion(),
	}
	ectx := v.d.WithEvent(ctx, func() store.Event {
		return changeevents.Create(changeevents.CreateView, v.d.ObjectOf(obj), v.d.Who(ctx), nil)
	})
	if err := v.d.Store.ObjectCreate(ectx, obj); err != nil {
		return nil, v.d.PutErr(err, store.KindView, id, warehouse)
	}
	return &Result{MetadataLocation: metadataLocation, Metadata: obj.Metadata}, nil
}

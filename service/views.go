package service

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/lakehold/catalog/service/commitengine"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/view"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/createdef"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/store"
)

// CreateViewInput is a createView request.
type CreateViewInput struct {
	Name        string
	Location    string
	Schema      json.RawMessage
	ViewVersion json.RawMessage
	Properties  map[string]string
}

// ViewResult is what view routes return.
type ViewResult struct {
	MetadataLocation string
	Metadata         []byte
}

// CreateView creates a view; the server assigns schema id 0 and version 1.
// 404 when the namespace is missing, 409 when a view or table has the name,
// 400 for an invalid schema or version.
func (s *Service) CreateView(ctx context.Context, warehouse string, nsLevels []string, in CreateViewInput) (*ViewResult, error) {
	id := Ident{Namespace: nsLevels, Name: in.Name}
	w, ns, err := s.createTarget(ctx, warehouse, id, PrivViewCreate)
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
	for k, v := range in.Properties {
		props[k] = v
	}
	loc, canon, err := newObjectLocation(w, ns, in.Name, in.Location, props)
	if err != nil {
		return nil, err
	}
	if err := s.clockGuard(); err != nil {
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
	metaLoc := newMetadataLocation(loc, meta.Properties(), "")
	if err := s.writeMetadataFile(ctx, w, metaLoc, data); err != nil {
		return nil, err
	}
	obj := &store.Object{
		Warehouse: warehouse, Namespace: nsLevels, Name: in.Name, Kind: store.KindView,
		Location: canon, MetadataLocation: metaLoc, Metadata: data, FormatVersion: meta.FormatVersion(),
	}
	ectx := s.withEvent(ctx, func() store.Event {
		return changeevents.Create(changeevents.CreateView, viewObject(warehouse, id, meta), who(ctx), changeevents.CreateViewUpdates(data))
	})
	if err := s.store.ObjectCreate(ectx, obj); err != nil {
		s.dropUnlanded(ctx, w, err, metaLoc)
		return nil, putErr(err, store.KindView, id, warehouse)
	}
	return &ViewResult{MetadataLocation: metaLoc, Metadata: data}, nil
}

// LoadView returns a view's metadata, or 404 NoSuchView.
func (s *Service) LoadView(ctx context.Context, warehouse string, id Ident) (*ViewResult, error) {
	if err := validateIdent(id); err != nil {
		return nil, err
	}
	if err := s.authorizeLoad(ctx, PrivViewRead, store.KindView, warehouse, id); err != nil {
		return nil, err
	}
	obj, err := s.store.ObjectGet(ctx, objRef(id, warehouse, store.KindView))
	if errors.Is(err, store.ErrNotFound) {
		return nil, viewNotFound(err, id)
	}
	if err != nil {
		return nil, storeErr(err, warehouse)
	}
	return &ViewResult{MetadataLocation: obj.MetadataLocation, Metadata: obj.Metadata}, nil
}

// ViewExists reports whether a view exists (404 NoSuchView otherwise).
func (s *Service) ViewExists(ctx context.Context, warehouse string, id Ident) error {
	if err := s.authorizeLoad(ctx, PrivViewRead, store.KindView, warehouse, id); err != nil {
		return err
	}
	_, err := s.store.ObjectMetadataLocation(ctx, objRef(id, warehouse, store.KindView))
	if errors.Is(err, store.ErrNotFound) {
		return viewNotFound(err, id)
	}
	return storeErr(err, warehouse)
}

// ListViews lists view names in a namespace; 404 when it is missing.
func (s *Service) ListViews(ctx context.Context, warehouse string, nsLevels []string, page Page) ([]string, string, error) {
	return s.listObjects(ctx, warehouse, nsLevels, store.KindView, PrivViewRead, page)
}

// DropView removes a view (its files stay), or soft-deletes it in a
// warehouse with the soft deletion profile. 404 when missing.
func (s *Service) DropView(ctx context.Context, warehouse string, id Ident) error {
	if err := s.authorize(ctx, PrivViewDrop, viewResource(warehouse, id)); err != nil {
		return err
	}
	w, err := s.warehouse(ctx, warehouse)
	if err != nil {
		return err
	}
	err = s.dropObject(ctx, w, objRef(id, warehouse, store.KindView), false)
	if errors.Is(err, store.ErrNotFound) {
		return viewNotFound(err, id)
	}
	return storeErr(err, warehouse)
}

// RenameView renames a view; errors as RenameTable.
func (s *Service) RenameView(ctx context.Context, warehouse string, from, to Ident) error {
	return s.renameObject(ctx, warehouse, store.KindView, from, to)
}

// ReplaceView commits view updates with server-side retries on lost races:
// 404 when missing, 409 on a failed requirement or exhausted retries.
func (s *Service) ReplaceView(ctx context.Context, warehouse string, id Ident, requirements, updates json.RawMessage) (*ViewResult, error) {
	if err := validateIdent(id); err != nil {
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
	if err := s.authorize(ctx, PrivViewReplace, viewResource(warehouse, id)); err != nil {
		return nil, err
	}
	w, err := s.warehouse(ctx, warehouse)
	if err != nil {
		return nil, err
	}
	var res *ViewResult
	err = s.runCommit(ctx, w, "view", func(ctx context.Context) (*commitengine.Attempt, error) {
		var a *commitengine.Attempt
		res, a, err = s.stageView(ctx, w, id, reqs, ups)
		if err == nil && len(a.Swaps) > 0 {
			s.addEvent(a, func() store.Event {
				return changeevents.Update(docObject(w.Name, id, store.KindView, res.Metadata), who(ctx), updates, requirements)
			})
		}
		return a, err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// stageView stages one attempt of a view commit: 404 when the view is
// gone, 409 on a failed requirement, 400 for an invalid update.
func (s *Service) stageView(ctx context.Context, w *store.Warehouse, id Ident, reqs view.Requirements, ups view.Updates) (*ViewResult, *commitengine.Attempt, error) {
	obj, err := s.store.ObjectGet(ctx, objRef(id, w.Name, store.KindView))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, viewNotFound(err, id)
	}
	if err != nil {
		return nil, nil, storeErr(err, w.Name)
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
		return &ViewResult{MetadataLocation: obj.MetadataLocation, Metadata: obj.Metadata}, &commitengine.Attempt{}, nil
	}
	meta, err := b.Build()
	if err != nil {
		return nil, nil, fault.Wrap(fault.IllegalArgument, err, "%s", fault.ClientText(err))
	}
	data, err := json.Marshal(meta)
	if err != nil {
		return nil, nil, fault.Wrap(fault.Internal, err, "encode view metadata")
	}
	metaLoc, newLoc, err := s.writeNextMetadata(ctx, w, obj, meta.Location(), meta.Properties(), data)
	if err != nil {
		return nil, nil, err
	}
	a := &commitengine.Attempt{Written: []string{metaLoc}, Swaps: []store.Swap{{
		ObjectID: obj.ID, ExpectedMetadataLocation: obj.MetadataLocation, NewMetadataLocation: metaLoc,
		NewMetadata: data, NewFormatVersion: meta.FormatVersion(), NewLocation: newLoc,
	}}}
	return &ViewResult{MetadataLocation: metaLoc, Metadata: data}, a, nil
}

// RegisterView adopts an existing view metadata file. 404 when the
// namespace is missing or the file cannot be read, 409 when the name is
// taken by a view or table, 400 when the file is not view metadata.
func (s *Service) RegisterView(ctx context.Context, warehouse string, nsLevels []string, name, metadataLocation string) (*ViewResult, error) {
	id := Ident{Namespace: nsLevels, Name: name}
	w, data, err := s.readForRegister(ctx, warehouse, id, metadataLocation, PrivViewCreate)
	if err != nil {
		return nil, err
	}
	meta, err := view.ParseMetadataBytes(data)
	if err != nil {
		return nil, fault.Wrap(fault.BadRequest, err, "Invalid view metadata in %s: the file is not view metadata JSON", fileName(w, w.Location, metadataLocation))
	}
	loc, err := checkObjectLocation(w, meta.Location())
	if err != nil {
		return nil, err
	}
	if err := checkWritePaths(w, loc, meta.Properties()); err != nil {
		return nil, err
	}
	obj := &store.Object{
		Warehouse: warehouse, Namespace: nsLevels, Name: name, Kind: store.KindView,
		Location: loc, MetadataLocation: metadataLocation, Metadata: compactJSON(data), FormatVersion: meta.FormatVersion(),
	}
	ectx := s.withEvent(ctx, func() store.Event { return changeevents.Create(changeevents.CreateView, objectOf(obj), who(ctx), nil) })
	if err := s.store.ObjectCreate(ectx, obj); err != nil {
		return nil, putErr(err, store.KindView, id, warehouse)
	}
	return &ViewResult{MetadataLocation: metadataLocation, Metadata: obj.Metadata}, nil
}

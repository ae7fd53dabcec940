package service

import (
	"context"
	"encoding/json"

	"github.com/lakehold/catalog/service/views"
	"github.com/lakehold/catalog/store"
)

// Views are created, loaded, replaced and dropped by views.Views; these
// names and methods keep the service's API whole. Listing and renaming
// are shared with tables and stay here.

// CreateViewInput is a createView request (views.CreateInput).
type CreateViewInput = views.CreateInput

// ViewResult is what view routes return (views.Result).
type ViewResult = views.Result

// CreateView creates a view (views.Views.Create, which says what is
// returned when).
func (s *Service) CreateView(ctx context.Context, warehouse string, nsLevels []string, in CreateViewInput) (*ViewResult, error) {
	return s.views.Create(ctx, warehouse, nsLevels, in)
}

// LoadView returns a view's metadata, or 404 NoSuchView (views.Views.Load).
func (s *Service) LoadView(ctx context.Context, warehouse string, id Ident) (*ViewResult, error) {
	return s.views.Load(ctx, warehouse, id)
}

// ViewExists reports whether a view exists (404 NoSuchView otherwise;
// views.Views.Exists).
func (s *Service) ViewExists(ctx context.Context, warehouse string, id Ident) error {
	return s.views.Exists(ctx, warehouse, id)
}

// ListViews lists view names in a namespace; 404 when it is missing.
func (s *Service) ListViews(ctx context.Context, warehouse string, nsLevels []string, page Page) ([]string, string, error) {
	return s.listObjects(ctx, warehouse, nsLevels, store.KindView, PrivViewRead, page)
}

// DropView removes or soft-deletes a view (views.Views.Drop, which says
// what is returned when).
func (s *Service) DropView(ctx context.Context, warehouse string, id Ident) error {
	return s.views.Drop(ctx, warehouse, id)
}

// RenameView renames a view; errors as RenameTable.
func (s *Service) RenameView(ctx context.Context, warehouse string, from, to Ident) error {
	return s.renameObject(ctx, warehouse, store.KindView, from, to)
}

// ReplaceView commits view updates (views.Views.Replace, which says what
// is returned when).
func (s *Service) ReplaceView(ctx context.Context, warehouse string, id Ident, requirements, updates json.RawMessage) (*ViewResult, error) {
	return s.views.Replace(ctx, warehouse, id, requirements, updates)
}

// RegisterView adopts an existing view metadata file (views.Views.Register,
// which says what is returned when).
func (s *Service) RegisterView(ctx context.Context, warehouse string, nsLevels []string, name, metadataLocation string) (*ViewResult, error) {
	return s.views.Register(ctx, warehouse, nsLevels, name, metadataLocation)
}

// newViews is the service's views: they commit through s.engine and write
// metadata files through s.tc.
func (s *Service) newViews() *views.Views {
	return views.New(views.Deps{Tables: s.ta, Engine: s.engine, DropObject: s.dropObject})

}

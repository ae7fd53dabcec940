package service

import (
	"context"

	"github.com/lakehold/catalog/service/views"
	"github.com/lakehold/catalog/store"
)

// Views are created, loaded, replaced and dropped by views.Views, which
// callers reach through Service.Views. Listing and renaming are shared
// with tables and stay here.

// Views is the view room (views.Views, whose methods say what they
// return when).
func (s *Service) Views() *views.Views { return s.views }

// CreateViewInput is a createView request (views.CreateInput).
type CreateViewInput = views.CreateInput

// ViewResult is what view routes return (views.Result).
type ViewResult = views.Result

// ListViews lists view names in a namespace; 404 when it is missing.
func (s *Service) ListViews(ctx context.Context, warehouse string, nsLevels []string, page Page) ([]string, string, error) {
	return s.listObjects(ctx, warehouse, nsLevels, store.KindView, PrivViewRead, page)
}

// RenameView renames a view; errors as RenameTable.
func (s *Service) RenameView(ctx context.Context, warehouse string, from, to Ident) error {
	return s.renameObject(ctx, warehouse, store.KindView, from, to)
}

// newViews is the service's views: they commit through s.engine and write
// metadata files through s.tc.
func (s *Service) newViews() *views.Views {
	return views.New(views.Deps{Tables: s.ta, Engine: s.engine, DropObject: s.dropObject})

}

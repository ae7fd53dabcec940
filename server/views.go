package server

import (
	"context"

	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
)

// ListViews implements openapi.StrictServerInterface.
func (s *Server) ListViews(ctx context.Context, req openapi.ListViewsRequestObject) (openapi.ListViewsResponseObject, error) {
	levels, err := decodeNamespace(req.Namespace)
	if err != nil {
		return nil, err
	}
	if req.Params.PageSize != nil && *req.Params.PageSize < 1 {
		return nil, badRequestf("pageSize must be at least 1")
	}
	names, next, err := s.rooms.tables.List(ctx, req.Prefix, levels, store.KindView, listPage(req.Params.PageToken, req.Params.PageSize))
	if err != nil {
		return nil, err
	}
	return identifierList{levels: levels, names: names, next: next}, nil
}

// CreateView implements openapi.StrictServerInterface.
func (s *Server) CreateView(ctx context.Context, req openapi.CreateViewRequestObject) (openapi.CreateViewResponseObject, error) {
	levels, err := decodeNamespace(req.Namespace)
	if err != nil {
		return nil, err
	}
	in := service.CreateViewInput{
		Name: req.Body.Name, Schema: req.Body.Schema, ViewVersion: req.Body.ViewVersion, Properties: req.Body.Properties,
	}
	if req.Body.Location != nil {
		in.Location = *req.Body.Location
	}
	res, err := s.rooms.views.Create(ctx, req.Prefix, levels, in)
	if err != nil {
		return nil, err
	}
	return viewResponse{res}, nil
}

// LoadView implements openapi.StrictServerInterface.
func (s *Server) LoadView(ctx context.Context, req openapi.LoadViewRequestObject) (openapi.LoadViewResponseObject, error) {
	id, err := ident(req.Namespace, req.View)
	if err != nil {
		return nil, err
	}
	res, err := s.rooms.views.Load(ctx, req.Prefix, id)
	if err != nil {
		return nil, err
	}
	return viewResponse{res}, nil
}

// ViewExists implements openapi.StrictServerInterface.
func (s *Server) ViewExists(ctx context.Context, req openapi.ViewExistsRequestObject) (openapi.ViewExistsResponseObject, error) {
	id, err := ident(req.Namespace, req.View)
	if err != nil {
		return nil, err
	}
	if err := s.rooms.views.Exists(ctx, req.Prefix, id); err != nil {
		return nil, err
	}
	return openapi.ViewExists204Response{}, nil
}

// ReplaceView implements openapi.StrictServerInterface.
func (s *Server) ReplaceView(ctx context.Context, req openapi.ReplaceViewRequestObject) (openapi.ReplaceViewResponseObject, error) {
	id, err := ident(req.Namespace, req.View)
	if err != nil {
		return nil, err
	}
	res, err := s.rooms.views.Replace(ctx, req.Prefix, id, raw(req.Body.Requirements), req.Body.Updates)
	if err != nil {
		return nil, err
	}
	return viewResponse{res}, nil
}

// DropView implements openapi.StrictServerInterface.
func (s *Server) DropView(ctx context.Context, req openapi.DropViewRequestObject) (openapi.DropViewResponseObject, error) {
	id, err := ident(req.Namespace, req.View)
	if err != nil {
		return nil, err
	}
	if err := s.rooms.tables.DropView(ctx, req.Prefix, id); err != nil {
		return nil, err
	}
	return openapi.DropView204Response{}, nil
}

// RenameView implements openapi.StrictServerInterface.
func (s *Server) RenameView(ctx context.Context, req openapi.RenameViewRequestObject) (openapi.RenameViewResponseObject, error) {
	from := service.Ident{Namespace: req.Body.Source.Namespace, Name: req.Body.Source.Name}
	to := service.Ident{Namespace: req.Body.Destination.Namespace, Name: req.Body.Destination.Name}
	if err := s.rooms.tables.Rename(ctx, req.Prefix, store.KindView, from, to); err != nil {
		return nil, err
	}
	return openapi.RenameView204Response{}, nil
}

// RegisterView implements openapi.StrictServerInterface.
func (s *Server) RegisterView(ctx context.Context, req openapi.RegisterViewRequestObject) (openapi.RegisterViewResponseObject, error) {
	levels, err := decodeNamespace(req.Namespace)
	if err != nil {
		return nil, err
	}
	res, err := s.rooms.views.Register(ctx, req.Prefix, levels, req.Body.Name, req.Body.MetadataLocation)
	if err != nil {
		return nil, err
	}
	return viewResponse{res}, nil
}

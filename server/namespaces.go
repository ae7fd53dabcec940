package server

import (
	"context"

	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
)

func page(token *string, size *int) service.Page {
	p := service.Page{}
	if token != nil {
		p.Token = *token
	}
	if size != nil {
		p.Size = *size
	}
	return p
}

func nextToken(t string) *string {
	if t == "" {
		return nil
	}
	return &t
}

// ListNamespaces implements openapi.StrictServerInterface.
func (s *Server) ListNamespaces(ctx context.Context, req openapi.ListNamespacesRequestObject) (openapi.ListNamespacesResponseObject, error) {
	var parent []string
	if req.Params.Parent != nil && *req.Params.Parent != "" {
		var err error
		if parent, err = decodeParent(*req.Params.Parent); err != nil {
			return nil, err
		}
	}
	if req.Params.PageSize != nil && *req.Params.PageSize < 1 {
		return nil, badRequestf("pageSize must be at least 1")
	}
	out, next, err := s.svc.ListNamespaces(ctx, req.Prefix, parent, page(req.Params.PageToken, req.Params.PageSize))
	if err != nil {
		return nil, err
	}
	nss := make([]openapi.Namespace, 0, len(out))
	nss = append(nss, out...)
	return openapi.ListNamespaces200JSONResponse{Namespaces: nss, NextPageToken: nextToken(next)}, nil
}

// CreateNamespace implements openapi.StrictServerInterface.
func (s *Server) CreateNamespace(ctx context.Context, req openapi.CreateNamespaceRequestObject) (openapi.CreateNamespaceResponseObject, error) {
	var props map[string]string
	if req.Body.Properties != nil {
		props = *req.Body.Properties
	}
	ns, err := s.svc.CreateNamespace(ctx, req.Prefix, req.Body.Namespace, props)
	if err != nil {
		return nil, err
	}
	p := openapi.Properties(ns.Properties)
	return openapi.CreateNamespace200JSONResponse{Namespace: ns.Levels, Properties: &p}, nil
}

// LoadNamespaceMetadata implements openapi.StrictServerInterface.
func (s *Server) LoadNamespaceMetadata(ctx context.Context, req openapi.LoadNamespaceMetadataRequestObject) (openapi.LoadNamespaceMetadataResponseObject, error) {
	levels, err := decodeNamespace(req.Namespace)
	if err != nil {
		return nil, err
	}
	ns, err := s.svc.LoadNamespace(ctx, req.Prefix, levels)
	if err != nil {
		return nil, err
	}
	p := openapi.Properties(ns.Properties)
	return openapi.LoadNamespaceMetadata200JSONResponse{Namespace: ns.Levels, Properties: &p}, nil
}

// NamespaceExists implements openapi.StrictServerInterface.
func (s *Server) NamespaceExists(ctx context.Context, req openapi.NamespaceExistsRequestObject) (openapi.NamespaceExistsResponseObject, error) {
	levels, err := decodeNamespace(req.Namespace)
	if err != nil {
		return nil, err
	}
	if _, err := s.svc.LoadNamespace(ctx, req.Prefix, levels); err != nil {
		return nil, err
	}
	return openapi.NamespaceExists204Response{}, nil
}

// DropNamespace implements openapi.StrictServerInterface.
func (s *Server) DropNamespace(ctx context.Context, req openapi.DropNamespaceRequestObject) (openapi.DropNamespaceResponseObject, error) {
	levels, err := decodeNamespace(req.Namespace)
	if err != nil {
		return nil, err
	}
	if err := s.svc.DropNamespace(ctx, req.Prefix, levels); err != nil {
		return nil, err
	}
	return openapi.DropNamespace204Response{}, nil
}

// UpdateProperties implements openapi.StrictServerInterface.
func (s *Server) UpdateProperties(ctx context.Context, req openapi.UpdatePropertiesRequestObject) (openapi.UpdatePropertiesResponseObject, error) {
	levels, err := decodeNamespace(req.Namespace)
	if err != nil {
		return nil, err
	}
	var removals []string
	if req.Body.Removals != nil {
		removals = *req.Body.Removals
	}
	var updates map[string]string
	if req.Body.Updates != nil {
		updates = *req.Body.Updates
	}
	updated, removed, missing, err := s.svc.UpdateNamespaceProperties(ctx, req.Prefix, levels, removals, updates)
	if err != nil {
		return nil, err
	}
	return openapi.UpdateProperties200JSONResponse{Updated: updated, Removed: removed, Missing: missing}, nil
}

// listPage is the store page of a list request's page token and size
// (the tables room's List takes it).
func listPage(token *string, size *int) store.Page {
	p := page(token, size)
	return store.Page{Token: p.Token, Size: p.Size}
}

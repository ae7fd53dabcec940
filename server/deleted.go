package server

import (
	"context"

	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
)

// ListDeletedObjects implements openapi.StrictServerInterface.
func (s *Server) ListDeletedObjects(ctx context.Context, req openapi.ListDeletedObjectsRequestObject) (openapi.ListDeletedObjectsResponseObject, error) {
	p := req.Params
	if p.PageSize != nil && (*p.PageSize < 1 || *p.PageSize > 1000) {
		return nil, badRequestf("pageSize must be between 1 and 1000")
	}
	list, next, err := s.rooms.upkeep.ListDeleted(ctx, req.Warehouse, listPage(p.PageToken, p.PageSize))
	if err != nil {
		return nil, err
	}
	out := make([]openapi.DeletedObject, len(list))
	for i, d := range list {
		out[i] = openapi.DeletedObject{Id: d.ID, Kind: openapi.DeletedObjectKind(d.Kind), Namespace: d.Ident.Namespace, Name: d.Ident.Name,
			DeletedAt: d.DeletedAt.UTC(), ExpiresAt: d.ExpiresAt.UTC(), PurgeRequested: d.Purge}
	}
	return openapi.ListDeletedObjects200JSONResponse{Deleted: out, NextPageToken: nextToken(next)}, nil
}

// UndropObject implements openapi.StrictServerInterface. The body names
// both the namespace and the name to undrop to, or neither (the old name).
func (s *Server) UndropObject(ctx context.Context, req openapi.UndropObjectRequestObject) (openapi.UndropObjectResponseObject, error) {
	var to *service.Ident
	if b := req.Body; b != nil && (b.Name != nil || b.Namespace != nil) {
		if b.Name == nil || b.Namespace == nil {
			return nil, badRequestf("give both namespace and name, or neither")
		}
		to = &service.Ident{Namespace: *b.Namespace, Name: *b.Name}
	}
	id, kind, err := s.rooms.upkeep.Undrop(ctx, req.Warehouse, req.Id, to)
	if err != nil {
		return nil, err
	}
	return openapi.UndropObject200JSONResponse{Kind: openapi.UndropResponseKind(kind), Namespace: id.Namespace, Name: id.Name}, nil
}

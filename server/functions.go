package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service/functions"
	"github.com/lakehold/catalog/store"
)

// ListFunctions implements openapi.StrictServerInterface.
func (s *Server) ListFunctions(ctx context.Context, req openapi.ListFunctionsRequestObject) (openapi.ListFunctionsResponseObject, error) {
	levels, err := decodeNamespace(req.Namespace)
	if err != nil {
		return nil, err
	}
	if req.Params.PageSize != nil && *req.Params.PageSize < 1 {
		return nil, badRequestf("pageSize must be at least 1")
	}
	names, next, err := s.rooms.tables.List(ctx, req.Prefix, levels, store.KindFunction, listPage(req.Params.PageToken, req.Params.PageSize))
	if err != nil {
		return nil, err
	}
	ids := make([]openapi.CatalogObjectIdentifier, 0, len(names))
	for _, n := range names {
		ids = append(ids, append(append([]string{}, levels...), n))
	}
	return openapi.ListFunctions200JSONResponse{Identifiers: &ids, NextPageToken: nextToken(next)}, nil
}

// LoadFunction implements openapi.StrictServerInterface.
func (s *Server) LoadFunction(ctx context.Context, req openapi.LoadFunctionRequestObject) (openapi.LoadFunctionResponseObject, error) {
	id, err := ident(req.Namespace, req.Function)
	if err != nil {
		return nil, err
	}
	res, err := s.rooms.functions.Load(ctx, req.Prefix, id)
	if err != nil {
		return nil, err
	}
	return functionResponse{res}, nil
}

// CreateFunction implements openapi.StrictServerInterface (management).
func (s *Server) CreateFunction(ctx context.Context, req openapi.CreateFunctionRequestObject) (openapi.CreateFunctionResponseObject, error) {
	levels, err := decodeNamespace(req.Namespace)
	if err != nil {
		return nil, err
	}
	res, err := s.rooms.functions.Create(ctx, req.Warehouse, levels, req.Body.Name, req.Body.Metadata)
	if err != nil {
		return nil, err
	}
	return functionResponse{res}, nil
}

// DropFunction implements openapi.StrictServerInterface (management).
func (s *Server) DropFunction(ctx context.Context, req openapi.DropFunctionRequestObject) (openapi.DropFunctionResponseObject, error) {
	id, err := ident(req.Namespace, req.Function)
	if err != nil {
		return nil, err
	}
	if err := s.rooms.functions.Drop(ctx, req.Warehouse, id); err != nil {
		return nil, err
	}
	return openapi.DropFunction204Response{}, nil
}

// functionResponse writes a LoadFunctionResult from the stored document,
// as it was created (not re-encoded through the generated types).
type functionResponse struct{ res *functions.Result }

func (f functionResponse) write(w http.ResponseWriter) error {
	var buf bytes.Buffer
	buf.WriteString(`{"metadata-location":`)
	loc, _ := json.Marshal(f.res.MetadataLocation)
	buf.Write(loc)
	buf.WriteString(`,"metadata":`)
	buf.Write(f.res.Metadata)
	buf.WriteString(`}`)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := buf.WriteTo(w)
	return err
}

func (f functionResponse) VisitLoadFunctionResponse(w http.ResponseWriter) error   { return f.write(w) }
func (f functionResponse) VisitCreateFunctionResponse(w http.ResponseWriter) error { return f.write(w) }

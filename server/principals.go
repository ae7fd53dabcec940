package server

import (
	"context"
	"net/http"

	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
)

func principalJSON(p service.PrincipalInfo) openapi.Principal {
	return openapi.Principal{Name: p.Name, ClientId: p.ClientID, SecretGeneration: p.SecretGeneration,
		CreatedAtMs: p.CreatedAt.UnixMilli(), RotatedAtMs: p.RotatedAt.UnixMilli()}
}

// ListPrincipals implements openapi.StrictServerInterface.
func (s *Server) ListPrincipals(ctx context.Context, req openapi.ListPrincipalsRequestObject) (openapi.ListPrincipalsResponseObject, error) {
	if req.Params.PageSize != nil && *req.Params.PageSize < 1 {
		return nil, badRequestf("pageSize must be at least 1")
	}
	ps, next, err := s.rooms.admin.ListPrincipals(ctx, listPage(req.Params.PageToken, req.Params.PageSize))
	if err != nil {
		return nil, err
	}
	out := make([]openapi.Principal, len(ps))
	for i, p := range ps {
		out[i] = principalJSON(p)
	}
	return openapi.ListPrincipals200JSONResponse{Principals: out, NextPageToken: nextToken(next)}, nil
}

// CreatePrincipal implements openapi.StrictServerInterface. The answer
// carries the secret, shown this once.
func (s *Server) CreatePrincipal(ctx context.Context, req openapi.CreatePrincipalRequestObject) (openapi.CreatePrincipalResponseObject, error) {
	c, err := s.rooms.admin.CreatePrincipal(ctx, req.Body.Name)
	if err != nil {
		return nil, err
	}
	return secretCreated{openapi.CreatePrincipal201JSONResponse{Name: c.Name, ClientId: c.ClientID, ClientSecret: c.ClientSecret}}, nil
}

// secretCreated and secretRotated mark the answers that carry a
// principal's secret Cache-Control: no-store, so that no cache keeps them
// and no Idempotency-Key store ever would (package pipeline, storable).
type secretCreated struct {
	openapi.CreatePrincipal201JSONResponse
}

func (r secretCreated) VisitCreatePrincipalResponse(w http.ResponseWriter) error {
	w.Header().Set("Cache-Control", "no-store")
	return r.CreatePrincipal201JSONResponse.VisitCreatePrincipalResponse(w)
}

type secretRotated struct {
	openapi.RotatePrincipalSecret200JSONResponse
}

func (r secretRotated) VisitRotatePrincipalSecretResponse(w http.ResponseWriter) error {
	w.Header().Set("Cache-Control", "no-store")
	return r.RotatePrincipalSecret200JSONResponse.VisitRotatePrincipalSecretResponse(w)
}

// GetPrincipal implements openapi.StrictServerInterface.
func (s *Server) GetPrincipal(ctx context.Context, req openapi.GetPrincipalRequestObject) (openapi.GetPrincipalResponseObject, error) {
	p, err := s.rooms.admin.GetPrincipal(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	return openapi.GetPrincipal200JSONResponse(principalJSON(*p)), nil
}

// RotatePrincipalSecret implements openapi.StrictServerInterface.
func (s *Server) RotatePrincipalSecret(ctx context.Context, req openapi.RotatePrincipalSecretRequestObject) (openapi.RotatePrincipalSecretResponseObject, error) {
	c, err := s.rooms.admin.RotatePrincipalSecret(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	return secretRotated{openapi.RotatePrincipalSecret200JSONResponse{Name: c.Name, ClientId: c.ClientID, ClientSecret: c.ClientSecret}}, nil
}

// DeletePrincipal implements openapi.StrictServerInterface.
func (s *Server) DeletePrincipal(ctx context.Context, req openapi.DeletePrincipalRequestObject) (openapi.DeletePrincipalResponseObject, error) {
	if err := s.rooms.admin.DeletePrincipal(ctx, req.Name); err != nil {
		return nil, err
	}
	return openapi.DeletePrincipal204Response{}, nil
}

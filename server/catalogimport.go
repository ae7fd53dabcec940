package server

import (
	"context"

	"github.com/lakehold/catalog/internal/catalogimport"
	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
)

// ImportCatalog implements openapi.StrictServerInterface: the body's
// source and options in, the import's report out.
func (s *Server) ImportCatalog(ctx context.Context, req openapi.ImportCatalogRequestObject) (openapi.ImportCatalogResponseObject, error) {
	b := req.Body
	if b == nil {
		return nil, badRequestf("the body must name the source")
	}
	in := service.ImportInput{
		Source: catalogimport.Endpoint{URI: b.SourceUri, Warehouse: deref(b.SourceWarehouse), Credential: deref(b.SourceCredential),
			Token: deref(b.SourceToken), OAuth2ServerURI: deref(b.SourceOauth2ServerUri), Scope: deref(b.SourceScope)},
		Namespaces: deref(b.Namespaces),
		DryRun:     deref(b.DryRun),
	}
	rep, err := s.svc.ImportCatalog(ctx, req.Warehouse, in)
	if err != nil {
		return nil, err
	}
	return openapi.ImportCatalog200JSONResponse(importReportJSON(rep)), nil
}

func importReportJSON(r *catalogimport.Report) openapi.ImportReport {
	out := openapi.ImportReport{DryRun: r.DryRun, Note: optional(r.Note), Stopped: optional(r.Stopped), Items: make([]openapi.ImportItem, 0, len(r.Items))}
	for _, it := range r.Items {
		out.Items = append(out.Items, openapi.ImportItem{Kind: openapi.ImportItemKind(it.Kind), Namespace: it.Namespace, Name: optional(it.Name),
			Status: openapi.ImportItemStatus(it.Status), Reason: optional(it.Reason), MetadataLocation: optional(it.MetadataLocation)})
	}
	return out
}

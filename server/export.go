package server

import (
	"context"
	"net/http"

	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/tables"
)

// ExportTable implements openapi.StrictServerInterface: a v4 table's
// current snapshot becomes a new v1–v3 table.
func (s *Server) ExportTable(ctx context.Context, req openapi.ExportTableRequestObject) (openapi.ExportTableResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	in := service.ExportInput{Source: id, Delegation: delegation(req.Params.XIcebergAccessDelegation),
		Target: service.Ident{Namespace: req.Body.Destination.Namespace, Name: req.Body.Destination.Name}}
	if v := req.Body.FormatVersion; v != nil {
		if *v == 0 {
			return nil, badRequestf("Invalid format-version: 0 (a v4 table exports to format version 1, 2 or 3)")
		}
		in.FormatVersion = int(*v)
	}
	in.Compact = req.Body.Compact != nil && *req.Body.Compact
	in.FoldSource = req.Body.FoldSource != nil && *req.Body.FoldSource
	if in.FoldSource && !in.Compact {
		return nil, badRequestf("Invalid fold-source: it applies to compact: true")
	}
	res, err := s.svc.ExportTable(ctx, req.Prefix, in)
	if err != nil {
		return nil, err
	}
	return tableResponse{res: res, etag: tables.ETag(res.MetadataLocation, "all")}, nil
}

// VisitExportTableResponse writes the exported table's metadata.
func (t tableResponse) VisitExportTableResponse(w http.ResponseWriter) error { return t.write(w) }

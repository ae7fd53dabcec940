package server

import (
	"context"

	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service/reports"
)

// ReportMetrics implements openapi.StrictServerInterface: the report is
// checked, stored when reports are kept (package reports) and counted.
func (s *Server) ReportMetrics(ctx context.Context, req openapi.ReportMetricsRequestObject) (openapi.ReportMetricsResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	var body []byte
	if req.Body != nil {
		body = *req.Body
	}
	typ, err := s.rooms.reports.Record(ctx, req.Prefix, id, body)
	if err != nil {
		return nil, err
	}
	s.pipe.CountReport(typ)
	return openapi.ReportMetrics204Response{}, nil
}

// ListTableReports implements openapi.StrictServerInterface.
func (s *Server) ListTableReports(ctx context.Context, req openapi.ListTableReportsRequestObject) (openapi.ListTableReportsResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	p := req.Params
	var q reports.Query
	if p.Type != nil {
		q.Type = string(*p.Type)
	}
	if p.SinceMs != nil {
		q.SinceMillis = *p.SinceMs
	}
	if p.PageSize != nil {
		if *p.PageSize == 0 {
			return nil, badRequestf("Invalid page-size: 0 (1 to %d)", reports.MaxPageSize)
		}
		q.PageSize = *p.PageSize
	}
	if p.PageToken != nil {
		q.PageToken = *p.PageToken
	}
	page, err := s.rooms.reports.List(ctx, req.Warehouse, id, q)
	if err != nil {
		return nil, err
	}
	out := make([]openapi.TableReport, len(page.Reports))
	for i, r := range page.Reports {
		out[i] = openapi.TableReport{Id: r.ID, ReportType: openapi.TableReportReportType(r.Type),
			ReceivedAtMs: r.ReceivedAt.UnixMilli(), SnapshotId: r.SnapshotID, Report: openapi.RawJSON(r.Body)}
	}
	return openapi.ListTableReports200JSONResponse{Reports: out, NextPageToken: nextToken(page.NextPageToken)}, nil
}

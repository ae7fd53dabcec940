package server

import (
	"context"

	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/tables"
)

// CommitColumnFiles implements openapi.StrictServerInterface.
func (s *Server) CommitColumnFiles(ctx context.Context, req openapi.CommitColumnFilesRequestObject) (openapi.CommitColumnFilesResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	c := service.ColumnFilesCommit{Ident: id, Requirements: raw(req.Body.Requirements)}
	for _, f := range req.Body.ColumnFiles {
		c.ColumnFiles = append(c.ColumnFiles, service.ColumnFileInput{
			DataFile: f.DataFile, Location: f.Location, FileFormat: f.FileFormat, FieldIDs: f.FieldIds,
			FileSizeInBytes: f.FileSizeInBytes, RecordCount: f.RecordCount,
		})
	}
	if req.Body.SnapshotProperties != nil {
		c.SnapshotProperties = *req.Body.SnapshotProperties
	}
	res, err := s.svc.CommitColumnFiles(ctx, req.Prefix, c)
	if err != nil {
		return nil, err
	}
	return tableResponse{res: res, etag: tables.ETag(res.MetadataLocation, "all")}, nil
}

// ListColumnFiles implements openapi.StrictServerInterface.
func (s *Server) ListColumnFiles(ctx context.Context, req openapi.ListColumnFilesRequestObject) (openapi.ListColumnFilesResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	rows, err := s.rooms.v4.LiveColumnFiles(ctx, req.Prefix, id, req.Params.SnapshotId)
	if err != nil {
		return nil, err
	}
	out := openapi.ListColumnFiles200JSONResponse{DataFiles: []openapi.DataFileColumnFiles{}}
	for _, r := range rows {
		d := openapi.DataFileColumnFiles{DataFile: r.DataFile, ColumnFiles: []openapi.ColumnFileInfo{}}
		for _, cf := range r.ColumnFiles {
			d.ColumnFiles = append(d.ColumnFiles, openapi.ColumnFileInfo{Location: cf.Location, FileFormat: cf.FileFormat, FieldIds: cf.FieldIDs, FileSizeInBytes: cf.FileSizeInBytes})
		}
		out.DataFiles = append(out.DataFiles, d)
	}
	return out, nil
}

// GetColumnFileDebt implements openapi.StrictServerInterface.
func (s *Server) GetColumnFileDebt(ctx context.Context, req openapi.GetColumnFileDebtRequestObject) (openapi.GetColumnFileDebtResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	d, err := s.rooms.v4.ColumnFileDebt(ctx, req.Warehouse, id, req.Params.SnapshotId)
	if err != nil {
		return nil, err
	}
	return openapi.GetColumnFileDebt200JSONResponse{SnapshotId: d.SnapshotID, Bases: d.Bases, ColumnFiles: d.ColumnFiles,
		MaxColumnFilesPerBase: d.MaxPerBase, MeasuredBases: d.Measured, RetiredBytes: d.RetiredBytes, MeasuredBytes: d.MeasuredBytes,
		Candidates: d.Candidates, MaxColumnFiles: d.Thresholds.MaxFiles, MaxRetiredRatio: d.Thresholds.MaxRetiredRatio}, nil
}

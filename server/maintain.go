package server

import (
	"context"

	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
)

// MaintainTable implements openapi.StrictServerInterface: snapshot expiry
// and the clean-up of the files only expired snapshots referenced.
func (s *Server) MaintainTable(ctx context.Context, req openapi.MaintainTableRequestObject) (openapi.MaintainTableResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	var opt service.MaintainOptions
	if b := req.Body; b != nil {
		if b.ExpireOlderThan != nil {
			opt.ExpireOlderThan = *b.ExpireOlderThan
		}
		if b.RetainLast != nil {
			if *b.RetainLast < 1 {
				return nil, badRequestf("retain-last must be at least 1")
			}
			opt.RetainLast = *b.RetainLast
		}
		opt.DryRun = b.DryRun != nil && *b.DryRun
	}
	rep, err := s.rooms.maint.Maintain(ctx, req.Warehouse, id, opt)
	if err != nil {
		return nil, err
	}
	out := openapi.MaintainTable200JSONResponse{ExpiredSnapshotIds: rep.ExpiredSnapshots, DeletedFiles: rep.DeletedFiles,
		ResumedFiles: rep.ResumedFiles, FailedFiles: rep.FailedFiles, DryRun: rep.DryRun}
	if rep.MetadataLocation != "" {
		out.MetadataLocation = &rep.MetadataLocation
	}
	return out, nil
}

// RemoveOrphanFiles implements openapi.StrictServerInterface. A request
// without dry-run is a dry run: deleting needs dry-run false.
func (s *Server) RemoveOrphanFiles(ctx context.Context, req openapi.RemoveOrphanFilesRequestObject) (openapi.RemoveOrphanFilesResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	opt := service.OrphanOptions{DryRun: true}
	if b := req.Body; b != nil {
		if b.OlderThan != nil {
			opt.OlderThan = *b.OlderThan
		}
		if b.DryRun != nil {
			opt.DryRun = *b.DryRun
		}
	}
	rep, err := s.rooms.maint.RemoveOrphanFiles(ctx, req.Warehouse, id, opt)
	if err != nil {
		return nil, err
	}
	return openapi.RemoveOrphanFiles200JSONResponse{OrphanFiles: rep.OrphanFiles, ListedFiles: rep.Listed,
		DeletedFiles: rep.Deleted, FailedFiles: rep.Failed, DryRun: rep.DryRun}, nil
}

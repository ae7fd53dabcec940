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
	rep, err := s.svc.Maintain(ctx, req.Warehouse, id, opt)
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

package server

import (
	"context"
	"net/http"

	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/tables"
)

// PlanCompaction implements openapi.StrictServerInterface.
func (s *Server) PlanCompaction(ctx context.Context, req openapi.PlanCompactionRequestObject) (openapi.PlanCompactionResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	plan, err := s.rooms.v4.PlanCompaction(ctx, req.Prefix, id)
	if err != nil {
		return nil, err
	}
	out := openapi.PlanCompaction200JSONResponse{SnapshotId: plan.SnapshotID, MaxColumnFiles: plan.MaxFiles,
		MaxRetiredRatio: plan.MaxRetiredRatio, Candidates: []openapi.CompactionCandidate{}}
	for _, c := range plan.Candidates {
		oc := openapi.CompactionCandidate{DataFile: c.DataFile, RecordCount: c.RecordCount, FileSizeInBytes: c.FileSizeInBytes,
			FirstRowId: c.FirstRowID, ColumnFiles: []openapi.ColumnFileInfo{}, RetiredBytes: c.RetiredBytes,
			RetiredRatio: c.RetiredRatio, Reasons: c.Reasons}
		for _, cf := range c.ColumnFiles {
			oc.ColumnFiles = append(oc.ColumnFiles, openapi.ColumnFileInfo{Location: cf.Location, FileFormat: cf.FileFormat,
				FieldIds: cf.FieldIDs, FileSizeInBytes: cf.FileSizeInBytes})
		}
		if d := c.DeletionVector; d != nil {
			oc.DeletionVector = &openapi.CompactionDeletionVector{Location: d.Location, Offset: d.Offset, SizeInBytes: d.SizeInBytes, Cardinality: d.Cardinality}
		}
		out.Candidates = append(out.Candidates, oc)
	}
	return out, nil
}

// CommitCompaction implements openapi.StrictServerInterface.
func (s *Server) CommitCompaction(ctx context.Context, req openapi.CommitCompactionRequestObject) (openapi.CommitCompactionResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	c := service.CompactionCommit{Ident: id, Requirements: raw(req.Body.Requirements)}
	for _, rw := range req.Body.Rewrites {
		r := service.CompactionRewrite{DataFile: rw.DataFile, ColumnFiles: rw.ColumnFiles, Location: rw.Location,
			FileSizeInBytes: rw.FileSizeInBytes, RecordCount: rw.RecordCount}
		if d := rw.DeletionVector; d != nil {
			r.DeletionVector = &service.DeletionVectorRef{Location: d.Location, Offset: d.Offset, SizeInBytes: d.SizeInBytes, Cardinality: d.Cardinality}
		}
		c.Rewrites = append(c.Rewrites, r)
	}
	if req.Body.SnapshotProperties != nil {
		c.SnapshotProperties = *req.Body.SnapshotProperties
	}
	res, err := s.svc.CommitCompaction(ctx, req.Prefix, c)
	if err != nil {
		return nil, err
	}
	return tableResponse{res: res, etag: tables.ETag(res.MetadataLocation, "all")}, nil
}

// VisitCommitCompactionResponse writes a compaction commit's new metadata.
func (t tableResponse) VisitCommitCompactionResponse(w http.ResponseWriter) error { return t.write(w) }

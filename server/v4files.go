package server

import (
	"context"
	"encoding/json"

	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/tables"
)

// CommitFiles implements openapi.StrictServerInterface (v4 files route).
func (s *Server) CommitFiles(ctx context.Context, req openapi.CommitFilesRequestObject) (openapi.CommitFilesResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	b := req.Body
	c := service.FilesCommit{Ident: id, Requirements: raw(b.Requirements)}
	if b.AddDataFiles != nil {
		for _, f := range *b.AddDataFiles {
			in := service.DataFileInput{Location: f.Location, FileFormat: f.FileFormat, RecordCount: f.RecordCount,
				FileSizeInBytes: f.FileSizeInBytes, SpecID: f.SpecId, SortOrderID: f.SortOrderId, ContentStats: raw(f.ContentStats)}
			if f.Partition != nil {
				in.Partition = map[string]json.RawMessage{}
				for k, v := range *f.Partition {
					in.Partition[k] = v
				}
			}
			c.AddDataFiles = append(c.AddDataFiles, in)
		}
	}
	if b.RemoveFiles != nil {
		c.RemoveFiles = *b.RemoveFiles
	}
	if b.AddEqualityDeleteFiles != nil {
		for _, f := range *b.AddEqualityDeleteFiles {
			in := service.EqualityDeleteInput{Location: f.Location, FileFormat: f.FileFormat, RecordCount: f.RecordCount,
				FileSizeInBytes: f.FileSizeInBytes, EqualityIDs: f.EqualityIds, SpecID: f.SpecId}
			if f.Partition != nil {
				in.Partition = map[string]json.RawMessage{}
				for k, v := range *f.Partition {
					in.Partition[k] = v
				}
			}
			c.AddEqualityDeleteFiles = append(c.AddEqualityDeleteFiles, in)
		}
	}
	if b.SetDeletionVectors != nil {
		for _, d := range *b.SetDeletionVectors {
			c.SetDeletionVectors = append(c.SetDeletionVectors, service.DeletionVectorInput{DataFile: d.DataFile,
				Location: d.Location, Offset: d.Offset, SizeInBytes: d.SizeInBytes, Cardinality: d.Cardinality})
		}
	}
	if b.SnapshotProperties != nil {
		c.SnapshotProperties = *b.SnapshotProperties
	}
	res, err := s.svc.CommitFiles(ctx, req.Prefix, c)
	if err != nil {
		return nil, err
	}
	return tableResponse{res: res, etag: tables.ETag(res.MetadataLocation, "all")}, nil
}

package server

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/uuid"

	"github.com/lakehold/catalog/openapi"
)

// PlanTableScan implements openapi.StrictServerInterface: a synchronous,
// completed plan for a v4 table.
func (s *Server) PlanTableScan(ctx context.Context, req openapi.PlanTableScanRequestObject) (openapi.PlanTableScanResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	if res, handled, err := s.planAvroTemp(ctx, req, id); handled { // TEMPORARY (h-plan3), see plan_avro_tmp.go
		return res, err
	}
	var snap *int64
	if req.Body != nil {
		snap = req.Body.SnapshotId
	}
	ok := req.Params.XIcebergColumnFiles != nil && strings.EqualFold(strings.TrimSpace(*req.Params.XIcebergColumnFiles), "true")
	tasks, err := s.svc.PlanScan(ctx, req.Prefix, id, snap, ok)
	if err != nil {
		return nil, err
	}
	out := make([]openapi.FileScanTask, 0, len(tasks))
	deletes := []openapi.RawJSON{}
	for _, t := range tasks {
		part := make([]openapi.RawJSON, 0, len(t.PartitionValues))
		for _, v := range t.PartitionValues {
			b, _ := json.Marshal(v)
			part = append(part, b)
		}
		df := openapi.PlannedDataFile{Content: "data", FilePath: t.Location, FileFormat: strings.ToLower(t.FileFormat),
			SpecId: int(t.SpecID), Partition: part, FileSizeInBytes: t.FileSizeInBytes, RecordCount: t.RecordCount, FirstRowId: t.FirstRowID}
		if len(t.ColumnFiles) > 0 {
			cfs := make([]openapi.ColumnFileInfo, 0, len(t.ColumnFiles))
			for _, cf := range t.ColumnFiles {
				cfs = append(cfs, openapi.ColumnFileInfo{Location: cf.Location, FileFormat: cf.FileFormat, FieldIds: cf.FieldIDs, FileSizeInBytes: cf.FileSizeInBytes})
			}
			df.ColumnFiles = &cfs
		}
		task := openapi.FileScanTask{DataFile: df}
		if dv := t.DeletionVector; dv != nil {
			// A v4 colocated DV travels as a position-delete file in Puffin
			// with its blob range, as REST planning describes DVs.
			b, _ := json.Marshal(map[string]any{
				"content": "position-deletes", "file-path": dv.Location, "file-format": "puffin",
				"spec-id": t.SpecID, "partition": part, "file-size-in-bytes": dv.SizeInBytes, "record-count": dv.Cardinality,
				"referenced-data-file": t.Location, "content-offset": dv.Offset, "content-size-in-bytes": dv.SizeInBytes,
			})
			refs := []int{len(deletes)}
			deletes = append(deletes, b)
			task.DeleteFileReferences = &refs
		}
		out = append(out, task)
	}
	planID := uuid.NewString()
	return openapi.PlanTableScan200JSONResponse{Status: "completed", PlanId: &planID, FileScanTasks: &out, DeleteFiles: &deletes}, nil
}

package server

// TEMPORARY (h-plan3): a thin call path from POST .../plan to the v1–v3
// planner, until the scan-planning handler and encoder (server/plan.go,
// server/plan_encode.go) decode the full PlanTableScanRequest and call the
// service's PlanScan entry point. Delete this file and the one-line hook
// in PlanTableScan when they land.

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
)

// planAvroTemp plans a v1–v3 table; handled is false for a v4 table.
func (s *Server) planAvroTemp(ctx context.Context, req openapi.PlanTableScanRequestObject, id service.Ident) (openapi.PlanTableScanResponseObject, bool, error) {
	pr, err := planRequestTemp(req)
	if err != nil {
		return nil, true, err
	}
	res, handled, err := s.svc.PlanAvroScan(ctx, req.Prefix, id, pr)
	if !handled || err != nil {
		return nil, handled, err
	}
	// Java's REST client needs a residual filter on every task (without
	// one, reading the task fails): the request filter is always a
	// correct, if conservative, residual.
	residual := json.RawMessage("true")
	if len(pr.Filter) > 0 {
		residual = pr.Filter
	}
	tasks := make([]planTaskTemp, 0, len(res.Tasks))
	for _, t := range res.Tasks {
		df := openapi.PlannedDataFile{Content: "data", FilePath: t.Location, FileFormat: t.FileFormat, SpecId: int(t.SpecID),
			Partition: rawValues(t.PartitionValues), FileSizeInBytes: t.FileSizeInBytes, RecordCount: t.RecordCount, FirstRowId: t.FirstRowID}
		task := planTaskTemp{DataFile: df, Residual: residual}
		if len(t.DeleteRefs) > 0 {
			refs := append([]int(nil), t.DeleteRefs...)
			task.DeleteFileReferences = &refs
		}
		tasks = append(tasks, task)
	}
	deletes := make([]openapi.RawJSON, 0, len(res.DeleteFiles))
	for _, d := range res.DeleteFiles {
		m := map[string]any{"content": d.Content, "file-path": d.Location, "file-format": d.FileFormat, "spec-id": d.SpecID,
			"partition": rawValues(d.PartitionValues), "file-size-in-bytes": d.FileSizeInBytes, "record-count": d.RecordCount}
		if len(d.EqualityIDs) > 0 {
			m["equality-ids"] = d.EqualityIDs
		}
		if d.ReferencedDataFile != nil {
			m["referenced-data-file"] = *d.ReferencedDataFile
		}
		if d.ContentOffset != nil {
			m["content-offset"] = *d.ContentOffset
		}
		if d.ContentSize != nil {
			m["content-size-in-bytes"] = *d.ContentSize
		}
		b, _ := json.Marshal(m)
		deletes = append(deletes, b)
	}
	planID := uuid.NewString()
	return planResponseTemp{Status: "completed", PlanID: planID, FileScanTasks: tasks, DeleteFiles: deletes}, true, nil
}

// planTaskTemp is a FileScanTask with its residual-filter, which the
// generated type lacks.
type planTaskTemp struct {
	DataFile             openapi.PlannedDataFile `json:"data-file"`
	DeleteFileReferences *[]int                  `json:"delete-file-references,omitempty"`
	Residual             json.RawMessage         `json:"residual-filter"`
}

type planResponseTemp struct {
	Status        string            `json:"status"`
	PlanID        string            `json:"plan-id"`
	FileScanTasks []planTaskTemp    `json:"file-scan-tasks"`
	DeleteFiles   []openapi.RawJSON `json:"delete-files"`
}

func (p planResponseTemp) VisitPlanTableScanResponse(w http.ResponseWriter) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(b)
	return err
}

func rawValues(vs []any) []openapi.RawJSON {
	out := make([]openapi.RawJSON, 0, len(vs))
	for _, v := range vs {
		b, _ := json.Marshal(v)
		out = append(out, b)
	}
	return out
}

// planRequestTemp reads the request fields the generated type keeps as
// additional properties. Those are decoded as float64, so a start or end
// snapshot id that does not fit exactly is refused rather than rounded.
func planRequestTemp(req openapi.PlanTableScanRequestObject) (service.PlanRequest, error) {
	pr := service.PlanRequest{CaseSensitive: true}
	pr.ColumnFilesOK = req.Params.XIcebergColumnFiles != nil && strings.EqualFold(strings.TrimSpace(*req.Params.XIcebergColumnFiles), "true")
	if req.Body == nil {
		return pr, nil
	}
	pr.SnapshotID = req.Body.SnapshotId
	extra := req.Body.AdditionalProperties
	if v, ok := extra["filter"]; ok && v != nil {
		pr.Filter, _ = json.Marshal(v)
	}
	if v, ok := extra["select"].([]any); ok {
		for _, n := range v {
			name, ok := n.(string)
			if !ok {
				return pr, badRequestf("Invalid select: field names must be strings")
			}
			pr.Select = append(pr.Select, name)
		}
	}
	if v, ok := extra["case-sensitive"].(bool); ok {
		pr.CaseSensitive = v
	}
	if v, ok := extra["use-snapshot-schema"].(bool); ok {
		pr.UseSnapshotSchema = v
	}
	for key, dst := range map[string]**int64{"start-snapshot-id": &pr.StartSnapshotID, "end-snapshot-id": &pr.EndSnapshotID} {
		v, ok := extra[key]
		if !ok || v == nil {
			continue
		}
		f, ok := v.(float64)
		if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return pr, badRequestf("Invalid %s: must be an integer (ids beyond 2^53 are not supported yet)", key)
		}
		n := int64(f)
		*dst = &n
	}
	return pr, nil
}

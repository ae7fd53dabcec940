package server

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/uuid"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
)

// columnFilesOK reads the X-Iceberg-Column-Files header.
func columnFilesOK(h *openapi.ColumnFilesHeader) bool {
	return h != nil && strings.EqualFold(strings.TrimSpace(*h), "true")
}

// PlanTableScan implements openapi.StrictServerInterface: a synchronous,
// completed plan; a large one carries plan-tasks for fetchScanTasks.
func (s *Server) PlanTableScan(ctx context.Context, req openapi.PlanTableScanRequestObject) (openapi.PlanTableScanResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	pr := service.PlanRequest{CaseSensitive: true, ColumnFilesOK: columnFilesOK(req.Params.XIcebergColumnFiles)}
	if b := req.Body; b != nil {
		pr.SnapshotID, pr.StartSnapshotID, pr.EndSnapshotID = b.SnapshotId, b.StartSnapshotId, b.EndSnapshotId
		if b.Filter != nil {
			pr.Filter = json.RawMessage(*b.Filter)
		}
		if b.Select != nil {
			pr.Select = *b.Select
		}
		if b.CaseSensitive != nil {
			pr.CaseSensitive = *b.CaseSensitive
		}
		if b.UseSnapshotSchema != nil {
			pr.UseSnapshotSchema = *b.UseSnapshotSchema
		}
		if b.StatsFields != nil {
			pr.StatsFields = append([]string{}, *b.StatsFields...) // never nil: an empty list asks for none
		}
	}
	res, err := s.rooms.planner.PlanScan(ctx, req.Prefix, id, pr)
	if err != nil {
		return nil, err
	}
	tasks, deletes := encodePlan(res)
	planID := uuid.NewString()
	out := openapi.PlanTableScan200JSONResponse{Status: "completed", PlanId: &planID, FileScanTasks: &tasks, DeleteFiles: &deletes}
	if len(res.PlanTasks) > 0 {
		out.PlanTasks = &res.PlanTasks
	}
	return out, nil
}

// FetchScanTasks implements openapi.StrictServerInterface: the tasks of
// one plan task.
func (s *Server) FetchScanTasks(ctx context.Context, req openapi.FetchScanTasksRequestObject) (openapi.FetchScanTasksResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	if req.Body == nil || req.Body.PlanTask == "" {
		return nil, &fault.Error{Kind: fault.BadRequest, Message: "plan-task is required"}
	}
	res, err := s.rooms.planner.FetchScanTasks(ctx, req.Prefix, id, req.Body.PlanTask, columnFilesOK(req.Params.XIcebergColumnFiles))
	if err != nil {
		return nil, err
	}
	tasks, deletes := encodePlan(res)
	return openapi.FetchScanTasks200JSONResponse{FileScanTasks: &tasks, DeleteFiles: &deletes}, nil
}

// FetchPlanningResult implements openapi.StrictServerInterface. Plans are
// answered completed and never kept, so no plan id is ever pending: after
// the usual access and existence checks the answer is 404
// NoSuchPlanIdException.
func (s *Server) FetchPlanningResult(ctx context.Context, req openapi.FetchPlanningResultRequestObject) (openapi.FetchPlanningResultResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	return nil, s.rooms.planner.PlanStatus(ctx, req.Prefix, id, req.PlanId)
}

// CancelPlanning implements openapi.StrictServerInterface: nothing runs
// after a plan completes, so cancelling succeeds once access and the
// table are checked.
func (s *Server) CancelPlanning(ctx context.Context, req openapi.CancelPlanningRequestObject) (openapi.CancelPlanningResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	if err := s.rooms.planner.CancelPlan(ctx, req.Prefix, id, req.PlanId); err != nil {
		return nil, err
	}
	return openapi.CancelPlanning204Response{}, nil
}

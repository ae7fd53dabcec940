package service

import (
	"context"

	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/service/planning"
)

// Scan planning is done by planning.Planner; these names and methods keep
// the service's API whole.

// Scan planning types (package planning).
type (
	PlanRequest = planning.Request
	PlanResult  = planning.Result
	ScanTask    = planning.ScanTask
	DeleteFile  = planning.DeleteFile
)

// PlanScan plans a scan of a table (planning.Planner.PlanScan).
func (s *Service) PlanScan(ctx context.Context, warehouse string, id Ident, req PlanRequest) (PlanResult, error) {
	return s.planner.PlanScan(ctx, warehouse, id, req)
}

// FetchScanTasks plans one plan task of an earlier PlanScan (planning.Planner.FetchScanTasks).
func (s *Service) FetchScanTasks(ctx context.Context, warehouse string, id Ident, planTask string, columnFilesOK bool) (PlanResult, error) {
	return s.planner.FetchScanTasks(ctx, warehouse, id, planTask, columnFilesOK)
}

// PlanStatus answers fetchPlanningResult (planning.Planner.PlanStatus).
func (s *Service) PlanStatus(ctx context.Context, warehouse string, id Ident, plan string) error {
	return s.planner.PlanStatus(ctx, warehouse, id, plan)
}

// CancelPlan answers cancelPlanning (planning.Planner.CancelPlan).
func (s *Service) CancelPlan(ctx context.Context, warehouse string, id Ident, plan string) error {
	return s.planner.CancelPlan(ctx, warehouse, id, plan)
}

// PartitionValueJSON converts a partition value to the REST single-value
// JSON form (planning.PartitionValueJSON).
func PartitionValueJSON(v any, typ iceberg.Type) any { return planning.PartitionValueJSON(v, typ) }

// newPlanner is the service's planner: it reads through s.readers and
// authorizes table-read-data.
func (s *Service) newPlanner() *planning.Planner {
	return planning.New(planning.Deps{Tables: s.ta, Readers: s.readers, MaxPlanTasks: s.opts.MaxPlanTasks})

}

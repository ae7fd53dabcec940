package service

import (
	"context"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/service/planning"
	"github.com/lakehold/catalog/store"
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
	return planning.New(planning.Deps{
		Readers: s.readers,
		Authorize: func(ctx context.Context, warehouse string, id Ident) error {
			return s.ta.Authorize(ctx, PrivTableReadData, tableResource(warehouse, id))
		},
		Warehouse: s.ta.Warehouse, LoadTable: s.loadPlanTable, IOProps: s.ta.IOProps, TablePrefixes: tablePrefixes,
		Files: s.files, MaxPlanTasks: s.opts.MaxPlanTasks,
	})
}

// loadPlanTable loads a table's metadata and format version: 404 when the
// table does not exist.
func (s *Service) loadPlanTable(ctx context.Context, w *store.Warehouse, id Ident) (table.Metadata, int, error) {
	_, e, err := s.ta.ReadTable(ctx, w.Name, id)
	if err != nil {
		return nil, 0, err
	}
	return e.Meta, e.Version, nil
}

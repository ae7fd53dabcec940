package service

import (
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

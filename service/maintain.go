package service

import (
	"github.com/lakehold/catalog/service/maintenance"
)

// Snapshot expiry, orphan-file removal and the purge of dropped tables'
// files are done by maintenance.Maintainer; these names and methods keep
// the service's API whole.

// Maintenance types (package maintenance).
type (
	MaintainOptions = maintenance.MaintainOptions
	MaintainReport  = maintenance.MaintainReport
	OrphanOptions   = maintenance.OrphanOptions
)

// Expiry's table properties and orphan removal's windows (package
// maintenance).
const (
	PropMaxSnapshotAge = maintenance.PropMaxSnapshotAge
	OrphanListed       = maintenance.OrphanListed
	OrphanClaimed      = maintenance.OrphanClaimed
	ExpireCommitted    = maintenance.ExpireCommitted
	ExpireClaimed      = maintenance.ExpireClaimed
)

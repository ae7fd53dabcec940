package service

import (
	"context"

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
	OrphanReport    = maintenance.OrphanReport
)

// Expiry's table properties and orphan removal's windows (package
// maintenance).
const (
	PropMaxSnapshotAge     = maintenance.PropMaxSnapshotAge
	PropMinSnapshotsToKeep = maintenance.PropMinSnapshotsToKeep
	DefaultOrphanAge       = maintenance.DefaultOrphanAge
	MinOrphanAge           = maintenance.MinOrphanAge
	OrphanListed           = maintenance.OrphanListed
	OrphanClaimed          = maintenance.OrphanClaimed
	ExpireCommitted        = maintenance.ExpireCommitted
	ExpireClaimed          = maintenance.ExpireClaimed
)

// Maintain expires a table's old snapshots and deletes the files only they
// reference (maintenance.Maintainer.Maintain, which says what is returned
// when).
func (s *Service) Maintain(ctx context.Context, warehouse string, id Ident, opt MaintainOptions) (*MaintainReport, error) {
	return s.maint.Maintain(ctx, warehouse, id, opt)
}

// RemoveOrphanFiles deletes the files under a table's location that
// nothing references (maintenance.Maintainer.RemoveOrphanFiles, which says
// what is returned when).
func (s *Service) RemoveOrphanFiles(ctx context.Context, warehouse string, id Ident, opt OrphanOptions) (*OrphanReport, error) {
	return s.maint.RemoveOrphanFiles(ctx, warehouse, id, opt)
}

// newMaintainer is the service's maintainer: it authorizes
// table-write-metadata and table-write-data, reads through s.readers and
// commits expiries through s.tc.
func (s *Service) newMaintainer() *maintenance.Maintainer {
	return maintenance.New(maintenance.Deps{Tables: s.ta, Readers: s.readers, CommitExpiry: s.tc.CommitExpiry})

}

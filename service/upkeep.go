package service

import (
	"context"

	"github.com/lakehold/catalog/service/upkeep"
	"github.com/lakehold/catalog/store"
)

// The background work (the job handlers, the purge, the scheduled
// policies, soft-deleted objects, the job listing) is done by
// upkeep.Upkeep; these names and methods keep the service's API whole.

// Job kinds, states and page sizes (package upkeep).
const (
	JobPurgeTable      = upkeep.JobPurgeTable
	DefaultJobPageSize = upkeep.DefaultJobPageSize
	MaxJobPageSize     = upkeep.MaxJobPageSize
)

// JobStates are the states a job can be listed in (upkeep.JobStates).
var JobStates = upkeep.JobStates

// The scheduled policies' job kinds and properties (package upkeep).
const (
	JobExpireSnapshots    = upkeep.JobExpireSnapshots
	PropExpireEnabled     = upkeep.PropExpireEnabled
	PropExpireDelay       = upkeep.PropExpireDelay
	JobRemoveOrphanFiles  = upkeep.JobRemoveOrphanFiles
	PropOrphanEnabled     = upkeep.PropOrphanEnabled
	PropOrphanDelay       = upkeep.PropOrphanDelay
	PropOrphanAge         = upkeep.PropOrphanAge
	JobCompactColumnFiles = upkeep.JobCompactColumnFiles
	PropCompactEnabled    = upkeep.PropCompactEnabled
	PropCompactDelay      = upkeep.PropCompactDelay
)

// Soft delete's properties and job (package upkeep).
const (
	PropDeletionProfile      = upkeep.PropDeletionProfile
	PropDeletionRetention    = upkeep.PropDeletionRetention
	JobExpireDeleted         = upkeep.JobExpireDeleted
	DefaultDeletionRetention = upkeep.DefaultDeletionRetention
)

// Background work types (package upkeep).
type (
	JobFilter     = upkeep.JobFilter
	DeletedObject = upkeep.DeletedObject
)

// JobHandlers returns the handler of every job kind, for
// store.WorkerConfig (upkeep.Upkeep.JobHandlers).
func (s *Service) JobHandlers() map[string]store.JobHandler {
	h := s.upkeep.JobHandlers()
	h[JobDeleteMetadataFiles] = s.tc.RunDeleteMetadataFiles
	s.feed.Handlers(h)
	return h
}

// UpkeepJobs are the recurring jobs of the background work
// (upkeep.Upkeep.Jobs), to enqueue when workers start.
func (s *Service) UpkeepJobs() []store.Job { return s.upkeep.Jobs() }

// ListJobs returns background jobs matching f, newest first
// (upkeep.Upkeep.ListJobs, which says what is returned when).
func (s *Service) ListJobs(ctx context.Context, f JobFilter, page Page) ([]*store.JobInfo, string, error) {
	return s.upkeep.ListJobs(ctx, f, page.store())
}

// JobStats summarises the queue for /metrics (upkeep.Upkeep.JobStats).
func (s *Service) JobStats(ctx context.Context) (store.JobStats, error) {
	return s.upkeep.JobStats(ctx)
}

// ListDeleted lists a warehouse's soft-deleted tables and views
// (upkeep.Upkeep.ListDeleted, which says what is returned when).
func (s *Service) ListDeleted(ctx context.Context, warehouse string, page Page) ([]DeletedObject, string, error) {
	return s.upkeep.ListDeleted(ctx, warehouse, page.store())
}

// Undrop brings a soft-deleted table or view back (upkeep.Upkeep.Undrop,
// which says what is returned when).
func (s *Service) Undrop(ctx context.Context, warehouse, id string, to *Ident) (Ident, store.ObjectKind, error) {
	return s.upkeep.Undrop(ctx, warehouse, id, to)
}

// newUpkeep is the service's background work: its policies run Maintain,
// RemoveOrphanFiles and Compact as requests do, its purges go through
// s.maint, and it adds the delete-metadata-files and change-feed handlers.
func (s *Service) newUpkeep() *upkeep.Upkeep {
	return upkeep.New(upkeep.Deps{Tables: s.ta, Maint: s.maint, V4: s.v4})

}

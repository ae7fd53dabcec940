package service

import (
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

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
	JobPurgeTable = upkeep.JobPurgeTable
)

// JobStates are the states a job can be listed in (upkeep.JobStates).
var JobStates = upkeep.JobStates

// Background work types (package upkeep).
type (
	JobFilter = upkeep.JobFilter
)

// JobHandlers returns the handler of every job kind, for
// store.WorkerConfig (upkeep.Upkeep.JobHandlers).
func (s *Service) JobHandlers() map[string]store.JobHandler {
	h := s.upkeep.JobHandlers()
	s.feed.Handlers(h)
	s.reps.Handlers(h)
	return h
}

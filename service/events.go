package service

import (
	"github.com/lakehold/catalog/service/changefeed"
)

// Change events are read back, pruned and delivered by package changefeed;
// these names keep the service's API whole.
type (
	// EventOptions configure change events (changefeed.Options).
	EventOptions = changefeed.Options
	// EventsQuery is a POST /v1/{prefix}/events request (changefeed.Query).
	EventsQuery = changefeed.Query
)

// JobPruneEvents is the job kind that removes events past their retention.
const JobPruneEvents = changefeed.JobPruneEvents

// Events is the change feed: the pull feed (Query), the jobs events need
// on a replica that runs workers (Jobs), prune and delivery
// (changefeed.Feed, whose methods say what they return when).
func (s *Service) Events() *changefeed.Feed { return s.feed }

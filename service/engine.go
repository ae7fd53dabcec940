package service

import (
	"github.com/lakehold/catalog/service/commitengine"
)

// Every commit runs through package commitengine's one loop (its package
// comment states the outcome contract); these wire it to the service.

// newEngine is the service's commit engine: its retries, clock guard,
// metrics, spans, and the removal of files no commit references.
func (s *Service) newEngine() *commitengine.Engine {
	return commitengine.New(s.store, commitengine.Options{MaxAttempts: s.opts.MaxCommitAttempts, ClockGuard: s.ta.ClockGuard,
		OnOutcome: s.opts.OnCommit, Remove: s.ta.DeleteOrphan, Tracer: s.tracer, Logger: s.log})
}

package service

import (
	"context"

	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/store"
)

// Every commit runs through package commitengine's one loop (its package
// comment states the outcome contract); these wire it to the service.

// newEngine is the service's commit engine: its retries, clock guard,
// metrics, spans, and the removal of files no commit references.
func (s *Service) newEngine() *commitengine.Engine {
	return commitengine.New(s.store, commitengine.Options{MaxAttempts: s.opts.MaxCommitAttempts, ClockGuard: s.ta.ClockGuard,
		OnOutcome: s.opts.OnCommit, Remove: s.ta.DeleteOrphan, Tracer: s.tracer, Logger: s.log})
}

// runCommit runs stage through the commit loop (commitengine.Engine.Run).
func (s *Service) runCommit(ctx context.Context, w *store.Warehouse, subject string, stage commitengine.Stage) error {
	return s.engine.Run(ctx, w, subject, stage)
}

// dropUnlanded deletes the files of a write that failed with err unless it
// may have landed (commitengine.Engine.DropUnlanded).
func (s *Service) dropUnlanded(ctx context.Context, w *store.Warehouse, err error, files ...string) {
	s.engine.DropUnlanded(ctx, w, err, files...)
}

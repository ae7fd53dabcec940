package service

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/store"
)

// The commit engine. Every kind of commit (a table, a multi-table
// transaction, a view, a v4 files or column-files commit) is one loop:
//
//	stage → swap → on a lost race re-stage from the new state → outcome
//
// A stage reads the current state, checks requirements, applies the change
// and writes every new file; nothing is visible until the swap moves the
// pointers in one database transaction. The outcome contract, for every
// kind:
//   - 409 CommitFailedException: nothing was committed; the client may retry.
//   - 500 CommitStateUnknownException: only when the swap (or its COMMIT)
//     was sent and its answer was lost or came too late, and a re-read of
//     the pointer could not prove that it landed; the change may have
//     landed, so the files it wrote are kept (for the orphan clean-up).
//   - 503 ServiceUnavailableException: the database was unreachable before
//     the swap was sent, or refused it; nothing was committed. (Java's REST client surfaces a 503 on a
//     commit route as CommitStateUnknownException: it keeps its files and
//     does not clean up, which is safe; a retry, ideally with the same
//     Idempotency-Key, is correct.)
//   - anything a stage returns (400, 404, 409 on a failed requirement) is
//     final and nothing was committed.

// attempt is one staged try of a commit.
type attempt struct {
	// swaps move the pointers; all land in one transaction, or none. An
	// attempt without swaps changed nothing (a no-op commit).
	swaps []store.Swap
	// written are the files this attempt wrote. They are removed when the
	// attempt does not land, and kept when it landed or may have landed.
	written []string
	// landed, when set, runs after a successful swap.
	landed func(context.Context)
	// jobs are enqueued in the swap's transaction: they exist if and only
	// if the attempt landed.
	jobs []store.Job
	// events are written to the outbox in the swap's transaction, like jobs.
	events []store.Event
}

// addFile records a file written by the attempt.
func (a *attempt) addFile(loc string) { a.written = append(a.written, loc) }

// stageFunc stages one attempt. It may return a non-nil attempt with an
// error, so that the files it wrote before failing are removed.
type stageFunc func(ctx context.Context) (*attempt, error)

// Commit outcome labels, as exported through Options.OnCommit. rejected
// is the client's mistake (a 4xx other than a failed requirement: an
// invalid update, a validation failure, a location overlap), error is
// ours (5xx).
const (
	outcomeCommitted         = "committed"
	outcomeNoop              = "noop"
	outcomeConflict          = "conflict"
	outcomeRequirementFailed = "requirement_failed"
	outcomeRejected          = "rejected"
	outcomeUnknown           = "unknown"
	outcomeUnavailable       = "unavailable"
	outcomeError             = "error"
	// outcomeConflictRetry is an attempt's, never a commit's: its swap
	// lost a race and the commit goes on with another attempt.
	outcomeConflictRetry = "conflict_retry"
)

// Client-visible commit messages, one set for every kind of commit. subject
// is what changed ("table", "view", "tables").
const (
	msgStateUnknown  = storefault.MsgStateUnknown
	msgCancelled     = "Commit failed: request cancelled while retrying, nothing was committed"
	msgDatabase      = "Commit failed: catalog database error before commit, nothing was committed; retry"
	msgUnavailable   = "Catalog database unavailable, nothing was committed; retry later"
	msgConflictTimes = "Commit failed: the %s changed concurrently %d times, nothing was committed; retry"
	msgOverlap       = "Location overlaps another table or view"
)

// runCommit runs the commit loop: stage, swap, and on a lost race start
// over from the then-current state, at most MaxCommitAttempts times with a
// jittered backoff. It returns nil once the attempt landed (or was a
// no-op); errors follow the outcome contract above. Each attempt is a span
// when tracing is on (tracing.go).
func (s *Service) runCommit(ctx context.Context, w *store.Warehouse, subject string, stage stageFunc) error {
	for try := 1; ; try++ {
		actx, span := s.startAttempt(ctx, try)
		outcome, err := s.tryCommit(actx, w, subject, stage, try)
		endAttempt(span, outcome)
		if outcome != outcomeConflictRetry {
			s.commitOutcome(outcome)
			return err
		}
		if berr := conflictBackoff(ctx, try); berr != nil {
			s.commitOutcome(outcomeError)
			return fault.Wrap(fault.CommitFailed, berr, msgCancelled)
		}
	}
}

// tryCommit is attempt number try of runCommit: its outcome, which is
// outcomeConflictRetry when the swap lost a race and another attempt may
// follow, and the error to return otherwise.
func (s *Service) tryCommit(ctx context.Context, w *store.Warehouse, subject string, stage stageFunc, try int) (string, error) {
	if err := s.clockGuard(); err != nil {
		return outcomeUnavailable, err
	}
	a, err := stage(ctx)
	if err != nil {
		if a != nil {
			s.removeFiles(ctx, w, a.written)
		}
		return stageOutcome(err), err
	}
	if len(a.swaps) == 0 {
		s.removeFiles(ctx, w, a.written)
		return outcomeNoop, nil
	}
	sctx := ctx
	if len(a.jobs) > 0 {
		sctx = store.WithJobs(ctx, a.jobs...)
	}
	sctx = store.WithEvents(sctx, a.events...) // empty when events are off
	err = s.store.ObjectsSwap(sctx, a.swaps)
	if err == nil {
		if a.landed != nil {
			a.landed(ctx)
		}
		return outcomeCommitted, nil
	}
	if errors.Is(err, store.ErrOutcomeUnknown) {
		return outcomeUnknown, fault.Wrap(fault.CommitStateUnknown, err, msgStateUnknown)
	}
	s.removeFiles(ctx, w, a.written)
	if errors.Is(err, store.ErrConflict) && try < s.opts.MaxCommitAttempts {
		return outcomeConflictRetry, nil
	}
	return swapFailure(err, subject, try)
}

// swapFailure maps a swap that did not commit to its outcome and error.
func swapFailure(err error, subject string, tries int) (string, error) {
	switch {
	case errors.Is(err, store.ErrConflict):
		return outcomeConflict, fault.Wrap(fault.CommitFailed, err, msgConflictTimes, subject, tries)
	case errors.Is(err, store.ErrLocationOverlap):
		return outcomeRejected, fault.Wrap(fault.BadRequest, err, msgOverlap)
	case isUnavailable(err):
		return outcomeUnavailable, fault.Wrap(fault.Unavailable, err, msgUnavailable)
	}
	return outcomeError, fault.Wrap(fault.CommitFailed, err, msgDatabase)
}

// isUnavailable reports whether err means the request could not reach the
// database (or gave up waiting for it) before anything was committed.
func isUnavailable(err error) bool {
	return errors.Is(err, store.ErrUnavailable) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// stageOutcome labels a stage failure for metrics: a failed requirement
// (409), the database unavailable (503), a failure of ours (500) or else
// the client's mistake (every other kind is a 4xx).
func stageOutcome(err error) string {
	switch fault.KindOf(err) {
	case fault.CommitFailed:
		return outcomeRequirementFailed
	case fault.Unavailable:
		return outcomeUnavailable
	case fault.Internal, fault.CommitStateUnknown:
		return outcomeError
	}
	return outcomeRejected
}

// removeFiles deletes files an attempt wrote that no commit references. It
// runs even when the request was cancelled: the files are ours to clean.
func (s *Service) removeFiles(ctx context.Context, w *store.Warehouse, files []string) {
	if len(files) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, f := range files {
		s.deleteOrphan(ctx, w, f)
	}
}

// mayHaveLanded reports whether err leaves a write's outcome unknown: the
// database may have applied it, so the files it names must stay.
func mayHaveLanded(err error) bool {
	return errors.Is(err, store.ErrOutcomeUnknown) || fault.KindOf(err) == fault.CommitStateUnknown
}

// dropUnlanded deletes files written for a write that failed with err,
// unless err leaves the outcome unknown: a pointer that did land must never
// name a deleted file. Files kept that way are left to the orphan clean-up.
func (s *Service) dropUnlanded(ctx context.Context, w *store.Warehouse, err error, files ...string) {
	if mayHaveLanded(err) {
		s.log.WarnContext(ctx, "kept the files of a write whose outcome is unknown", "files", len(files))
		return
	}
	s.removeFiles(ctx, w, files)
}

// conflictBackoff waits a jittered, growing moment before re-basing a commit
// that lost a race, so that a crowd of writers on one table spreads out.
func conflictBackoff(ctx context.Context, attempt int) error {
	limit := time.Duration(1<<min(attempt, 6)) * time.Millisecond
	t := time.NewTimer(time.Duration(rand.Int64N(int64(limit))) + time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

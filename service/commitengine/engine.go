// Package commitengine runs every commit of the catalog, of every kind (a
// table, a multi-table transaction, a view, a v4 files or column-files
// commit), through one loop:
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
//     the swap was sent, or refused it; nothing was committed. (Java's REST
//     client surfaces a 503 on a commit route as
//     CommitStateUnknownException: it keeps its files and does not clean
//     up, which is safe; a retry, ideally with the same Idempotency-Key, is
//     correct.)
//   - anything a stage returns (400, 404, 409 on a failed requirement) is
//     final and nothing was committed.
//
// It knows the store and the file-removal function it is given, nothing of
// HTTP or of what a stage builds.
package commitengine

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"path"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/store"
)

// Attempt is one staged try of a commit.
type Attempt struct {
	// Swaps move the pointers; all land in one transaction, or none. An
	// attempt without swaps changed nothing (a no-op commit).
	Swaps []store.Swap
	// Written are the files this attempt wrote. They are removed when the
	// attempt does not land, and kept when it landed or may have landed.
	Written []string
	// Landed, when set, runs after a successful swap.
	Landed func(context.Context)
	// Jobs are enqueued in the swap's transaction: they exist if and only
	// if the attempt landed.
	Jobs []store.Job
	// Events are written to the outbox in the swap's transaction, like jobs.
	Events []store.Event
	// ListAdds, when set, lists the files swap i adds (store.Swap.Adds)
	// for a swap staged without them. It is called only when such a swap
	// was refused because an orphan-file removal holds its table, and the
	// swaps are then tried once more: listing may read manifests, which
	// the common commit of an unheld table must not pay for. Its error
	// ends the commit, like a stage's.
	ListAdds func(ctx context.Context, i int) ([]string, error)
}

// AddFile records a file written by the attempt.
func (a *Attempt) AddFile(loc string) { a.Written = append(a.Written, loc) }

// Stage stages one attempt. It may return a non-nil attempt with an
// error, so that the files it wrote before failing are removed.
type Stage func(ctx context.Context) (*Attempt, error)

// Commit outcome labels, as reported to Options.OnOutcome. rejected
// is the client's mistake (a 4xx other than a failed requirement: an
// invalid update, a validation failure, a location overlap), error is
// ours (5xx).
const (
	OutcomeCommitted         = "committed"
	OutcomeNoop              = "noop"
	OutcomeConflict          = "conflict"
	OutcomeRequirementFailed = "requirement_failed"
	OutcomeRejected          = "rejected"
	OutcomeUnknown           = "unknown"
	OutcomeUnavailable       = "unavailable"
	OutcomeError             = "error"
	// OutcomeConflictRetry is an attempt's, never a commit's: its swap
	// lost a race and the commit goes on with another attempt.
	OutcomeConflictRetry = "conflict_retry"
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
	msgOrphanHold    = "Commit failed: an orphan-file removal of the %s deleted or is deleting %s, which this commit adds; nothing was committed (write the file again under a new name and retry)"
)

// Options configure an Engine.
type Options struct {
	// MaxAttempts bounds the attempts of one commit: a commit that lost
	// the compare-and-swap race this many times is a 409.
	MaxAttempts int
	// ClockGuard, when set, runs before every attempt: a non-nil error
	// (a replica whose clock is off) ends the commit with it, unavailable.
	ClockGuard func() error
	// OnOutcome is told every commit's final outcome label; may be nil.
	OnOutcome func(outcome string)
	// Remove deletes one file an attempt wrote and no commit references,
	// logging a failure; it must not fail the commit.
	Remove func(ctx context.Context, w *store.Warehouse, loc string)
	// Tracer gets a span per attempt; nil: no spans.
	Tracer trace.Tracer
	Logger *slog.Logger
}

// Engine runs commits against one store.
type Engine struct {
	store store.Store
	opts  Options
}

// New returns an engine over st.
func New(st store.Store, opts Options) *Engine {
	return &Engine{store: st, opts: opts}
}

// Report tells Options.OnOutcome a commit's outcome, for commits that do
// not go through Run (a create from a commit's updates).
func (e *Engine) Report(outcome string) {
	if e.opts.OnOutcome != nil {
		e.opts.OnOutcome(outcome)
	}
}

// Run runs the commit loop: stage, swap, and on a lost race start
// over from the then-current state, at most MaxCommitAttempts times with a
// jittered backoff. It returns nil once the attempt landed (or was a
// no-op); errors follow the outcome contract of the package comment. Each
// attempt is a span when tracing is on (tracing.go).
func (e *Engine) Run(ctx context.Context, w *store.Warehouse, subject string, stage Stage) error {
	for try := 1; ; try++ {
		actx, span := e.startAttempt(ctx, try)
		outcome, err := e.tryCommit(actx, w, subject, stage, try)
		endAttempt(span, outcome)
		if outcome != OutcomeConflictRetry {
			e.Report(outcome)
			return err
		}
		if berr := conflictBackoff(ctx, try); berr != nil {
			e.Report(OutcomeError)
			return fault.Wrap(fault.CommitFailed, berr, msgCancelled)
		}
	}
}

// tryCommit is attempt number try of Run: its outcome, which is
// OutcomeConflictRetry when the swap lost a race and another attempt may
// follow, and the error to return otherwise.
func (e *Engine) tryCommit(ctx context.Context, w *store.Warehouse, subject string, stage Stage, try int) (string, error) {
	if e.opts.ClockGuard != nil {
		if err := e.opts.ClockGuard(); err != nil {
			return OutcomeUnavailable, err
		}
	}
	a, err := stage(ctx)
	if err != nil {
		if a != nil {
			e.RemoveFiles(ctx, w, a.Written)
		}
		return StageOutcome(err), err
	}
	if len(a.Swaps) == 0 {
		e.RemoveFiles(ctx, w, a.Written)
		return OutcomeNoop, nil
	}
	sctx := ctx
	if len(a.Jobs) > 0 {
		sctx = store.WithJobs(ctx, a.Jobs...)
	}
	sctx = store.WithEvents(sctx, a.Events...) // empty when events are off
	err = e.store.ObjectsSwap(sctx, a.Swaps)
	if unlistedHold(err) && a.ListAdds != nil {
		if lerr := listAdds(ctx, a); lerr != nil {
			e.RemoveFiles(ctx, w, a.Written)
			return StageOutcome(lerr), lerr
		}
		err = e.store.ObjectsSwap(sctx, a.Swaps)
	}
	if err == nil {
		if a.Landed != nil {
			a.Landed(ctx)
		}
		return OutcomeCommitted, nil
	}
	if errors.Is(err, store.ErrOutcomeUnknown) {
		return OutcomeUnknown, fault.Wrap(fault.CommitStateUnknown, err, msgStateUnknown)
	}
	e.RemoveFiles(ctx, w, a.Written)
	if errors.Is(err, store.ErrConflict) && try < e.opts.MaxAttempts {
		return OutcomeConflictRetry, nil
	}
	return swapFailure(err, subject, try)
}

// swapFailure maps a swap that did not commit to its outcome and error.
func swapFailure(err error, subject string, tries int) (string, error) {
	switch {
	case errors.Is(err, store.ErrConflict):
		return OutcomeConflict, fault.Wrap(fault.CommitFailed, err, msgConflictTimes, subject, tries)
	case errors.Is(err, store.ErrOrphanHold):
		return OutcomeConflict, fault.Wrap(fault.CommitFailed, err, msgOrphanHold, subject, heldName(err))
	case errors.Is(err, store.ErrLocationOverlap):
		return OutcomeRejected, fault.Wrap(fault.BadRequest, err, msgOverlap)
	case isUnavailable(err):
		return OutcomeUnavailable, fault.Wrap(fault.Unavailable, err, msgUnavailable)
	}
	return OutcomeError, fault.Wrap(fault.CommitFailed, err, msgDatabase)
}

// isUnavailable reports whether err means the request could not reach the
// database (or gave up waiting for it) before anything was committed.
func isUnavailable(err error) bool {
	return errors.Is(err, store.ErrUnavailable) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// StageOutcome labels a stage failure for metrics: a failed requirement
// (409), the database unavailable (503), a failure of ours (500) or else
// the client's mistake (every other kind is a 4xx).
func StageOutcome(err error) string {
	switch fault.KindOf(err) {
	case fault.CommitFailed:
		return OutcomeRequirementFailed
	case fault.Unavailable:
		return OutcomeUnavailable
	case fault.Internal, fault.CommitStateUnknown:
		return OutcomeError
	}
	return OutcomeRejected
}

// RemoveFiles deletes files an attempt wrote that no commit references
// (through Options.Remove, which logs failures). It runs even when the
// request was cancelled: the files are ours to clean.
func (e *Engine) RemoveFiles(ctx context.Context, w *store.Warehouse, files []string) {
	if len(files) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, f := range files {
		e.opts.Remove(ctx, w, f)
	}
}

// MayHaveLanded reports whether err leaves a write's outcome unknown: the
// database may have applied it, so the files it names must stay.
func MayHaveLanded(err error) bool {
	return errors.Is(err, store.ErrOutcomeUnknown) || fault.KindOf(err) == fault.CommitStateUnknown
}

// DropUnlanded deletes files written for a write that failed with err,
// unless err leaves the outcome unknown: a pointer that did land must never
// name a deleted file. Files kept that way are left to the orphan clean-up.
func (e *Engine) DropUnlanded(ctx context.Context, w *store.Warehouse, err error, files ...string) {
	if MayHaveLanded(err) {
		e.opts.Logger.WarnContext(ctx, "kept the files of a write whose outcome is unknown", "files", len(files))
		return
	}
	e.RemoveFiles(ctx, w, files)
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

// unlistedHold reports whether err refuses a swap that did not list the
// files it adds, because an orphan-file removal holds its table.
func unlistedHold(err error) bool {
	var h *store.OrphanHoldError
	return errors.As(err, &h) && h.Location == ""
}

// listAdds fills in the added files of a's swaps staged without them.
func listAdds(ctx context.Context, a *Attempt) error {
	for i := range a.Swaps {
		if a.Swaps[i].AddsListed {
			continue
		}
		adds, err := a.ListAdds(ctx, i)
		if err != nil {
			return err
		}
		a.Swaps[i].Adds, a.Swaps[i].AddsListed = adds, true
	}
	return nil
}

// heldName names the file an orphan-file removal holds by its last path
// element (never a whole path), or says it is one of the table's files
// when the commit did not list what it adds.
func heldName(err error) string {
	var h *store.OrphanHoldError
	if errors.As(err, &h) && h.Location != "" {
		return path.Base(h.Location)
	}
	return "files under its location (this commit does not say which files it adds)"
}

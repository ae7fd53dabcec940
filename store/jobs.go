package store

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"
)

// Job is background work that a catalog change causes (a purge after a
// drop). It is enqueued in the same transaction as the change
// (WithJobs), so a change that commits always has its jobs and one that
// does not (a 409, a refused check) has none.
type Job struct {
	// Kind selects the handler (WorkerConfig.Handlers).
	Kind string
	// Args is the kind's own JSON object. It must hold no secret: it is
	// listed by GET /management/v1/jobs.
	Args json.RawMessage
	// Warehouse, Table and TableUUID say what the job is about, for
	// listing and filtering; any may be empty.
	Warehouse string
	Table     string
	TableUUID string
	// Unique keeps at most one job of this kind and these Args that has
	// not yet completed: enqueueing another is a no-op.
	Unique bool
	// RunAt delays the first attempt; zero means now.
	RunAt time.Time
	// MaxAttempts bounds the attempts (0: DefaultJobAttempts).
	MaxAttempts int
}

// DefaultJobAttempts is how many times a failing job runs before it is
// discarded (kept, state "discarded", with every attempt's error).
const DefaultJobAttempts = 10

// JobInfo is a job as the queue lists it.
type JobInfo struct {
	ID          int64
	Kind        string
	State       string // available, scheduled, running, retryable, completed, cancelled, discarded
	Attempt     int
	MaxAttempts int
	Warehouse   string
	Table       string
	TableUUID   string
	Args        json.RawMessage
	Errors      []JobAttemptError
	CreatedAt   time.Time
	ScheduledAt time.Time
	AttemptedAt *time.Time
	FinalizedAt *time.Time
}

// JobAttemptError is what one failed attempt recorded.
type JobAttemptError struct {
	Attempt int
	At      time.Time
	Error   string
}

// JobFilter narrows a job listing; zero fields match everything.
type JobFilter struct {
	Warehouse string
	Table     string // the job's Table, as enqueued
	TableUUID string
	Kind      string
	States    []string
}

// JobStats summarises the queue for /metrics.
type JobStats struct {
	// ByState counts jobs per state (finished jobs until River's cleaner
	// removes them).
	ByState map[string]int64
	// OldestWaiting is how long the oldest job that could run now has
	// been waiting (0 when none waits).
	OldestWaiting time.Duration
}

// JobHandler runs one attempt of a job. An error schedules a retry with
// backoff until the job's attempts are used up; its text is stored and
// listed, so it must name no secret, token or server path. The context is
// cancelled when the job's timeout passes or the worker stops.
type JobHandler func(ctx context.Context, job *JobInfo) error

// JobSnooze is what a handler returns to run its job again after After,
// with the same arguments and without using up an attempt: a job that
// recurs (a table's scheduled maintenance) stays one job, so that Unique
// keeps it the only one of its kind for its table.
type JobSnooze struct{ After time.Duration }

func (e *JobSnooze) Error() string { return "job snoozed for " + e.After.String() }

// WorkerConfig starts job workers in this process.
type WorkerConfig struct {
	// Workers is how many jobs run at once (at least 1).
	Workers int
	// Handlers maps each job kind this process runs to its handler.
	Handlers map[string]JobHandler
	// JobTimeout cancels an attempt that runs longer (default 10 min).
	JobTimeout time.Duration
	// RescueAfter is the lease of a running job: a job still "running"
	// after it (its worker was killed) is made available again. It must
	// exceed JobTimeout (default JobTimeout + 1 min).
	RescueAfter time.Duration
	// PollInterval is how often idle workers look for new jobs (default
	// 1 s; Postgres also wakes them on insert).
	PollInterval time.Duration
	Logger       *slog.Logger
}

// Workers is a running set of job workers.
type Workers interface {
	// Stop waits for running attempts to finish (until ctx ends, when
	// they are cancelled and retried later) and stops fetching.
	Stop(ctx context.Context) error
}

// Jobs is the job queue kept in the catalog database (River). Errors are
// ErrUnavailable when the database is out of reach, ErrInvalidPageToken
// for a token not issued by ListJobs, ErrDatabase otherwise.
type Jobs interface {
	// ListJobs returns jobs matching f, newest first, and the token of
	// the next page ("" when none follows).
	ListJobs(ctx context.Context, f JobFilter, page Page) ([]*JobInfo, string, error)
	// EnqueueJobs enqueues jobs that no change causes (a replica's
	// recurring jobs), in a transaction of their own; a Unique job that
	// already waits or runs is not added again.
	EnqueueJobs(ctx context.Context, jobs ...Job) error
	// JobStats counts the queue's jobs.
	JobStats(ctx context.Context) (JobStats, error)
	// StartWorkers runs cfg.Handlers on jobs from any replica's changes
	// until Stop. A job interrupted by a crash runs again after
	// RescueAfter.
	StartWorkers(ctx context.Context, cfg WorkerConfig) (Workers, error)
}

type jobsKey struct{}

// WithJobs returns a context under which the next change to a table or
// view (ObjectCreate, ObjectReplace, ObjectDelete, ObjectDeleteIf,
// ObjectRename, ObjectsSwap) also enqueues jobs, in its own transaction.
// Pass the returned context to that one call only: every change made
// under it would enqueue the jobs again.
func WithJobs(ctx context.Context, jobs ...Job) context.Context {
	return context.WithValue(ctx, jobsKey{}, jobs)
}

// JobsOf returns the jobs WithJobs attached to ctx.
func JobsOf(ctx context.Context) []Job {
	j, _ := ctx.Value(jobsKey{}).([]Job)
	return j
}

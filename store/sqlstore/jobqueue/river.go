// Package jobqueue runs the catalog's background jobs on River, over the
// connections of the sqldb driver: store.Job in (enqueued inside the
// caller's transaction), River's rows out as store.JobInfo, and the
// workers that call each kind's handler. River is generic in the driver's
// transaction type (pgx.Tx, *sql.Tx); Queue hides that. The SQL of the
// catalog's job calls stays in sqlstore.
package jobqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

// Queue is River over one of the two drivers.
type Queue interface {
	// Insert enqueues jobs inside the transaction q belongs to; now is the
	// database's time as this process estimates it (job hints). It
	// returns store.ErrInvalidValue for a job without a kind or with
	// args that are not JSON, an error when q is not a transaction's,
	// and River's or the database's errors.
	Insert(ctx context.Context, q sqldb.Querier, jobs []store.Job, now time.Time) error
	// List returns the jobs p selects, or River's error.
	List(ctx context.Context, p *river.JobListParams) (*river.JobListResult, error)
	// StartWorkers starts cfg.Workers workers for the kinds in
	// cfg.Handlers. It returns an error without a worker or a handler, for
	// a kind River refuses, or when River cannot start.
	StartWorkers(ctx context.Context, cfg store.WorkerConfig) (store.Workers, error)
}

// Hints is the record of Unique jobs known to wait (sqlstore's job_hints
// table): Insert skips River for a Unique job that Waits says still waits
// past now+Margin, and has Record keep the time of one River holds past
// that.
// Both run in the inserting transaction.
type Hints struct {
	Margin time.Duration
	Waits  func(ctx context.Context, q sqldb.Querier, j store.Job, now time.Time) (bool, error)
	Record func(ctx context.Context, q sqldb.Querier, j store.Job, scheduledAt time.Time) error
}

// New returns River over db's own connections, with the job hints h. It
// returns an error for a driver it has no River driver for, or when River
// refuses the driver.
func New(db sqldb.Driver, h Hints) (Queue, error) {
	// River is generic in the driver's transaction type, hence one case
	// per driver.
	switch d := db.(type) {
	case *sqldb.Postgres:
		rd, txOf := d.River()
		return newRiverQueue(rd, txOf, h)
	case *sqldb.SQLite:
		rd, txOf := d.River()
		return newRiverQueue(rd, txOf, h)
	}
	return nil, fmt.Errorf("job queue: no River driver for %T", db)
}

// riverQueue implements Queue for the driver whose transactions are TTx.
type riverQueue[TTx any] struct {
	driver riverdriver.Driver[TTx]
	// inserter is an insert-only client (no queues, no workers): every
	// replica enqueues, whether or not it runs jobs.
	inserter *river.Client[TTx]
	// txOf returns the driver transaction behind the querier a store
	// transaction hands its body.
	txOf  func(sqldb.Querier) (TTx, bool)
	hints Hints
}

func newRiverQueue[TTx any](d riverdriver.Driver[TTx], txOf func(sqldb.Querier) (TTx, bool), h Hints) (*riverQueue[TTx], error) {
	c, err := river.NewClient(d, &river.Config{})
	if err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	return &riverQueue[TTx]{driver: d, inserter: c, txOf: txOf, hints: h}, nil
}

// jobArgs carries a job's own JSON through River untouched: River derives
// the kind from the args value, and ours is only known at run time.
type jobArgs struct {
	kind string
	raw  json.RawMessage
}

// Kind implements river.JobArgs.
func (a jobArgs) Kind() string { return a.kind }

// MarshalJSON writes the job's own JSON, {} for none.
func (a jobArgs) MarshalJSON() ([]byte, error) {
	if len(a.raw) == 0 {
		return []byte("{}"), nil
	}
	return a.raw, nil
}

// UnmarshalJSON keeps a copy of the JSON as it is.
func (a *jobArgs) UnmarshalJSON(b []byte) error {
	a.raw = append(json.RawMessage(nil), b...)
	return nil
}

// jobMeta is the metadata River keeps beside a job, for listing by table.
type jobMeta struct {
	Warehouse string `json:"warehouse,omitempty"`
	Table     string `json:"table,omitempty"`
	TableUUID string `json:"table_uuid,omitempty"`
}

// uniqueStates are the states in which a Unique job blocks another: a job
// that has finished (completed, cancelled, discarded) does not.
var uniqueStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
	rivertype.JobStateRunning, rivertype.JobStateScheduled,
}

func insertOpts(j store.Job) (*river.InsertOpts, error) {
	meta, err := json.Marshal(jobMeta{Warehouse: j.Warehouse, Table: j.Table, TableUUID: j.TableUUID})
	if err != nil {
		return nil, err
	}
	o := &river.InsertOpts{Metadata: meta, MaxAttempts: j.MaxAttempts}
	if j.RunAt.After(time.Now()) {
		o.ScheduledAt = j.RunAt // else River's now: available at once
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = store.DefaultJobAttempts
	}
	if j.Unique {
		o.UniqueOpts = river.UniqueOpts{ByArgs: true, ByState: uniqueStates}
	}
	return o, nil
}

// Insert implements Queue.
func (r *riverQueue[TTx]) Insert(ctx context.Context, q sqldb.Querier, jobs []store.Job, now time.Time) error {
	tx, ok := r.txOf(q)
	if !ok {
		return errors.New("job queue: jobs can only be enqueued inside a transaction")
	}
	for _, j := range jobs {
		if j.Kind == "" || (len(j.Args) > 0 && !json.Valid(j.Args)) {
			return fmt.Errorf("%w: job kind %q needs a kind and JSON args", store.ErrInvalidValue, j.Kind)
		}
		opts, err := insertOpts(j)
		if err != nil {
			return err
		}
		if j.Unique {
			waits, err := r.hints.Waits(ctx, q, j, now)
			if err != nil {
				return err
			}
			if waits {
				continue // the job already waiting runs after this change
			}
		}
		res, err := r.inserter.InsertTx(ctx, tx, jobArgs{kind: j.Kind, raw: j.Args}, opts)
		if err != nil {
			return err
		}
		if j.Unique && res != nil && res.Job != nil && res.Job.ScheduledAt.After(now.Add(r.hints.Margin)) {
			// The job River holds now (this one, or the one already there)
			// waits: later changes may leave it be. Only such hints are
			// kept, so they stay one per delayed job (a table's policies).
			if err := r.hints.Record(ctx, q, j, res.Job.ScheduledAt); err != nil {
				return err
			}
		}
	}
	return nil
}

// List implements Queue.
func (r *riverQueue[TTx]) List(ctx context.Context, p *river.JobListParams) (*river.JobListResult, error) {
	return r.inserter.JobList(ctx, p)
}

// riverWorker runs one kind's handler.
type riverWorker struct {
	river.WorkerDefaults[jobArgs]
	handle store.JobHandler
}

// Work runs the handler, turning a store.JobSnooze into River's snooze.
func (w *riverWorker) Work(ctx context.Context, j *river.Job[jobArgs]) error {
	err := w.handle(ctx, Info(j.JobRow))
	var snooze *store.JobSnooze
	if errors.As(err, &snooze) {
		return river.JobSnooze(snooze.After)
	}
	return err
}

// StartWorkers implements Queue.
func (r *riverQueue[TTx]) StartWorkers(ctx context.Context, cfg store.WorkerConfig) (store.Workers, error) {
	if cfg.Workers < 1 || len(cfg.Handlers) == 0 {
		return nil, errors.New("job workers: need at least one worker and one handler")
	}
	cfg = workerDefaults(cfg)
	workers := river.NewWorkers()
	for kind, h := range cfg.Handlers {
		if err := addWorker(workers, kind, h); err != nil {
			return nil, err
		}
	}
	c, err := river.NewClient(r.driver, &river.Config{
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Workers}},
		Workers:              workers,
		JobTimeout:           cfg.JobTimeout,
		RescueStuckJobsAfter: cfg.RescueAfter,
		FetchPollInterval:    cfg.PollInterval,
		// River fetches again after a job finishes, at most once per
		// cooldown, taking up to the free workers: the cooldown bounds a
		// burst of short jobs to Workers per cooldown (River's 100 ms: 20
		// jobs/s with 2 workers).
		FetchCooldown:       min(10*time.Millisecond, cfg.PollInterval),
		FetchOnlyKnownKinds: true, // a replica without a kind's handler leaves its jobs to others
		// Finished jobs stay listable: a day when they succeeded, a week
		// when they failed for good.
		CompletedJobRetentionPeriod: 24 * time.Hour,
		CancelledJobRetentionPeriod: 7 * 24 * time.Hour,
		DiscardedJobRetentionPeriod: 7 * 24 * time.Hour,
		Logger:                      cfg.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("job workers: %w", err)
	}
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("job workers: %w", err)
	}
	return riverWorkers[TTx]{c}, nil
}

// riverWorkers implements store.Workers.
type riverWorkers[TTx any] struct{ c *river.Client[TTx] }

// Stop waits for running attempts until ctx ends, then cancels them: River
// records them as failed attempts and runs them again later.
func (w riverWorkers[TTx]) Stop(ctx context.Context) error {
	err := w.c.Stop(ctx)
	if err != nil && ctx.Err() != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = w.c.StopAndCancel(cctx)
	}
	return err
}

// addWorker registers h for kind. River's AddWorkerArgs is the one entry
// that takes the kind from a value rather than from a Go type.
func addWorker(workers *river.Workers, kind string, h store.JobHandler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("job workers: kind %q: %v", kind, p)
		}
	}()
	river.AddWorkerArgs(workers, jobArgs{kind: kind}, river.Worker[jobArgs](&riverWorker{handle: h}))
	return nil
}

func workerDefaults(cfg store.WorkerConfig) store.WorkerConfig {
	if cfg.JobTimeout <= 0 {
		cfg.JobTimeout = 10 * time.Minute
	}
	if cfg.RescueAfter <= cfg.JobTimeout {
		cfg.RescueAfter = cfg.JobTimeout + time.Minute
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	return cfg
}

// Info is River's row of a job as the store reports it. Only our own jobs
// carry the table metadata; others list without a table.
func Info(r *rivertype.JobRow) *store.JobInfo {
	var meta jobMeta
	_ = json.Unmarshal(r.Metadata, &meta) // jobs we did not insert list without a table
	j := &store.JobInfo{
		ID: r.ID, Kind: r.Kind, State: string(r.State), Attempt: r.Attempt, MaxAttempts: r.MaxAttempts,
		Warehouse: meta.Warehouse, Table: meta.Table, TableUUID: meta.TableUUID,
		Args: json.RawMessage(r.EncodedArgs), CreatedAt: r.CreatedAt, ScheduledAt: r.ScheduledAt,
		AttemptedAt: r.AttemptedAt, FinalizedAt: r.FinalizedAt,
	}
	for _, e := range r.Errors {
		// Only the message: River's trace of a panic names source paths.
		j.Errors = append(j.Errors, store.JobAttemptError{Attempt: e.Attempt, At: e.At, Error: e.Error})
	}
	return j
}

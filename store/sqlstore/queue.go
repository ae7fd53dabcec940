package sqlstore

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

// jobQueue is River over one of the two drivers. River is generic in the
// driver's transaction type (pgx.Tx, *sql.Tx); this interface hides that
// from the rest of the package.
type jobQueue interface {
	// insert enqueues jobs inside the transaction q belongs to; now is the
	// database's time as this process estimates it (job hints).
	insert(ctx context.Context, q sqldb.Querier, jobs []store.Job, now time.Time) error
	list(ctx context.Context, p *river.JobListParams) (*river.JobListResult, error)
	startWorkers(ctx context.Context, cfg store.WorkerConfig) (store.Workers, error)
}

// riverQueue implements jobQueue for the driver whose transactions are TTx.
type riverQueue[TTx any] struct {
	driver riverdriver.Driver[TTx]
	// inserter is an insert-only client (no queues, no workers): every
	// replica enqueues, whether or not it runs jobs.
	inserter *river.Client[TTx]
	// txOf returns the driver transaction behind the querier a store
	// transaction hands its body.
	txOf func(sqldb.Querier) (TTx, bool)
}

func newRiverQueue[TTx any](d riverdriver.Driver[TTx], txOf func(sqldb.Querier) (TTx, bool)) (*riverQueue[TTx], error) {
	c, err := river.NewClient(d, &river.Config{})
	if err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	return &riverQueue[TTx]{driver: d, inserter: c, txOf: txOf}, nil
}

// jobArgs carries a job's own JSON through River untouched: River derives
// the kind from the args value, and ours is only known at run time.
type jobArgs struct {
	kind string
	raw  json.RawMessage
}

func (a jobArgs) Kind() string { return a.kind }

func (a jobArgs) MarshalJSON() ([]byte, error) {
	if len(a.raw) == 0 {
		return []byte("{}"), nil
	}
	return a.raw, nil
}

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

func (r *riverQueue[TTx]) insert(ctx context.Context, q sqldb.Querier, jobs []store.Job, now time.Time) error {
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
			waits, err := jobWaits(ctx, q, j, now)
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
		if j.Unique && res != nil && res.Job != nil && res.Job.ScheduledAt.After(now.Add(jobHintMargin)) {
			// The job River holds now (this one, or the one already there)
			// waits: later changes may leave it be. Only such hints are
			// kept, so they stay one per delayed job (a table's policies).
			if err := recordJobHint(ctx, q, j, res.Job.ScheduledAt); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *riverQueue[TTx]) list(ctx context.Context, p *river.JobListParams) (*river.JobListResult, error) {
	return r.inserter.JobList(ctx, p)
}

// riverWorker runs one kind's handler.
type riverWorker struct {
	river.WorkerDefaults[jobArgs]
	handle store.JobHandler
}

func (w *riverWorker) Work(ctx context.Context, j *river.Job[jobArgs]) error {
	err := w.handle(ctx, jobInfo(j.JobRow))
	var snooze *store.JobSnooze
	if errors.As(err, &snooze) {
		return river.JobSnooze(snooze.After)
	}
	return err
}

func (r *riverQueue[TTx]) startWorkers(ctx context.Context, cfg store.WorkerConfig) (store.Workers, error) {
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

func jobInfo(r *rivertype.JobRow) *store.JobInfo {
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

// withJobs makes fn also enqueue the jobs store.WithJobs put on ctx, after
// fn's own statements and in its transaction.
func (s *Store) withJobs(ctx context.Context, fn func(q sqldb.Querier) error) func(q sqldb.Querier) error {
	jobs := store.JobsOf(ctx)
	if len(jobs) == 0 {
		return fn
	}
	return func(q sqldb.Querier) error {
		if err := fn(q); err != nil {
			return err
		}
		if s.jobs == nil {
			return errors.New("job queue: this store has none")
		}
		return s.jobs.insert(ctx, q, jobs, s.clock.Now())
	}
}

// ListJobs implements store.Jobs.
func (s *Store) ListJobs(ctx context.Context, f store.JobFilter, page store.Page) ([]*store.JobInfo, string, error) {
	if s.jobs == nil {
		return nil, "", nil
	}
	p := river.NewJobListParams().OrderBy(river.JobListOrderByID, river.SortOrderDesc).First(max(1, min(page.Size, 1000)))
	if page.Token != "" {
		var c river.JobListCursor
		if err := c.UnmarshalText([]byte(page.Token)); err != nil {
			return nil, "", fmt.Errorf("%w: jobs", store.ErrInvalidPageToken)
		}
		p = p.After(&c)
	}
	if f.Kind != "" {
		p = p.Kinds(f.Kind)
	}
	if len(f.States) > 0 {
		states := make([]rivertype.JobState, len(f.States))
		for i, st := range f.States {
			states[i] = rivertype.JobState(st)
		}
		p = p.States(states...)
	}
	// ->> reads a top-level key in both Postgres (jsonb) and SQLite.
	if f.Warehouse != "" {
		p = p.Where("metadata ->> 'warehouse' = @warehouse", river.NamedArgs{"warehouse": f.Warehouse})
	}
	if f.Table != "" {
		p = p.Where("metadata ->> 'table' = @table", river.NamedArgs{"table": f.Table})
	}
	if f.TableUUID != "" {
		p = p.Where("metadata ->> 'table_uuid' = @table_uuid", river.NamedArgs{"table_uuid": f.TableUUID})
	}
	res, err := s.jobs.list(ctx, p)
	if err != nil {
		return nil, "", s.wrap(err, "list jobs")
	}
	out := make([]*store.JobInfo, len(res.Jobs))
	for i, r := range res.Jobs {
		out[i] = jobInfo(r)
	}
	next := ""
	if res.LastCursor != nil && len(res.Jobs) == max(1, min(page.Size, 1000)) {
		b, err := res.LastCursor.MarshalText()
		if err != nil {
			return nil, "", s.wrap(err, "list jobs")
		}
		next = string(b)
	}
	return out, next, nil
}

// EnqueueJobs implements store.Jobs. It is not fenced by an
// Idempotency-Key: no catalog state changes.
func (s *Store) EnqueueJobs(ctx context.Context, jobs ...store.Job) error {
	if s.jobs == nil {
		return errors.New("job queue: this store has none")
	}
	if len(jobs) == 0 {
		return nil
	}
	err := s.inTxUnfenced(ctx, func(q sqldb.Querier) error { return s.jobs.insert(ctx, q, jobs, s.clock.Now()) })
	return s.wrap(err, "enqueue jobs")
}

// JobStats implements store.Jobs.
func (s *Store) JobStats(ctx context.Context) (store.JobStats, error) {
	st := store.JobStats{ByState: map[string]int64{}}
	rows, err := s.db.Query(ctx, `SELECT state, count(*) FROM river_job GROUP BY state`)
	if err != nil {
		return st, s.wrap(err, "count jobs")
	}
	defer rows.Close()
	for rows.Next() {
		var state string
		var n int64
		if err := rows.Scan(&state, &n); err != nil {
			return st, s.wrap(err, "count jobs")
		}
		st.ByState[state] = n
	}
	if err := rows.Err(); err != nil {
		return st, s.wrap(err, "count jobs")
	}
	if s.jobs == nil || st.ByState[string(rivertype.JobStateAvailable)] == 0 {
		return st, nil
	}
	res, err := s.jobs.list(ctx, river.NewJobListParams().States(rivertype.JobStateAvailable).
		OrderBy(river.JobListOrderByScheduledAt, river.SortOrderAsc).First(1))
	if err != nil {
		return st, s.wrap(err, "oldest job")
	}
	if len(res.Jobs) == 1 {
		st.OldestWaiting = max(0, s.Now().Sub(res.Jobs[0].ScheduledAt))
	}
	return st, nil
}

// StartWorkers implements store.Jobs.
func (s *Store) StartWorkers(ctx context.Context, cfg store.WorkerConfig) (store.Workers, error) {
	if s.jobs == nil {
		return nil, errors.New("job workers: this store has no job queue")
	}
	return s.jobs.startWorkers(ctx, cfg)
}

package sqlstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore/jobqueue"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

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
		return s.jobs.Insert(ctx, q, jobs, s.clock.Now())
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
	res, err := s.jobs.List(ctx, p)
	if err != nil {
		return nil, "", s.wrap(err, "list jobs")
	}
	out := make([]*store.JobInfo, len(res.Jobs))
	for i, r := range res.Jobs {
		out[i] = jobqueue.Info(r)
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
	err := s.inTxUnfenced(ctx, func(q sqldb.Querier) error { return s.jobs.Insert(ctx, q, jobs, s.clock.Now()) })
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
	res, err := s.jobs.List(ctx, river.NewJobListParams().States(rivertype.JobStateAvailable).
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
	return s.jobs.StartWorkers(ctx, cfg)
}

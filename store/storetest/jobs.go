package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/store"
)

func purgeJob(table string) store.Job {
	return store.Job{Kind: "purge-table", Args: json.RawMessage(`{"table":"` + table + `"}`), Warehouse: wh, Table: "ns." + table,
		TableUUID: "uuid-" + table, Unique: true}
}

func listJobs(t *testing.T, s store.Store, f store.JobFilter) []*store.JobInfo {
	t.Helper()
	jobs, _, err := s.ListJobs(context.Background(), f, store.Page{Size: 100})
	require.NoError(t, err)
	return jobs
}

// testJobsWithChange: jobs are enqueued in the change's transaction, so a
// change that lands has them and one that is refused has none.
func testJobsWithChange(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	for _, n := range []string{"a", "b", "c", "d"} {
		require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, n, "file:///tmp/wh/ns/"+n)))
	}
	ref := func(n string) store.ObjectRef {
		return store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: n, Kind: store.KindTable}
	}
	require.Empty(t, listJobs(t, s, store.JobFilter{}))

	refused := errors.New("refused")
	_, err := s.ObjectDeleteIf(store.WithJobs(ctx, purgeJob("a")), ref("a"), func(*store.Object) error { return refused })
	require.ErrorIs(t, err, refused)
	require.Empty(t, listJobs(t, s, store.JobFilter{}), "a refused drop enqueues nothing")

	_, err = s.ObjectDelete(store.WithJobs(ctx, purgeJob("a")), ref("a"))
	require.NoError(t, err)
	jobs := listJobs(t, s, store.JobFilter{})
	require.Len(t, jobs, 1)
	j := jobs[0]
	require.Equal(t, "purge-table", j.Kind)
	require.Equal(t, "available", j.State)
	require.Equal(t, wh, j.Warehouse)
	require.Equal(t, "ns.a", j.Table)
	require.Equal(t, "uuid-a", j.TableUUID)
	require.JSONEq(t, `{"table":"a"}`, string(j.Args))
	require.Equal(t, store.DefaultJobAttempts, j.MaxAttempts)
	require.Zero(t, j.Attempt)

	// A swap that loses its compare-and-swap enqueues nothing; one that
	// lands does (a single swap, which otherwise runs without a
	// transaction).
	b, err := s.ObjectGet(ctx, ref("b"))
	require.NoError(t, err)
	lost := swapTo(b, "file:///tmp/wh/ns/b/metadata/00001-x.metadata.json")
	lost.ExpectedMetadataLocation = "file:///tmp/wh/ns/b/metadata/stale.metadata.json"
	require.ErrorIs(t, s.ObjectsSwap(store.WithJobs(ctx, purgeJob("b")), []store.Swap{lost}), store.ErrConflict)
	require.Len(t, listJobs(t, s, store.JobFilter{}), 1)
	require.NoError(t, s.ObjectsSwap(store.WithJobs(ctx, purgeJob("b")), []store.Swap{swapTo(b, "file:///tmp/wh/ns/b/metadata/00001-x.metadata.json")}))
	require.Len(t, listJobs(t, s, store.JobFilter{}), 2)

	// Unique: the same job again, while the first waits, is not added.
	_, err = s.ObjectDelete(store.WithJobs(ctx, purgeJob("b")), ref("b"))
	require.NoError(t, err)
	require.Len(t, listJobs(t, s, store.JobFilter{}), 2)

	// A rename that fails on a taken name enqueues nothing either.
	require.ErrorIs(t, s.ObjectRename(store.WithJobs(ctx, purgeJob("x")), ref("c"), []string{"ns"}, "d"), store.ErrAlreadyExists)
	require.Len(t, listJobs(t, s, store.JobFilter{}), 2)

	// Filters and paging.
	require.Len(t, listJobs(t, s, store.JobFilter{Warehouse: wh}), 2)
	require.Empty(t, listJobs(t, s, store.JobFilter{Warehouse: "other"}))
	require.Len(t, listJobs(t, s, store.JobFilter{Table: "ns.b"}), 1)
	require.Len(t, listJobs(t, s, store.JobFilter{TableUUID: "uuid-a"}), 1)
	require.Empty(t, listJobs(t, s, store.JobFilter{Kind: "other-kind"}))
	require.Len(t, listJobs(t, s, store.JobFilter{States: []string{"available", "running"}}), 2)
	require.Empty(t, listJobs(t, s, store.JobFilter{States: []string{"completed"}}))
	page, next, err := s.ListJobs(ctx, store.JobFilter{}, store.Page{Size: 1})
	require.NoError(t, err)
	require.Len(t, page, 1)
	require.Equal(t, "ns.b", page[0].Table, "newest first")
	require.NotEmpty(t, next)
	page, _, err = s.ListJobs(ctx, store.JobFilter{}, store.Page{Size: 1, Token: next})
	require.NoError(t, err)
	require.Len(t, page, 1)
	require.Equal(t, "ns.a", page[0].Table)
	_, _, err = s.ListJobs(ctx, store.JobFilter{}, store.Page{Size: 1, Token: "not-a-token"})
	require.ErrorIs(t, err, store.ErrInvalidPageToken)

	st, err := s.JobStats(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 2, st.ByState["available"])
	require.GreaterOrEqual(t, st.OldestWaiting, time.Duration(0))
}

// testJobsRun: workers run each job, retry a failing attempt with its error
// recorded, and leave a job of a kind they have no handler for alone.
func testJobsRun(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, "a", "file:///tmp/wh/ns/a")))
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, "b", "file:///tmp/wh/ns/b")))
	_, err := s.ObjectDelete(store.WithJobs(ctx, purgeJob("a")), store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: "a", Kind: store.KindTable})
	require.NoError(t, err)
	other := store.Job{Kind: "not-handled-here", Args: json.RawMessage(`{}`), Warehouse: wh}
	_, err = s.ObjectDelete(store.WithJobs(ctx, other), store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: "b", Kind: store.KindTable})
	require.NoError(t, err)

	var attempts atomic.Int32
	w, err := s.StartWorkers(ctx, store.WorkerConfig{Workers: 2, PollInterval: 50 * time.Millisecond, Handlers: map[string]store.JobHandler{
		"purge-table": func(_ context.Context, j *store.JobInfo) error {
			if attempts.Add(1) == 1 {
				return errors.New("storage said no")
			}
			var args struct{ Table string }
			if err := json.Unmarshal(j.Args, &args); err != nil || args.Table != "a" {
				return errors.New("args changed on the way") // Postgres' jsonb may respace them, no more
			}
			return nil
		},
	}})
	require.NoError(t, err)
	defer func() { require.NoError(t, w.Stop(context.Background())) }()

	// The retry waits for River's backoff (1 s) and its scheduler (5 s).
	var done *store.JobInfo
	for deadline := time.Now().Add(60 * time.Second); done == nil; time.Sleep(100 * time.Millisecond) {
		jobs := listJobs(t, s, store.JobFilter{Kind: "purge-table"})
		require.Len(t, jobs, 1)
		if jobs[0].State == "completed" {
			done = jobs[0]
		}
		require.True(t, time.Now().Before(deadline), "job not completed after 60 s: %+v", jobs[0])
	}
	require.Equal(t, 2, done.Attempt)
	require.EqualValues(t, 2, attempts.Load())
	require.Len(t, done.Errors, 1)
	require.Equal(t, "storage said no", done.Errors[0].Error)
	require.Equal(t, 1, done.Errors[0].Attempt)
	require.NotNil(t, done.FinalizedAt)

	left := listJobs(t, s, store.JobFilter{Kind: "not-handled-here"})
	require.Len(t, left, 1)
	require.Equal(t, "available", left[0].State, "a kind without a handler here waits for a replica that has one")
}

// testJobsSnooze: a handler that snoozes leaves its job scheduled for
// later, the same job (so a Unique enqueue meanwhile adds none).
func testJobsSnooze(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	for _, n := range []string{"a", "b"} {
		require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, n, "file:///tmp/wh/ns/"+n)))
	}
	_, err := s.ObjectDelete(store.WithJobs(ctx, purgeJob("a")), store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: "a", Kind: store.KindTable})
	require.NoError(t, err)
	var runs atomic.Int32
	w, err := s.StartWorkers(ctx, store.WorkerConfig{Workers: 1, PollInterval: 50 * time.Millisecond, Handlers: map[string]store.JobHandler{
		"purge-table": func(context.Context, *store.JobInfo) error { runs.Add(1); return &store.JobSnooze{After: time.Hour} },
	}})
	require.NoError(t, err)
	defer func() { require.NoError(t, w.Stop(context.Background())) }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		jobs := listJobs(t, s, store.JobFilter{Kind: "purge-table"})
		require.Len(t, jobs, 1)
		if jobs[0].State == "scheduled" && runs.Load() == 1 {
			require.True(t, jobs[0].ScheduledAt.After(time.Now().Add(50*time.Minute)), "snoozed for the hour asked")
			require.Empty(t, jobs[0].Errors, "a snooze is not a failure")
			require.Zero(t, jobs[0].Attempt, "nor does it use up an attempt")
			break
		}
		require.True(t, time.Now().Before(deadline), "the job was not snoozed: %+v", jobs[0])
	}
	// The same job again while the first sleeps: Unique keeps one.
	_, err = s.ObjectDelete(store.WithJobs(ctx, purgeJob("a")), store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: "b", Kind: store.KindTable})
	require.NoError(t, err)
	require.Len(t, listJobs(t, s, store.JobFilter{Kind: "purge-table"}), 1)
}

// testJobsUniqueWaiting: a Unique job that waits until later is not
// enqueued again by the changes before its time (its hint), while the
// other jobs of those changes are; one due now, or one that has run, is
// enqueued again by the next change.
func testJobsUniqueWaiting(t *testing.T, s store.Store) {
	ctx := context.Background()
	setup(t, s, []string{"ns"})
	require.NoError(t, s.ObjectCreate(ctx, table([]string{"ns"}, "a", "file:///tmp/wh/ns/a")))
	a, err := s.ObjectGet(ctx, store.ObjectRef{Warehouse: wh, Namespace: []string{"ns"}, Name: "a", Kind: store.KindTable})
	require.NoError(t, err)
	n := 0
	swap := func(jobs ...store.Job) {
		t.Helper()
		n++
		sw := swapTo(a, fmt.Sprintf("file:///tmp/wh/ns/a/metadata/%05d.metadata.json", n))
		require.NoError(t, s.ObjectsSwap(store.WithJobs(ctx, jobs...), []store.Swap{sw}))
		a.MetadataLocation = sw.NewMetadataLocation
	}
	later := store.Job{Kind: "policy", Args: json.RawMessage(`{"table":"a"}`), Unique: true, RunAt: s.Now().Add(time.Hour)}
	swap(later)
	require.Len(t, listJobs(t, s, store.JobFilter{Kind: "policy"}), 1)
	other := store.Job{Kind: "other", Args: json.RawMessage(`{}`)}
	swap(later, other)
	swap(later, other)
	require.Len(t, listJobs(t, s, store.JobFilter{Kind: "policy"}), 1)
	require.Len(t, listJobs(t, s, store.JobFilter{Kind: "other"}), 2, "the jobs after a waiting one are enqueued")

	now := store.Job{Kind: "due", Args: json.RawMessage(`{"table":"a"}`), Unique: true}
	swap(now)
	w, err := s.StartWorkers(ctx, store.WorkerConfig{Workers: 1, PollInterval: 20 * time.Millisecond,
		Handlers: map[string]store.JobHandler{"due": func(context.Context, *store.JobInfo) error { return nil }}})
	require.NoError(t, err)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if jobs := listJobs(t, s, store.JobFilter{Kind: "due", States: []string{"completed"}}); len(jobs) == 1 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the due job did not run")
	}
	require.NoError(t, w.Stop(ctx))
	swap(now)
	require.Len(t, listJobs(t, s, store.JobFilter{Kind: "due"}), 2, "a job that ran is enqueued again")
}

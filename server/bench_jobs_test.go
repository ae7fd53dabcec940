package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/store"
)

// BenchmarkCommitWithJobs measures one client's set-properties commits on
// a table without a maintenance policy (plain: the single-statement swap)
// and on one with scheduled expiry on (jobs: the swap in a transaction
// with River's unique insert, which after the first commit finds the
// table's job and adds none). Compare the two ns/op (issue target ≤ 1.2×).
func BenchmarkCommitWithJobs(b *testing.B) {
	bd := setupTB(b, benchBackend(), nil)
	bd.createNamespaceTB(b, "ns")
	for name, props := range map[string]map[string]string{
		"plain": nil,
		"jobs":  {"lakehold.expire-snapshots.enabled": "true"},
	} {
		r := bd.doTB(b, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": name, "schema": rawJSON(testSchema), "properties": props})
		require.Equal(b, 200, r.status, "%s", r.body)
	}
	for _, name := range []string{"plain", "jobs"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				r := bd.doTB(b, "POST", "/v1/wh/namespaces/ns/tables/"+name, setProps("k", fmt.Sprint(i)))
				if r.status != 200 {
					b.Fatalf("status %d: %s", r.status, r.body)
				}
			}
			// Checked here, not after both: a -bench pattern that skips
			// "jobs" (BenchmarkCommit/..., matching this name too) makes
			// no commit on the policy table, hence no job.
			if name == "jobs" {
				jobs, _, err := bd.store.ListJobs(context.Background(), store.JobFilter{Kind: "expire-snapshots"}, store.Page{Size: 10})
				require.NoError(b, err)
				require.Len(b, jobs, 1, "one job for the table, whatever the commits")
			}
		})
	}
}

// BenchmarkDrainJobs measures how fast two workers drain a queue of 10,000
// jobs whose handler does nothing (the queue's own cost: fetch, run,
// complete), reported as jobs/s.
func BenchmarkDrainJobs(b *testing.B) {
	const n = 10_000
	for b.Loop() {
		b.StopTimer()
		bd := setupTB(b, benchBackend(), nil)
		bd.createNamespaceTB(b, "ns")
		r := bd.doTB(b, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "t", "schema": rawJSON(testSchema)})
		require.Equal(b, 200, r.status)
		ctx := context.Background()
		jobs := make([]store.Job, n)
		for i := range jobs {
			jobs[i] = store.Job{Kind: "bench-noop", Args: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}
		}
		obj, err := bd.store.ObjectGet(ctx, store.ObjectRef{Warehouse: "wh", Namespace: []string{"ns"}, Name: "t", Kind: store.KindTable})
		require.NoError(b, err)
		// The jobs ride on one no-op swap, as a change's jobs do.
		require.NoError(b, bd.store.ObjectsSwap(store.WithJobs(ctx, jobs...), []store.Swap{{ObjectID: obj.ID,
			ExpectedMetadataLocation: obj.MetadataLocation, NewMetadataLocation: obj.MetadataLocation, NewMetadata: obj.Metadata,
			NewFormatVersion: obj.FormatVersion}}))
		var done atomic.Int64
		b.StartTimer()
		start := time.Now()
		w, err := bd.store.StartWorkers(ctx, store.WorkerConfig{Workers: 2, PollInterval: 10 * time.Millisecond,
			Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
			Handlers: map[string]store.JobHandler{"bench-noop": func(context.Context, *store.JobInfo) error { done.Add(1); return nil }}})
		require.NoError(b, err)
		for done.Load() < n {
			time.Sleep(5 * time.Millisecond)
		}
		elapsed := time.Since(start)
		b.StopTimer()
		require.NoError(b, w.Stop(ctx))
		b.ReportMetric(float64(n)/elapsed.Seconds(), "jobs/s")
		b.StartTimer()
	}
}

// BenchmarkCommitWithEvents measures one client's set-properties commits
// with change events off (the single-statement swap) and on (the swap
// and its outbox row in one transaction), and on with a maintenance
// policy's job too. Compare ns/op with off (issue target ≤ 1.2×).
func BenchmarkCommitWithEvents(b *testing.B) {
	for _, c := range []struct {
		name   string
		events bool
		props  map[string]string
	}{
		{"off", false, nil},
		{"events", true, nil},
		{"events+jobs", true, map[string]string{"lakehold.expire-snapshots.enabled": "true"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var bd *bundle
			if c.events {
				bd = setupEventsTB(b, benchBackend())
			} else {
				bd = setupTB(b, benchBackend(), nil)
			}
			bd.createNamespaceTB(b, "ns")
			r := bd.doTB(b, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "t", "schema": rawJSON(testSchema), "properties": c.props})
			require.Equal(b, 200, r.status, "%s", r.body)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				r := bd.doTB(b, "POST", "/v1/wh/namespaces/ns/tables/t", setProps("k", fmt.Sprint(i)))
				if r.status != 200 {
					b.Fatalf("status %d: %s", r.status, r.body)
				}
			}
		})
	}
}

// BenchmarkDrainExpiryJobs measures two workers draining one real
// expire-snapshots job per table over LAKEHOLD_BENCH_TABLES tables
// (default 10,000) whose policy is on and that have nothing to expire:
// each job loads its table, checks the policy and the snapshots and
// completes. Reported as jobs/s; the tables are made before the timer.
func BenchmarkDrainExpiryJobs(b *testing.B) {
	n := 10_000
	if v, err := strconv.Atoi(os.Getenv("LAKEHOLD_BENCH_TABLES")); err == nil && v > 0 {
		n = v
	}
	for b.Loop() {
		b.StopTimer()
		bd := setupTB(b, benchBackend(), map[string]string{"lakehold.expire-snapshots.enabled": "true"})
		bd.createNamespaceTB(b, "ns")
		jobs := make([]store.Job, n)
		for i := range jobs {
			name := fmt.Sprintf("t%05d", i)
			r := bd.doTB(b, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": name, "schema": rawJSON(testSchema)})
			require.Equal(b, 200, r.status, "%s", r.body)
			var res struct {
				Metadata struct {
					UUID string `json:"table-uuid"`
				} `json:"metadata"`
			}
			require.NoError(b, json.Unmarshal(r.body, &res))
			args, _ := json.Marshal(map[string]any{"warehouse": "wh", "namespace": []string{"ns"}, "name": name, "table-uuid": res.Metadata.UUID})
			jobs[i] = store.Job{Kind: "expire-snapshots", Args: args, Warehouse: "wh", Table: "ns." + name, TableUUID: res.Metadata.UUID, Unique: true}
		}
		ctx := context.Background()
		require.NoError(b, bd.store.EnqueueJobs(ctx, jobs...))
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		b.StartTimer()
		start := time.Now()
		w, err := bd.store.StartWorkers(ctx, store.WorkerConfig{Workers: 2, PollInterval: 10 * time.Millisecond, Logger: quiet,
			Handlers: bd.svc.JobHandlers()})
		require.NoError(b, err)
		for {
			st, err := bd.store.JobStats(ctx)
			require.NoError(b, err)
			if st.ByState["completed"] == int64(n) {
				break
			}
			require.Zero(b, st.ByState["discarded"])
			time.Sleep(20 * time.Millisecond)
		}
		elapsed := time.Since(start)
		b.StopTimer()
		require.NoError(b, w.Stop(ctx))
		b.ReportMetric(float64(n)/elapsed.Seconds(), "jobs/s")
		b.StartTimer()
	}
}

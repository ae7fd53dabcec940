package sqlstore

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/store"
)

// TestJobRescuedAfterCrash: a job left "running" by a replica that died
// (kill -9: no error recorded, no completion) runs again on another once
// its lease (RescueAfter) has passed, on both databases.
func TestJobRescuedAfterCrash(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			var s *Store
			var err error
			stale := `datetime('now', 'subsec', '-1 hour')`
			if backend == "sqlite" {
				s, err = OpenSQLite(ctx, filepath.Join(t.TempDir(), "catalog.db"))
			} else {
				s, err = OpenPostgres(ctx, pgtest.NewDatabase(t), true)
				stale = `now() - interval '1 hour'`
			}
			require.NoError(t, err)
			t.Cleanup(s.Close)
			require.NoError(t, s.WarehouseCreate(ctx, &store.Warehouse{Name: "wh", Location: "file:///tmp/wh"}))
			_, err = s.NamespaceCreate(ctx, "wh", []string{"ns"}, nil)
			require.NoError(t, err)
			require.NoError(t, s.ObjectCreate(ctx, &store.Object{Warehouse: "wh", Namespace: []string{"ns"}, Name: "t", Kind: store.KindTable,
				Location: "file:///tmp/wh/ns/t", MetadataLocation: "file:///tmp/wh/ns/t/metadata/1.metadata.json", Metadata: []byte(`{}`), FormatVersion: 2}))
			job := store.Job{Kind: "purge-table", Args: json.RawMessage(`{}`), Warehouse: "wh", Table: "ns.t"}
			_, err = s.ObjectDelete(store.WithJobs(ctx, job), store.ObjectRef{Warehouse: "wh", Namespace: []string{"ns"}, Name: "t", Kind: store.KindTable})
			require.NoError(t, err)
			// What the dead replica left: the job claimed, attempt 1 begun an
			// hour ago, never finished.
			n, err := s.db.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = `+stale+` WHERE kind = 'purge-table'`)
			require.NoError(t, err)
			require.EqualValues(t, 1, n)

			var ran atomic.Int32
			w, err := s.StartWorkers(ctx, store.WorkerConfig{Workers: 1, JobTimeout: time.Second, RescueAfter: 2 * time.Second,
				PollInterval: 50 * time.Millisecond, Handlers: map[string]store.JobHandler{
					"purge-table": func(context.Context, *store.JobInfo) error { ran.Add(1); return nil },
				}})
			require.NoError(t, err)
			defer func() { require.NoError(t, w.Stop(context.Background())) }()
			var last *store.JobInfo
			for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				jobs, _, err := s.ListJobs(ctx, store.JobFilter{Kind: "purge-table"}, store.Page{Size: 1})
				require.NoError(t, err)
				require.Len(t, jobs, 1)
				last = jobs[0]
				if last.State == "completed" {
					break
				}
				require.True(t, time.Now().Before(deadline), "the stuck job was not rescued: %+v", last)
			}
			require.EqualValues(t, 1, ran.Load(), "the rescued job ran once here")
			require.Equal(t, 2, last.Attempt, "the crashed attempt counts")
			require.NotEmpty(t, last.Errors, "the rescue is recorded as the crashed attempt's error")
		})
	}
}

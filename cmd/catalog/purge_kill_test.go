package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
)

// TestPurgeJobSurvivesKill9: a `catalog worker` killed with SIGKILL in the
// middle of a purge job leaves the files that lead to the rest (manifests,
// manifest lists, metadata: a tier starts only when the one before is
// gone), and the job, rescued once its lease passed, finishes the purge on
// another worker. On both databases: the worker's lease and the rescue
// are the queue's, kept in each.
func TestPurgeJobSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 20,000-file table")
	}
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(dir, "catalog.db"))
		require.NoError(t, err)
		defer st.Close()
		testPurgeKill9(t, st, dir, "--data-dir", dir)
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		st, err := sqlstore.OpenPostgres(context.Background(), url, true)
		require.NoError(t, err)
		defer st.Close()
		key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
		testPurgeKill9(t, st, t.TempDir(), "--database-url", url, "--secret-key", key)
	})
}

// testPurgeKill9 runs the scenario on st, whose `catalog worker` takes
// the arguments db.
func testPurgeKill9(t *testing.T, st store.Store, dir string, db ...string) {
	const n = 20_000
	tdir := maintTableIn(t, st, dir, n)
	ctx := identity.With(context.Background(), identity.Principal{Source: identity.SourceLocal, Subject: "test"})
	svc := service.New(st, storage.NewProvider(), service.Options{})
	meta, err := filepath.Glob(filepath.Join(tdir, "metadata", "*.metadata.json"))
	require.NoError(t, err)
	require.NotEmpty(t, meta)
	roots, err := filepath.Glob(filepath.Join(tdir, "metadata", "snap-*"))
	require.NoError(t, err)
	require.NoError(t, svc.Tables().DropTable(ctx, "wh", service.Ident{Namespace: []string{"ns"}, Name: "t"}, true))
	require.Equal(t, n, countOld(t, tdir), "the drop deleted nothing itself")

	cmd := exec.Command(os.Args[0], append([]string{"worker", "--listen", "127.0.0.1:0", "--workers", "1"}, db...)...)
	cmd.Env = append(os.Environ(), "LAKEHOLD_TEST_RUN_MAIN=1")
	require.NoError(t, cmd.Start())
	sample := make([]string, 0, 64)
	for i := 0; i < n; i += n / 64 {
		sample = append(sample, filepath.Join(tdir, "data", fmt.Sprintf("old-%06d.parquet", i)))
	}
	begun := func() bool {
		for _, f := range sample {
			if _, err := os.Stat(f); os.IsNotExist(err) {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(2 * time.Minute); !begun(); time.Sleep(time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the worker never began the purge")
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	left := countOld(t, tdir)
	t.Logf("killed with %d of %d data files left", left, n)
	if left == 0 {
		t.Fatalf("the kill missed the purge (no data file left): the test proves nothing this run")
	}
	for _, f := range append(meta, roots...) {
		require.FileExists(t, f, "a file of a later tier went before the data files")
	}

	w, err := st.StartWorkers(ctx, store.WorkerConfig{Workers: 1, Handlers: svc.JobHandlers(), JobTimeout: time.Second,
		RescueAfter: 2 * time.Second, PollInterval: 50 * time.Millisecond})
	require.NoError(t, err)
	defer func() { require.NoError(t, w.Stop(context.Background())) }()
	var job *store.JobInfo
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		jobs, _, err := st.ListJobs(ctx, store.JobFilter{Kind: service.JobPurgeTable}, store.Page{Size: 1})
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		if job = jobs[0]; job.State == "completed" {
			break
		}
		require.True(t, time.Now().Before(deadline), "the purge was not finished: %+v", job)
	}
	require.GreaterOrEqual(t, job.Attempt, 2, "the killed attempt counts")
	require.Zero(t, countOld(t, tdir))
	for _, f := range append(meta, roots...) {
		require.NoFileExists(t, f)
	}
	require.NoFileExists(t, filepath.Join(tdir, "data", "keep.parquet"))
	require.DirExists(t, filepath.Join(tdir, "data"), "purge never removes a directory")
}

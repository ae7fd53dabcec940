package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
	"github.com/lakehold/catalog/v4manifest"
)

// TestMain lets a test run this binary as the catalog command itself
// (LAKEHOLD_TEST_RUN_MAIN=1), so a real process can be killed.
func TestMain(m *testing.M) {
	if os.Getenv("LAKEHOLD_TEST_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// maintTable makes a v4 table in the embedded database under dir whose
// first snapshot added n data files (real, tiny files; stats given so no
// footer is read) that the second removed, and whose third added keep.
// It returns the table directory.
func maintTable(t *testing.T, dir string, n int) string {
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(dir, "catalog.db"))
	require.NoError(t, err)
	defer st.Close()
	return maintTableIn(t, st, dir, n)
}

// maintTableIn is maintTable in the catalog st.
func maintTableIn(t *testing.T, st store.Store, dir string, n int) string {
	ctx := identity.With(context.Background(), identity.Principal{Source: identity.SourceLocal, Subject: "test"})
	svc := service.New(st, storage.NewProvider(), service.Options{})
	_, err := svc.CreateWarehouse(ctx, "wh", "file://"+filepath.Join(dir, "wh"), nil)
	require.NoError(t, err)
	_, err = svc.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
	require.NoError(t, err)
	res, err := svc.Tables().CreateTable(ctx, "wh", []string{"ns"}, service.CreateTableInput{Name: "t", Properties: map[string]string{"format-version": "4"},
		Schema: []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"x","type":"long","required":false}]}`)})
	require.NoError(t, err)
	var meta struct {
		Location string `json:"location"`
	}
	require.NoError(t, json.Unmarshal(res.Metadata, &meta))
	tdir := strings.TrimPrefix(meta.Location, "file://")
	require.NoError(t, os.MkdirAll(filepath.Join(tdir, "data"), 0o755))
	id := service.Ident{Namespace: []string{"ns"}, Name: "t"}
	file := func(name string) service.DataFileInput {
		require.NoError(t, os.WriteFile(filepath.Join(tdir, "data", name), []byte("x"), 0o644))
		return service.DataFileInput{Location: "data/" + name, FileFormat: "parquet", RecordCount: 1, FileSizeInBytes: 1,
			Stats: map[int]*v4manifest.FieldStats{1: {LowerBound: int64(1), UpperBound: int64(1)}}}
	}
	adds := make([]service.DataFileInput, n)
	removes := make([]string, n)
	for i := range adds {
		adds[i] = file(fmt.Sprintf("old-%06d.parquet", i))
		removes[i] = adds[i].Location
	}
	_, err = svc.CommitFiles(ctx, "wh", service.FilesCommit{Ident: id, AddDataFiles: adds})
	require.NoError(t, err)
	_, err = svc.CommitFiles(ctx, "wh", service.FilesCommit{Ident: id, RemoveFiles: removes})
	require.NoError(t, err)
	_, err = svc.CommitFiles(ctx, "wh", service.FilesCommit{Ident: id, AddDataFiles: []service.DataFileInput{file("keep.parquet")}})
	require.NoError(t, err)
	return tdir
}

func countOld(t *testing.T, tdir string) int {
	m, err := filepath.Glob(filepath.Join(tdir, "data", "old-*.parquet"))
	require.NoError(t, err)
	return len(m)
}

// TestMaintainSurvivesKill9: `catalog maintain` killed with SIGKILL in the
// middle of its deletes loses no file the table still references, and the
// next run deletes the rest.
func TestMaintainSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 20,000-file table")
	}
	const n = 20_000
	dir := t.TempDir()
	tdir := maintTable(t, dir, n)
	args := []string{"maintain", "ns.t", "--warehouse", "wh", "--data-dir", dir, "--expire-older-than", "0s", "--retain-last", "1"}

	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LAKEHOLD_TEST_RUN_MAIN=1")
	require.NoError(t, cmd.Start())
	first := filepath.Join(tdir, "data", "old-000000.parquet")
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(first); os.IsNotExist(err) {
			break // deletes have begun
		}
		time.Sleep(200 * time.Microsecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	left := countOld(t, tdir)
	t.Logf("killed with %d of %d unreferenced files left", left, n)
	if left == 0 || left == n {
		t.Fatalf("the kill missed the clean-up window (%d of %d left): the test proves nothing this run", left, n)
	}
	_, err := os.Stat(filepath.Join(tdir, "data", "keep.parquet"))
	require.NoError(t, err, "a referenced file was deleted")

	var out, errb bytes.Buffer
	require.NoError(t, run(args, &out, &errb), errb.String())
	var rep struct {
		Expired []int64 `json:"expired-snapshot-ids"`
		Resumed int     `json:"resumed-files"`
		Failed  int     `json:"failed-files"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	require.Empty(t, rep.Expired, "the killed run's commit had landed")
	require.Zero(t, rep.Failed)
	require.GreaterOrEqual(t, rep.Resumed, left)
	require.Zero(t, countOld(t, tdir))
	_, err = os.Stat(filepath.Join(tdir, "data", "keep.parquet"))
	require.NoError(t, err, "a referenced file was deleted")
}

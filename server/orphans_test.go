package server_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"
)

type orphanReport struct {
	Orphans []string `json:"orphan-files"`
	Listed  int      `json:"listed-files"`
	Deleted int      `json:"deleted-files"`
	Failed  int      `json:"failed-files"`
	DryRun  bool     `json:"dry-run"`
}

// TestRemoveOrphanFiles: with every file of the table dated four days
// back, only the unreferenced ones are orphans; a young unreferenced file,
// a symbolic link to a file outside and files outside the table are left;
// the default is a dry run; the real run deletes exactly the orphans and
// the table reads as before.
func TestRemoveOrphanFiles(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		tbl := goTable(t, b, "db", "t", []int64{1, 2}, catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
		tbl, err := tbl.AppendTable(ctx, arrowRows(t, tbl.Schema(), 3), 100, nil)
		require.NoError(t, err)
		dir := strings.TrimPrefix(tbl.Location(), "file://")
		outside := t.TempDir()
		write := func(path string) string {
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, []byte("x"), 0o644))
			return path
		}
		orphanData := write(filepath.Join(dir, "data", "aborted-writer.parquet"))
		orphanMeta := write(filepath.Join(dir, "metadata", "killed-job-m0.avro"))
		secret := write(filepath.Join(outside, "secret.parquet"))
		require.NoError(t, os.Symlink(secret, filepath.Join(dir, "data", "link.parquet")))
		neighbour := write(filepath.Join(strings.TrimPrefix(b.warehouse, "file://"), "db", "not-this-table.parquet"))
		old := time.Now().Add(-96 * time.Hour)
		var tableFiles int
		require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() {
				tableFiles++
				return os.Chtimes(p, old, old)
			}
			return err
		}))
		for _, f := range []string{secret, neighbour} {
			require.NoError(t, os.Chtimes(f, old, old))
		}
		young := write(filepath.Join(dir, "data", "being-written.parquet"))
		path := "/management/v1/warehouses/wh/namespaces/db/tables/t/remove-orphan-files"

		r := b.do(t, "POST", path, map[string]any{})
		require.Equal(t, 200, r.status, "%s", r.body)
		var dry orphanReport
		require.NoError(t, json.Unmarshal(r.body, &dry))
		require.True(t, dry.DryRun, "a dry run unless asked otherwise")
		require.ElementsMatch(t, []string{"data/aborted-writer.parquet", "metadata/killed-job-m0.avro"}, dry.Orphans)
		require.Equal(t, tableFiles+1, dry.Listed, "every regular file under the table, the young one too, no link")
		require.Zero(t, dry.Deleted)
		require.FileExists(t, orphanData)

		r = b.do(t, "POST", path, map[string]any{"dry-run": false})
		require.Equal(t, 200, r.status, "%s", r.body)
		var done orphanReport
		require.NoError(t, json.Unmarshal(r.body, &done))
		require.Equal(t, 2, done.Deleted)
		require.Zero(t, done.Failed)
		for _, f := range []string{orphanData, orphanMeta} {
			require.NoFileExists(t, f)
		}
		for _, f := range []string{young, secret, neighbour, filepath.Join(dir, "data", "link.parquet")} {
			_, err := os.Lstat(f)
			require.NoError(t, err, "%s must stay", f)
		}
		loaded, err := restCatalog(t, b).LoadTable(ctx, []string{"db", "t"})
		require.NoError(t, err)
		out, err := loaded.Scan().ToArrowTable(ctx)
		require.NoError(t, err)
		defer out.Release()
		require.EqualValues(t, 3, out.NumRows(), "every referenced file is still there")

		r = b.do(t, "POST", path, map[string]any{"older-than": time.Now().UTC().Format(time.RFC3339)})
		require.Equal(t, 400, r.status, "%s", r.body)
		require.Equal(t, 404, b.do(t, "POST", "/management/v1/warehouses/wh/namespaces/db/tables/nope/remove-orphan-files", map[string]any{}).status)
	})
}

// TestRemoveOrphanFilesRefusesOutsideReferences: a table whose metadata
// names a file outside its location (stored before the policy refused
// such commits) is refused, deleting nothing: a listing cannot
// tell its live files from orphans then (400: retrying cannot help).
func TestRemoveOrphanFilesRefusesOutsideReferences(t *testing.T) {
	b := setup(t, "sqlite")
	b.createNamespace(t, "ns")
	r := b.createTable(t, "ns", "t", nil)
	require.Equal(t, 200, r.status)
	dir := strings.TrimPrefix(tableLocation(t, r), "file://")
	orphan := filepath.Join(dir, "data", "old.parquet")
	require.NoError(t, os.MkdirAll(filepath.Dir(orphan), 0o755))
	require.NoError(t, os.WriteFile(orphan, []byte("x"), 0o644))
	old := time.Now().Add(-96 * time.Hour)
	require.NoError(t, os.Chtimes(orphan, old, old))
	elsewhere := "file://" + filepath.Join(t.TempDir(), "stats.puffin")
	injectMetadata(t, b, "ns", "t", func(m map[string]any) {
		m["statistics"] = []any{map[string]any{"snapshot-id": 1, "statistics-path": elsewhere, "file-size-in-bytes": 1,
			"file-footer-size-in-bytes": 1, "blob-metadata": []any{}}}
	})
	r = b.do(t, "POST", "/management/v1/warehouses/wh/namespaces/ns/tables/t/remove-orphan-files", map[string]any{"dry-run": false})
	require.Equal(t, 400, r.status, "%s", r.body)
	typ, msg := r.errorOf(t)
	require.Equal(t, "BadRequestException", typ)
	require.Contains(t, msg, "outside its location")
	require.NotContains(t, msg, "stats.puffin")
	require.FileExists(t, orphan)
}

// TestScheduledOrphanRemoval: with lakehold.remove-orphan-files.enabled a
// commit enqueues the table's remove-orphan-files job, which deletes an
// orphan older than the table's window, keeps a younger one, and then
// sleeps to run again (state scheduled, no error).
func TestScheduledOrphanRemoval(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		tbl := goTable(t, b, "db", "t", []int64{1}, catalog.WithProperties(iceberg.Properties{"format-version": "2",
			"lakehold.remove-orphan-files.enabled": "true", "lakehold.remove-orphan-files.delay-ms": "0",
			"lakehold.remove-orphan-files.older-than-ms": "7200000"}))
		dir := strings.TrimPrefix(tbl.Location(), "file://")
		orphan := filepath.Join(dir, "data", "orphan.parquet")
		fresh := filepath.Join(dir, "data", "fresh.parquet")
		for _, f := range []string{orphan, fresh} {
			require.NoError(t, os.WriteFile(f, []byte("x"), 0o644))
		}
		old := time.Now().Add(-3 * time.Hour)
		require.NoError(t, os.Chtimes(orphan, old, old))
		_, err := tbl.AppendTable(ctx, arrowRows(t, tbl.Schema(), 2), 100, nil)
		require.NoError(t, err)
		require.Len(t, b.jobs(t, "?kind=remove-orphan-files").Jobs, 1)

		b.startJobs(t)
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			jobs := b.jobs(t, "?kind=remove-orphan-files").Jobs
			require.Len(t, jobs, 1)
			if jobs[0].State == "scheduled" && jobs[0].AttemptedAt != nil {
				require.Empty(t, jobs[0].Errors)
				break
			}
			require.True(t, time.Now().Before(deadline), "the job did not run and sleep: %+v", jobs[0])
		}
		require.NoFileExists(t, orphan)
		require.FileExists(t, fresh, "younger than the table's window")
		loaded, err := restCatalog(t, b).LoadTable(ctx, []string{"db", "t"})
		require.NoError(t, err)
		out, err := loaded.Scan().ToArrowTable(ctx)
		require.NoError(t, err)
		defer out.Release()
		require.EqualValues(t, 2, out.NumRows())
	})
}

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

// TestSoftDeletedLocationReserved: in a soft-delete warehouse a dropped
// table keeps its location until its retention ends (when a drop with
// purge deletes the files under it). A new table at that location, inside
// it or around it, a move into it and a registration of the dropped
// table's own metadata under another name are all refused, so no live
// table can share files the purge will delete; the table's undrop still
// works, with its data.
func TestSoftDeletedLocationReserved(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) { testSoftDeletedLocationReserved(t, backend) })
	}
}

func testSoftDeletedLocationReserved(t *testing.T, backend string) {
	ctx := context.Background()
	b := setupTB(t, backend, map[string]string{"lakehold.deletion-profile": "soft", "lakehold.deletion-retention-ms": "3600000"})
	loc := b.warehouse + "/ns/shared"
	tbl := goTable(t, b, "ns", "t", []int64{1, 2, 3}, catalog.WithLocation(loc))
	meta := tbl.MetadataLocation()
	data := mustTasks(t, tbl)
	require.NotEmpty(t, data)
	require.Equal(t, 204, b.do(t, "DELETE", "/v1/wh/namespaces/ns/tables/t?purgeRequested=true", nil).status)
	p := b.deleted(t)
	require.Len(t, p.Deleted, 1)
	id := p.Deleted[0].ID

	for name, l := range map[string]string{"equal": loc, "inside": loc + "/data", "around": b.warehouse + "/ns"} {
		r := b.createTable(t, "ns", "new_"+name, map[string]any{"location": l})
		require.Equal(t, 400, r.status, "%s: %s", name, r.body)
		typ, msg := r.errorOf(t)
		require.Equal(t, "BadRequestException", typ, name)
		require.Contains(t, msg, "Location overlaps another table or view", name)
		require.NotContains(t, msg, loc, "the message names no location")
	}
	// The old name is free, the location is not.
	r := b.createTable(t, "ns", "t", map[string]any{"location": loc})
	require.Equal(t, 400, r.status, "%s", r.body)

	r = b.do(t, "POST", "/v1/wh/namespaces/ns/register", map[string]any{"name": "t_copy", "metadata-location": meta})
	require.Equal(t, 409, r.status, "%s", r.body)
	typ, msg := r.errorOf(t)
	require.Equal(t, "AlreadyExistsException", typ)
	require.Contains(t, msg, "its location is already used by another table or view")
	require.Equal(t, 404, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t_copy", nil).status)

	r = b.createTable(t, "ns", "u", nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables/u", map[string]any{
		"updates": []any{map[string]any{"action": "set-location", "location": loc + "/u"}}})
	require.Equal(t, 400, r.status, "set-location into it: %s", r.body)

	// Nothing took the location: the undrop brings the table back whole,
	// under its old name.
	r = b.do(t, "POST", "/management/v1/warehouses/wh/deleted/"+id+"/undrop", map[string]any{})
	require.Equal(t, 200, r.status, "%s", r.body)
	require.Empty(t, b.deleted(t).Deleted)
	loaded, err := restCatalog(t, b).LoadTable(ctx, []string{"ns", "t"})
	require.NoError(t, err)
	require.Equal(t, meta, loaded.MetadataLocation())
	rows, err := loaded.Scan().ToArrowTable(ctx)
	require.NoError(t, err)
	defer rows.Release()
	require.EqualValues(t, 3, rows.NumRows())
	for _, f := range data {
		require.FileExists(t, strings.TrimPrefix(f, "file://"))
	}
	// Live again, it still holds its location.
	r = b.do(t, "POST", "/v1/wh/namespaces/ns/register", map[string]any{"name": "t_copy", "metadata-location": meta})
	require.Equal(t, 409, r.status, "%s", r.body)
}

// TestRemoveOrphanFilesGCDisabled: a table with gc.enabled=false (its
// files may belong to other tables too) gets a dry run of orphan removal
// only: a real run is refused with 400 ValidationException, as Java's
// DeleteOrphanFiles refuses, and the scheduled job runs without error and
// deletes nothing.
func TestRemoveOrphanFilesGCDisabled(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		tbl := goTable(t, b, "db", "t", []int64{1}, catalog.WithProperties(iceberg.Properties{"format-version": "2", "gc.enabled": "false",
			"lakehold.remove-orphan-files.enabled": "true", "lakehold.remove-orphan-files.delay-ms": "0",
			"lakehold.remove-orphan-files.older-than-ms": "7200000"}))
		orphan := filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), "data", "maybe-another-tables.parquet")
		require.NoError(t, os.WriteFile(orphan, []byte("x"), 0o644))
		old := time.Now().Add(-96 * time.Hour)
		require.NoError(t, os.Chtimes(orphan, old, old))
		path := "/management/v1/warehouses/wh/namespaces/db/tables/t/remove-orphan-files"

		r := b.do(t, "POST", path, map[string]any{"dry-run": false})
		require.Equal(t, 400, r.status, "%s", r.body)
		typ, msg := r.errorOf(t)
		require.Equal(t, "ValidationException", typ)
		require.Contains(t, msg, "Cannot remove orphan files: GC is disabled (deleting files may corrupt other tables)")
		require.FileExists(t, orphan)

		r = b.do(t, "POST", path, map[string]any{"dry-run": true})
		require.Equal(t, 200, r.status, "a dry run deletes nothing: %s", r.body)
		var dry orphanReport
		require.NoError(t, json.Unmarshal(r.body, &dry))
		require.Equal(t, []string{"data/maybe-another-tables.parquet"}, dry.Orphans)

		// A commit enqueues the scheduled job; it runs, errs not, and
		// completes: there is nothing it may do for this table.
		_, err := tbl.AppendTable(ctx, arrowRows(t, tbl.Schema(), 2), 100, nil)
		require.NoError(t, err)
		require.Len(t, b.jobs(t, "?kind=remove-orphan-files").Jobs, 1)
		b.startJobs(t)
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			jobs := b.jobs(t, "?kind=remove-orphan-files").Jobs
			require.Len(t, jobs, 1)
			if jobs[0].State == "completed" {
				require.Empty(t, jobs[0].Errors)
				break
			}
			require.True(t, time.Now().Before(deadline), "the job did not complete: %+v", jobs[0])
		}
		require.FileExists(t, orphan, "the scheduled job deleted nothing")
	})
}

package server_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"
)

// TestGCDisabledKeepsDataFiles: a table with gc.enabled=false (its files
// may be shared with other tables) gets no snapshot expiry, on demand
// (400, as Java refuses) or scheduled (the job does nothing), and a purge
// deletes its metadata but keeps its data files, as Java's dropTableData.
func TestGCDisabledKeepsDataFiles(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		tbl := goTable(t, b, "db", "shared", []int64{1, 2}, catalog.WithProperties(iceberg.Properties{
			"format-version": "2", "gc.enabled": "false", "lakehold.expire-snapshots.enabled": "true",
			"lakehold.expire-snapshots.delay-ms": "0", "history.expire.max-snapshot-age-ms": "1", "history.expire.min-snapshots-to-keep": "1"}))
		tbl, err := tbl.AppendTable(ctx, arrowRows(t, tbl.Schema(), 3), 100, nil)
		require.NoError(t, err)
		data := mustTasks(t, tbl)
		require.NotEmpty(t, data)

		r := b.do(t, "POST", "/management/v1/warehouses/wh/namespaces/db/tables/shared/maintain", map[string]any{})
		require.Equal(t, 400, r.status, "%s", r.body)
		typ, msg := r.errorOf(t)
		require.Equal(t, "ValidationException", typ)
		require.Contains(t, msg, "GC is disabled")
		dry := b.do(t, "POST", "/management/v1/warehouses/wh/namespaces/db/tables/shared/maintain", map[string]any{"dry-run": true})
		require.Equal(t, 200, dry.status, "a dry run deletes nothing: %s", dry.body)

		b.drainJobs(t)
		loaded := b.do(t, "GET", "/v1/wh/namespaces/db/tables/shared", nil).json(t)
		require.Len(t, loaded["metadata"].(map[string]any)["snapshots"].([]any), 2, "the scheduled expiry left the table alone")
		metaLoc := strings.TrimPrefix(loaded["metadata-location"].(string), "file://")

		require.Equal(t, 204, b.do(t, "DELETE", "/v1/wh/namespaces/db/tables/shared?purgeRequested=true", nil).status)
		b.drainJobs(t)
		_, err = os.Stat(metaLoc)
		require.True(t, os.IsNotExist(err), "the purge deleted the metadata")
		for _, f := range data {
			require.FileExists(t, strings.TrimPrefix(f, "file://"), "a data file of a gc-disabled table is never deleted")
		}
	})
}

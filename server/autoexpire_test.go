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

// TestScheduledExpiry: a table whose lakehold.expire-snapshots.enabled
// policy is on gets one expire-snapshots job from its commits (Unique: the
// second commit adds none), which expires by the table's history.expire.*
// properties and deletes the files only expired snapshots referenced; a
// table without the policy gets none.
func TestScheduledExpiry(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		tbl := goTable(t, b, "db", "auto", []int64{1, 2}, catalog.WithProperties(iceberg.Properties{
			"format-version": "2", "lakehold.expire-snapshots.enabled": "true", "lakehold.expire-snapshots.delay-ms": "0",
			"history.expire.max-snapshot-age-ms": "1", "history.expire.min-snapshots-to-keep": "1"}))
		plain := goTable(t, b, "db", "plain", []int64{1}, catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
		_, err := plain.AppendTable(ctx, arrowRows(t, plain.Schema(), 2), 100, nil)
		require.NoError(t, err)
		require.Empty(t, b.jobs(t, "?warehouse=wh&table=db.plain").Jobs, "no policy, no job")

		old := mustTasks(t, tbl)
		tbl, err = tbl.OverwriteTable(ctx, arrowRows(t, tbl.Schema(), 3, 4), 100, nil)
		require.NoError(t, err)
		tbl, err = tbl.AppendTable(ctx, arrowRows(t, tbl.Schema(), 5), 100, nil)
		require.NoError(t, err)
		require.Len(t, tbl.Metadata().Snapshots(), 3)
		jobs := b.jobs(t, "?warehouse=wh&table=db.auto").Jobs
		require.Len(t, jobs, 1, "every commit asks for the table's one expiry job")
		require.Equal(t, "expire-snapshots", jobs[0].Kind)

		b.drainJobs(t)
		r := b.do(t, "GET", "/v1/wh/namespaces/db/tables/auto", nil)
		snaps, _ := r.json(t)["metadata"].(map[string]any)["snapshots"].([]any)
		require.Len(t, snaps, 1, "the job expired the two older snapshots")
		done := b.jobs(t, "?warehouse=wh&table=db.auto&state=completed").Jobs
		require.Len(t, done, 1)
		for _, f := range old {
			_, err := os.Stat(strings.TrimPrefix(f, "file://"))
			require.True(t, os.IsNotExist(err), "a file only expired snapshots referenced survived: %s", f)
		}
		loaded, err := restCatalog(t, b).LoadTable(ctx, []string{"db", "auto"})
		require.NoError(t, err)
		out, err := loaded.Scan().ToArrowTable(ctx)
		require.NoError(t, err)
		defer out.Release()
		require.EqualValues(t, 3, out.NumRows(), "the current snapshot reads as before")
	})
}

package server_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
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

// TestScheduledExpiryWarehouseDefaults: the expiry policy and Iceberg's
// history.expire.* properties set on the warehouse apply to a table that
// sets none of them; a table's own value wins.
func TestScheduledExpiryWarehouseDefaults(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			b := setupTB(t, backend, map[string]string{"lakehold.expire-snapshots.enabled": "true", "lakehold.expire-snapshots.delay-ms": "0",
				"history.expire.max-snapshot-age-ms": "1", "history.expire.min-snapshots-to-keep": "1"})
			inherit := goTable(t, b, "db", "inherit", []int64{1}, catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
			own := goTable(t, b, "db", "own", []int64{1}, catalog.WithProperties(iceberg.Properties{"format-version": "2",
				"history.expire.min-snapshots-to-keep": "3"}))
			for _, tbl := range []**table.Table{&inherit, &own} {
				for i := range 2 {
					next, err := (*tbl).AppendTable(ctx, arrowRows(t, (*tbl).Schema(), int64(10+i)), 100, nil)
					require.NoError(t, err)
					*tbl = next
				}
			}
			count := func(name string) int {
				r := b.do(t, "GET", "/v1/wh/namespaces/db/tables/"+name, nil)
				return len(r.json(t)["metadata"].(map[string]any)["snapshots"].([]any))
			}
			// The job of a table with snapshots left runs again later
			// (snoozed): wait until each has run once.
			b.startJobs(t)
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				ran := 0
				for _, j := range b.jobs(t, "?kind=expire-snapshots").Jobs {
					if j.AttemptedAt != nil && j.State != "running" && j.State != "available" {
						ran++
					}
				}
				if ran == 2 {
					break
				}
				require.True(t, time.Now().Before(deadline), "the expiry jobs did not run")
			}
			require.Equal(t, 1, count("inherit"), "the warehouse's history.expire.* applied")
			require.Equal(t, 3, count("own"), "the table's min-snapshots-to-keep wins")
		})
	}
}

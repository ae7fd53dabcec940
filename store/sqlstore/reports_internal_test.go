package sqlstore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPruneReportsSweepsOrphans: a report whose table exists neither live
// nor soft-deleted (one that raced its table's removal) goes at the next
// prune whatever its age (the conformance suite shows a live or
// soft-deleted table keeps its own).
func TestPruneReportsSweepsOrphans(t *testing.T) {
	ctx := context.Background()
	st, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "c.db"))
	require.NoError(t, err)
	defer st.Close()
	now := st.Now().UnixMilli()
	_, err = st.db.Exec(ctx, `INSERT INTO table_reports (table_id, report_type, received_at, snapshot_id, body)
		VALUES ('no-such-table', 'scan-report', $1, 1, '{}')`, now)
	require.NoError(t, err)
	n, err := st.PruneReports(ctx, time.UnixMilli(now-time.Hour.Milliseconds()), 0)
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	var left int
	require.NoError(t, st.db.QueryRow(ctx, `SELECT count(*) FROM table_reports`).Scan(&left))
	require.Zero(t, left)
}

// TestPruneReportsBatches: with a batch of 2 the prune deletes in many
// statements (counts that are and are not multiples of the batch) and
// still removes exactly the old reports, the orphans and those past the
// per-table, per-type cap, on both databases.
func TestPruneReportsBatches(t *testing.T) {
	for name, open := range map[string]func(testing.TB) *Store{"sqlite": openSQLiteStore, "postgres": openPostgresStore} {
		t.Run(name, func(t *testing.T) { testPruneReportsBatches(t, open(t)) })
	}
}

func testPruneReportsBatches(t *testing.T, st *Store) {
	ctx := context.Background()
	st.reportBatch = 2
	seedTables(t, st, 1)
	var tableID string
	require.NoError(t, st.db.QueryRow(ctx, `SELECT id FROM catalog_objects WHERE name = $1`, seedRef(0).Name).Scan(&tableID))
	now := st.Now().UnixMilli()
	add := func(table, typ string, at int64) int64 {
		var id int64
		require.NoError(t, st.db.QueryRow(ctx, `INSERT INTO table_reports (table_id, report_type, received_at, snapshot_id, body)
			VALUES ($1, $2, $3, 1, '{}') RETURNING id`, table, typ, at).Scan(&id))
		return id
	}
	for i := range 5 {
		add(tableID, "scan-report", now-int64(48*time.Hour/time.Millisecond)-int64(i)) // past the retention
		add("gone", "scan-report", now)                                                // orphans
	}
	var scans []int64
	for i := range 7 { // the newest three stay: i = 4, 5, 6
		scans = append(scans, add(tableID, "scan-report", now-100+int64(i)))
	}
	var commits []int64
	for i := range 3 {
		commits = append(commits, add(tableID, "commit-report", now-100+int64(i)))
	}
	n, err := st.PruneReports(ctx, time.UnixMilli(now-int64(24*time.Hour/time.Millisecond)), 3)
	require.NoError(t, err)
	require.Equal(t, int64(5+5+4), n)

	rows, err := st.db.Query(ctx, `SELECT id FROM table_reports ORDER BY id`)
	require.NoError(t, err)
	var left []int64
	for rows.Next() {
		var id int64
		require.NoError(t, rows.Scan(&id))
		left = append(left, id)
	}
	require.NoError(t, rows.Err())
	rows.Close()
	require.Equal(t, append(scans[4:], commits...), left)
}

// TestPruneReportsCountsOnlyCompletedBatches: when a batch fails (a
// trigger refuses one row's delete), the rows of the batches before it
// are gone and counted, the failed batch's rows all stay (its statement
// rolled back) and are not counted.
func TestPruneReportsCountsOnlyCompletedBatches(t *testing.T) {
	refuse := map[string]string{
		"sqlite": `CREATE TRIGGER keep_four BEFORE DELETE ON table_reports WHEN old.received_at = 4
			BEGIN SELECT RAISE(ABORT, 'kept'); END`,
		"postgres": `CREATE FUNCTION keep_four() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN IF old.received_at = 4 THEN RAISE EXCEPTION 'kept'; END IF; RETURN old; END $$;
			CREATE TRIGGER keep_four BEFORE DELETE ON table_reports FOR EACH ROW EXECUTE FUNCTION keep_four()`,
	}
	for name, open := range map[string]func(testing.TB) *Store{"sqlite": openSQLiteStore, "postgres": openPostgresStore} {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			ctx := context.Background()
			st.reportBatch = 2
			for at := 1; at <= 5; at++ {
				_, err := st.db.Exec(ctx, `INSERT INTO table_reports (table_id, report_type, received_at, snapshot_id, body)
					VALUES ('t', 'scan-report', $1, 1, '{}')`, at)
				require.NoError(t, err)
			}
			_, err := st.db.Exec(ctx, refuse[name])
			require.NoError(t, err)
			n, err := st.PruneReports(ctx, time.UnixMilli(100), 0)
			require.Error(t, err)
			// Which batch holds the refused row is the database's choice
			// (in practice the second): whole batches before it went.
			require.Zero(t, n%2, "whole batches only: %d", n)
			var left, four int
			require.NoError(t, st.db.QueryRow(ctx, `SELECT count(*) FROM table_reports`).Scan(&left))
			require.NoError(t, st.db.QueryRow(ctx, `SELECT count(*) FROM table_reports WHERE received_at = 4`).Scan(&four))
			require.Equal(t, 1, four, "the refused row stays")
			require.Equal(t, int64(5-left), n, "the count is exactly what went")
			require.Greater(t, left, 1, "the failed batch deleted nothing")
		})
	}
}

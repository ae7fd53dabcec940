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
	n, err := st.PruneReports(ctx, time.UnixMilli(now-time.Hour.Milliseconds()))
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	var left int
	require.NoError(t, st.db.QueryRow(ctx, `SELECT count(*) FROM table_reports`).Scan(&left))
	require.Zero(t, left)
}

package sqldb

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBrief: on SQLite a brief statement runs on a live context, and
// refuses to start on a done one with the context's error (Exec, Query and
// QueryRow alike); any other driver is handed back as it is.
func TestBrief(t *testing.T) {
	ctx := context.Background()
	d, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "brief.db"), DefaultOptions())
	require.NoError(t, err)
	t.Cleanup(d.Close)
	b := Brief(d)
	_, isBrief := b.(briefSQLite)
	require.True(t, isBrief)

	live, cancel := context.WithCancel(ctx)
	defer cancel()
	_, err = b.Exec(live, `CREATE TABLE t (v TEXT)`)
	require.NoError(t, err)
	_, err = b.Exec(live, `INSERT INTO t VALUES ($1), ($2)`, "a", "b")
	require.NoError(t, err)
	var v string
	require.NoError(t, b.QueryRow(live, `SELECT v FROM t WHERE v = $1`, "b").Scan(&v))
	require.Equal(t, "b", v)
	rows, err := b.Query(live, `SELECT v FROM t ORDER BY v`)
	require.NoError(t, err)
	var got []string
	for rows.Next() {
		require.NoError(t, rows.Scan(&v))
		got = append(got, v)
	}
	require.NoError(t, rows.Err())
	rows.Close()
	require.Equal(t, []string{"a", "b"}, got)

	cancel()
	_, err = b.Exec(live, `INSERT INTO t VALUES ($1)`, "c")
	require.ErrorIs(t, err, context.Canceled)
	_, err = b.Query(live, `SELECT v FROM t`)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, b.QueryRow(live, `SELECT v FROM t`).Scan(&v), context.Canceled)
	var n int
	require.NoError(t, d.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n))
	require.Equal(t, 2, n, "the refused insert did not run")

	pg := &Postgres{}
	require.Same(t, Driver(pg), Brief(pg))
}

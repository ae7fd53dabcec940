package sqldb

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/pgtest"
)

// TestTunePool: the pool size comes from Options.MaxConns, else from the URL,
// else DefaultMaxConns; a quarter stays idle unless the URL says otherwise;
// statements are prepared and cached unless the URL picks another mode.
func TestTunePool(t *testing.T) {
	const base = "postgres://u@localhost:5432/db"
	for name, tc := range map[string]struct {
		dsn               string
		opt               int
		wantMax, wantIdle int32
		wantMode          pgx.QueryExecMode
	}{
		"default":           {base, 0, int32(DefaultMaxConns()), int32(DefaultMaxConns() / 4), pgx.QueryExecModeCacheStatement},
		"flag":              {base, 40, 40, 10, pgx.QueryExecModeCacheStatement},
		"tiny flag":         {base, 2, 2, 1, pgx.QueryExecModeCacheStatement},
		"url max":           {base + "?pool_max_conns=8", 0, 8, 2, pgx.QueryExecModeCacheStatement},
		"flag beats url":    {base + "?pool_max_conns=8", 24, 24, 6, pgx.QueryExecModeCacheStatement},
		"url idle":          {base + "?pool_min_idle_conns=0", 0, int32(DefaultMaxConns()), 0, pgx.QueryExecModeCacheStatement},
		"url exec mode":     {base + "?default_query_exec_mode=exec", 0, int32(DefaultMaxConns()), int32(DefaultMaxConns() / 4), pgx.QueryExecModeExec},
		"keyword/value dsn": {"host=localhost user=u pool_max_conns=5", 0, 5, 1, pgx.QueryExecModeCacheStatement},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := pgxpool.ParseConfig(tc.dsn)
			require.NoError(t, err)
			o := DefaultOptions()
			o.MaxConns = int32(tc.opt)
			tunePool(cfg, tc.dsn, o)
			require.Equal(t, tc.wantMax, cfg.MaxConns)
			require.Equal(t, tc.wantIdle, cfg.MinIdleConns)
			require.Equal(t, tc.wantMode, cfg.ConnConfig.DefaultQueryExecMode)
			require.Positive(t, cfg.ConnConfig.StatementCacheCapacity)
		})
	}
	require.GreaterOrEqual(t, DefaultMaxConns(), 16)
}

// TestPoolWarmsIdleConnections: an opened Postgres driver reaches its idle
// minimum in the background, before any burst asks for connections.
func TestPoolWarmsIdleConnections(t *testing.T) {
	o := DefaultOptions()
	o.MaxConns = 8
	d, err := OpenPostgres(context.Background(), pgtest.NewDatabase(t), true, o)
	require.NoError(t, err)
	defer d.Close()
	require.EqualValues(t, 8, d.pool.Config().MaxConns)
	require.Eventually(t, func() bool { _, idle, _ := d.PoolStats(); return idle >= 2 }, 10*time.Second, 20*time.Millisecond,
		"the pool keeps a quarter of its connections idle and ready")
}

// TestSQLiteKeepsIdleConnections: connections opened for concurrent
// statements stay open when they are given back, so that the next burst
// neither opens connections nor prepares its statements again.
func TestSQLiteKeepsIdleConnections(t *testing.T) {
	ctx := context.Background()
	d, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "idle.db"), DefaultOptions())
	require.NoError(t, err)
	t.Cleanup(d.Close)
	const burst = 8 // more than database/sql's default of two idle connections
	require.Less(t, burst, DefaultMaxConns())
	for range 2 {
		var open []Rows
		for range burst {
			rows, err := d.Query(ctx, `SELECT 1`) // each holds its connection until closed
			require.NoError(t, err)
			open = append(open, rows)
		}
		for _, r := range open {
			r.Close()
		}
	}
	st := d.db.Stats()
	require.Equal(t, burst, st.OpenConnections)
	require.Zero(t, st.MaxIdleClosed, "connections closed for want of idle room")
}

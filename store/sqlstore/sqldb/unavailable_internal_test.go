package sqldb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/store"
)

func TestPgClass(t *testing.T) {
	for code, want := range map[string]Class{
		"23505": ClassUnique, "23503": ClassForeignKey, "40001": ClassRetry, "40P01": ClassRetry,
		"57P01": ClassUnavailable, "57P02": ClassUnavailable, "57P03": ClassUnavailable, "08006": ClassUnavailable,
		"08001": ClassUnavailable, "53300": ClassUnavailable, "25006": ClassUnavailable, "57014": ClassUnavailable,
		"22021": ClassInvalid, "54000": ClassInvalid, "42P01": ClassOther, "23514": ClassOther,
	} {
		require.Equal(t, want, pgClass(code), code)
	}
}

// TestWrapKeepsDriverTextOut: every error Wrap returns names a store
// sentinel and never the driver's message.
func TestWrapKeepsDriverTextOut(t *testing.T) {
	d := &Postgres{}
	secret := "password authentication failed for user \"admin\" on host db.internal"
	cases := map[error]error{
		&pgconn.PgError{Code: "57P01", Message: secret}: store.ErrUnavailable,
		&pgconn.PgError{Code: "22021", Message: secret}: store.ErrInvalidValue,
		&pgconn.PgError{Code: "42P01", Message: secret}: store.ErrDatabase,
		fmt.Errorf("%w: %s", ErrCommitUnknown, secret):  store.ErrOutcomeUnknown,
		fmt.Errorf("%w: %s", ErrRetryTx, secret):        store.ErrUnavailable,
		fmt.Errorf("x: %w", context.Canceled):           store.ErrUnavailable,
	}
	for in, want := range cases {
		got := Wrap(d, in, "op")
		require.ErrorIs(t, got, want, "%v", in)
		require.NotContains(t, got.Error(), "password", "driver text leaked: %s", got)
	}
	nf := fmt.Errorf("%w: x", store.ErrNoSuchTable)
	require.Same(t, nf, Wrap(d, nf, "op"), "store errors pass through")
	require.ErrorIs(t, Wrap(d, fmt.Errorf("x: %w", context.Canceled), "op"), context.Canceled, "the cause stays reachable")
}

// TestPostgresRefusedIsUnavailable: a server that refuses connections is
// reported as store.ErrUnavailable, on plain queries and on transactions.
func TestPostgresRefusedIsUnavailable(t *testing.T) {
	cfg, err := pgxpool.ParseConfig("postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	require.NoError(t, err)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	d := &Postgres{pool: pool, acquireTimeout: 5 * time.Second, swapTimeout: 5 * time.Second}
	defer d.Close()
	ctx := context.Background()
	var n int
	require.ErrorIs(t, Wrap(d, d.QueryRow(ctx, `SELECT 1`).Scan(&n), "row"), store.ErrUnavailable)
	_, err = d.Query(ctx, `SELECT 1`)
	require.ErrorIs(t, Wrap(d, err, "rows"), store.ErrUnavailable)
	_, err = d.Exec(ctx, `SELECT 1`)
	require.ErrorIs(t, Wrap(d, err, "exec"), store.ErrUnavailable)
	_, err = d.ExecAlone(ctx, `SELECT 1`)
	require.ErrorIs(t, Wrap(d, err, "exec alone"), store.ErrUnavailable)
	err = InTx(ctx, d, func(q Querier) error { _, err := q.Exec(ctx, `SELECT 1`); return err })
	require.ErrorIs(t, Wrap(d, err, "transaction"), store.ErrUnavailable)
}

// TestPostgresAcquireTimeout: with every pooled connection busy, a query
// gives up after the acquire timeout with store.ErrUnavailable.
func TestPostgresAcquireTimeout(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	o := DefaultOptions()
	o.AcquireTimeout = 200 * time.Millisecond
	d, err := OpenPostgres(context.Background(), dsn+"&pool_max_conns=1", false, o)
	require.NoError(t, err)
	defer d.Close()
	ctx := context.Background()
	held, err := d.pool.Acquire(ctx)
	require.NoError(t, err)
	start := time.Now()
	var n int
	require.ErrorIs(t, Wrap(d, d.QueryRow(ctx, `SELECT 1`).Scan(&n), "row"), store.ErrUnavailable)
	require.Less(t, time.Since(start), 3*time.Second)
	held.Release()
	require.NoError(t, d.QueryRow(ctx, `SELECT 1`).Scan(&n), "works again once a connection is free")
}

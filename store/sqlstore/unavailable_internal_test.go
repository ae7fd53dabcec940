package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/dbclock"
	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/store"
)

func TestPgClass(t *testing.T) {
	for code, want := range map[string]errClass{
		"23505": classUnique, "23503": classForeignKey, "40001": classRetry, "40P01": classRetry,
		"57P01": classUnavailable, "57P02": classUnavailable, "57P03": classUnavailable, "08006": classUnavailable,
		"08001": classUnavailable, "53300": classUnavailable, "25006": classUnavailable, "57014": classUnavailable,
		"22021": classInvalid, "54000": classInvalid, "42P01": classOther, "23514": classOther,
	} {
		require.Equal(t, want, pgClass(code), code)
	}
}

// TestWrapKeepsDriverTextOut: every error leaving the store names a store
// sentinel and never the driver's message.
func TestWrapKeepsDriverTextOut(t *testing.T) {
	s := &Store{db: &pgDriver{}, clock: dbclock.New(func(context.Context) (time.Time, error) { return time.Time{}, errors.New("no database") }, dbclock.Config{})}
	secret := "password authentication failed for user \"admin\" on host db.internal"
	cases := map[error]error{
		&pgconn.PgError{Code: "57P01", Message: secret}: store.ErrUnavailable,
		&pgconn.PgError{Code: "22021", Message: secret}: store.ErrInvalidValue,
		&pgconn.PgError{Code: "42P01", Message: secret}: store.ErrDatabase,
		fmt.Errorf("%w: %s", errCommitUnknown, secret):  store.ErrOutcomeUnknown,
		fmt.Errorf("%w: %s", errRetryTx, secret):        store.ErrUnavailable,
		fmt.Errorf("x: %w", context.Canceled):           store.ErrUnavailable,
	}
	for in, want := range cases {
		got := s.wrap(in, "op")
		require.ErrorIs(t, got, want, "%v", in)
		require.NotContains(t, got.Error(), "password", "driver text leaked: %s", got)
	}
	nf := fmt.Errorf("%w: x", store.ErrNoSuchTable)
	require.Same(t, nf, s.wrap(nf, "op"), "store errors pass through")
	require.ErrorIs(t, s.wrap(fmt.Errorf("x: %w", context.Canceled), "op"), context.Canceled, "the cause stays reachable")
}

// TestPostgresRefusedIsUnavailable: a server that refuses connections is
// reported as store.ErrUnavailable, on plain queries and on transactions.
func TestPostgresRefusedIsUnavailable(t *testing.T) {
	cfg, err := pgxpool.ParseConfig("postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	require.NoError(t, err)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	s := newStore(context.Background(), &pgDriver{pool: pool, acquireTimeout: 5 * time.Second, swapTimeout: 5 * time.Second}, options{})
	defer s.Close()
	ctx := context.Background()
	_, err = s.WarehouseGet(ctx, "wh")
	require.ErrorIs(t, err, store.ErrUnavailable)
	_, err = s.NamespaceCreate(ctx, "wh", []string{"a"}, nil)
	require.ErrorIs(t, err, store.ErrUnavailable)
	_, _, err = s.NamespaceList(ctx, "wh", nil, store.Page{})
	require.ErrorIs(t, err, store.ErrUnavailable)
	_, err = s.IdempotencyBegin(ctx, store.IdempotencyClaim{Key: "k", Owner: "o", Lease: time.Second, TTL: time.Hour})
	require.ErrorIs(t, err, store.ErrUnavailable)
}

// TestPostgresAcquireTimeout: with every pooled connection busy, a query
// gives up after the acquire timeout with store.ErrUnavailable.
func TestPostgresAcquireTimeout(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	st, err := OpenPostgres(context.Background(), dsn+"&pool_max_conns=1", true, WithAcquireTimeout(200*time.Millisecond))
	require.NoError(t, err)
	defer st.Close()
	ctx := context.Background()
	held, err := st.db.(*pgDriver).pool.Acquire(ctx)
	require.NoError(t, err)
	start := time.Now()
	_, err = st.WarehouseGet(ctx, "wh")
	require.ErrorIs(t, err, store.ErrUnavailable)
	require.Less(t, time.Since(start), 3*time.Second)
	held.Release()
	_, err = st.WarehouseGet(ctx, "wh")
	require.ErrorIs(t, err, store.ErrNotFound, "works again once a connection is free")
}

// TestSQLiteLockedIsUnavailable: a file held by another writer beyond the
// busy timeout is store.ErrUnavailable; once released, writes go through.
func TestSQLiteLockedIsUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	st, err := OpenSQLite(context.Background(), path, WithBusyTimeout(200*time.Millisecond))
	require.NoError(t, err)
	defer st.Close()
	ctx := context.Background()
	require.NoError(t, st.WarehouseCreate(ctx, &store.Warehouse{Name: "wh", Location: "file:///wh"}))

	other, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	defer other.Close()
	conn, err := other.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
	require.NoError(t, err)

	start := time.Now()
	_, err = st.NamespaceCreate(ctx, "wh", []string{"a"}, nil)
	require.ErrorIs(t, err, store.ErrUnavailable)
	require.Less(t, time.Since(start), 5*time.Second, "no retry loop on top of the busy timeout")
	err = st.WarehouseCreate(ctx, &store.Warehouse{Name: "w2", Location: "file:///w2"})
	require.ErrorIs(t, err, store.ErrUnavailable)
	var de *dbError
	require.True(t, errors.As(err, &de))

	_, err = conn.ExecContext(ctx, "ROLLBACK")
	require.NoError(t, err)
	_, err = st.NamespaceCreate(ctx, "wh", []string{"a"}, nil)
	require.NoError(t, err)
}

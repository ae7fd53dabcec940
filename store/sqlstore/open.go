// Package sqlstore implements store.Store with portable SQL over two
// drivers: Postgres through pgx v5 (production) and an embedded SQLite file
// through modernc.org/sqlite (the zero-install default). One conformance
// suite (store/storetest) runs against both.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	migratesqlite "github.com/golang-migrate/migrate/v4/database/sqlite"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/lakehold/catalog/internal/dbclock"
	"github.com/lakehold/catalog/migrations"
)

// Store is the SQL implementation of store.Store.
type Store struct {
	db    driver
	clock *dbclock.Clock
	// jobs is the River queue over the same database (nil only in tests
	// that build a Store around a bare driver).
	jobs jobQueue
}

// newStore wraps a driver, with the clock measured against its database
// once now (a failure leaves the local clock until a later measurement).
func newStore(ctx context.Context, db driver, o options) *Store {
	s := &Store{db: db, clock: dbclock.New(db.dbTime, dbclock.Config{Local: o.localClock})}
	_ = s.clock.Measure(ctx)
	return s
}

// withQueue gives s its job queue, closing s when River refuses the driver.
func (s *Store) withQueue() (*Store, error) {
	q, err := s.db.newQueue()
	if err != nil {
		s.Close()
		return nil, err
	}
	s.jobs = q
	return s, nil
}

// Option tunes how a store talks to its database.
type Option func(*options)

type options struct {
	busyTimeout    time.Duration
	acquireTimeout time.Duration
	connectTimeout time.Duration
	swapTimeout    time.Duration
	maxConns       int32
	localClock     func() time.Time
}

func defaultOptions(opts []Option) options {
	o := options{busyTimeout: 10 * time.Second, acquireTimeout: 10 * time.Second, connectTimeout: 5 * time.Second,
		swapTimeout: 10 * time.Second}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// WithBusyTimeout sets how long a SQLite statement waits for another
// writer's lock before the store reports store.ErrUnavailable (default 10s).
func WithBusyTimeout(d time.Duration) Option { return func(o *options) { o.busyTimeout = d } }

// WithAcquireTimeout sets how long a Postgres query waits for a pooled
// connection before the store reports store.ErrUnavailable (default 10s).
func WithAcquireTimeout(d time.Duration) Option { return func(o *options) { o.acquireTimeout = d } }

// WithSwapTimeout sets how long a Postgres pointer swap or COMMIT may take
// once sent, whatever the request's own deadline (default 10s). Past it the
// outcome is unknown (store.ErrOutcomeUnknown) unless a re-read of the
// pointer shows the swap landed.
func WithSwapTimeout(d time.Duration) Option { return func(o *options) { o.swapTimeout = d } }

// WithLocalClock replaces this process's clock (time.Now) under the
// store's estimate of the database clock. Tests use it to run a replica
// whose clock is off.
func WithLocalClock(now func() time.Time) Option { return func(o *options) { o.localClock = now } }

// WithMaxConns sets the size of the Postgres connection pool; n <= 0 keeps
// pool_max_conns from the database URL, or else DefaultMaxConns.
func WithMaxConns(n int) Option {
	return func(o *options) { o.maxConns = int32(min(max(n, 0), math.MaxInt32)) }
}

// DefaultMaxConns is the Postgres pool size when neither WithMaxConns nor
// pool_max_conns in the URL sets one: max(16, 4×GOMAXPROCS). A request
// holds a connection only for its statements and spends the rest of its
// time in JSON, compression and object-store I/O, so a few connections per
// core keep the database busy; the floor of 16 keeps a small container from
// queueing on pgx's own default of max(4, CPUs). docs/design.md explains.
func DefaultMaxConns() int { return max(16, 4*runtime.GOMAXPROCS(0)) }

// tunePool sizes the pool and keeps connections warm. Settings the URL
// names (pool_max_conns, pool_min_idle_conns, pool_min_conns,
// default_query_exec_mode) are the operator's and stay as written, except
// that an explicit WithMaxConns wins over pool_max_conns.
func tunePool(cfg *pgxpool.Config, dsn string, o options) {
	switch {
	case o.maxConns > 0:
		cfg.MaxConns = o.maxConns
	case !strings.Contains(dsn, "pool_max_conns"):
		cfg.MaxConns = int32(DefaultMaxConns())
	}
	if !strings.Contains(dsn, "pool_min_idle_conns") && !strings.Contains(dsn, "pool_min_conns") {
		// A quarter of the pool stays connected and idle, so that a burst
		// finds connections ready instead of paying TCP, TLS and
		// authentication on its first statements.
		cfg.MinIdleConns = max(1, cfg.MaxConns/4)
	}
	// pgx prepares each statement once per connection and caches it
	// (QueryExecModeCacheStatement, its default): the store's statements
	// are few and fixed, so every later run skips parse and plan. Behind a
	// transaction-pooling proxy, set default_query_exec_mode=exec (or
	// cache_describe) in the URL instead; ParseConfig has then applied it.
}

// OpenPostgres connects to Postgres at url (a libpq URL or DSN). With
// migrate set it first applies pending migrations. It returns an error when
// the URL is invalid, the server does not answer, or a migration fails.
// Without connect_timeout in the URL, connecting gives up after 5 s.
func OpenPostgres(ctx context.Context, dsn string, migrateFirst bool, opts ...Option) (*Store, error) {
	o := defaultOptions(opts)
	if migrateFirst {
		if err := MigratePostgres(dsn); err != nil {
			return nil, err
		}
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		// A blackholed host would otherwise hold each request until the
		// kernel gives up on TCP.
		cfg.ConnConfig.ConnectTimeout = o.connectTimeout
	}
	tunePool(cfg, dsn, o)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	return newStore(ctx, &pgDriver{pool: pool, acquireTimeout: o.acquireTimeout, swapTimeout: o.swapTimeout}, o).withQueue()
}

// MigratePostgres applies pending migrations to the database at dsn.
func MigratePostgres(dsn string) error {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return fmt.Errorf("parse database url: %w", err)
	}
	db := stdlib.OpenDB(*cfg.ConnConfig)
	defer db.Close()
	drv, err := migratepgx.WithInstance(db, &migratepgx.Config{})
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return runMigrations("pgx5", drv)
}

// OpenSQLite opens (creating if needed) the SQLite file at path and applies
// pending migrations. It returns an error when the file cannot be opened or
// migrated.
func OpenSQLite(ctx context.Context, path string, opts ...Option) (*Store, error) {
	o := defaultOptions(opts)
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+abs+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", abs, err)
	}
	drv, err := migratesqlite.WithInstance(db, &migratesqlite.Config{})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if err := runMigrations("sqlite", drv); err != nil {
		db.Close()
		return nil, err
	}
	return newStore(ctx, &sqliteDriver{db: db}, o).withQueue()
}

func runMigrations(name string, drv interface {
	Close() error
},
) error {
	database := "sqlite"
	if _, ok := drv.(*migratepgx.Postgres); ok {
		database = "postgres"
	}
	src, err := iofs.New(migrations.For(database), ".")
	if err != nil {
		return err
	}
	var m *migrate.Migrate
	switch d := drv.(type) {
	case *migratepgx.Postgres:
		m, err = migrate.NewWithInstance("iofs", src, name, d)
	case *migratesqlite.Sqlite:
		m, err = migrate.NewWithInstance("iofs", src, name, d)
	default:
		return fmt.Errorf("unknown migration driver %T", drv)
	}
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.ping(ctx) }

// Now implements store.Store: the database's clock, estimated from this
// process's clock and an offset measured against the database (refreshed
// in the background every 30 s).
func (s *Store) Now() time.Time { return s.clock.Now() }

// ClockOffset implements store.Store: the last measured offset of the
// database's clock from this process's (positive: the database is ahead);
// ok is false until a measurement has succeeded.
func (s *Store) ClockOffset() (offset time.Duration, ok bool) { return s.clock.Offset() }

// Close releases the database connections.
func (s *Store) Close() { s.db.close() }

// PoolStats returns (acquired, idle, total) connections of the Postgres
// pool, and ok=false for SQLite.
func (s *Store) PoolStats() (acquired, idle, total int32, ok bool) {
	if d, isPG := s.db.(*pgDriver); isPG {
		st := d.poolStats()
		return st.AcquiredConns(), st.IdleConns(), st.TotalConns(), true
	}
	return 0, 0, 0, false
}

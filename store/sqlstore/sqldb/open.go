package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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

	"github.com/lakehold/catalog/migrations"
)

// Options tune how a driver talks to its database; DefaultOptions gives
// the defaults. sqlstore's With* options set them.
type Options struct {
	// BusyTimeout is how long a SQLite statement waits for another
	// writer's lock before failing as ClassUnavailable.
	BusyTimeout time.Duration
	// AcquireTimeout is how long a Postgres query waits for a pooled
	// connection before failing as ClassUnavailable.
	AcquireTimeout time.Duration
	// ConnectTimeout bounds connecting to Postgres when the URL sets no
	// connect_timeout.
	ConnectTimeout time.Duration
	// SwapTimeout is how long a Postgres ExecAlone statement or COMMIT may
	// take once sent, whatever the caller's deadline; past it the outcome
	// is ErrCommitUnknown.
	SwapTimeout time.Duration
	// MaxConns is the Postgres pool size; 0 keeps pool_max_conns from the
	// URL, or else DefaultMaxConns.
	MaxConns int32
}

// DefaultOptions returns 10 s for the busy, acquire and swap timeouts, 5 s
// to connect, and the pool size left to the URL or DefaultMaxConns.
func DefaultOptions() Options {
	return Options{BusyTimeout: 10 * time.Second, AcquireTimeout: 10 * time.Second, ConnectTimeout: 5 * time.Second,
		SwapTimeout: 10 * time.Second}
}

// DefaultMaxConns is the Postgres pool size when neither Options.MaxConns nor
// pool_max_conns in the URL sets one, and the idle connections SQLite
// keeps: max(16, 4×GOMAXPROCS). A request
// holds a connection only for its statements and spends the rest of its
// time in JSON, compression and object-store I/O, so a few connections per
// core keep the database busy; the floor of 16 keeps a small container from
// queueing on pgx's own default of max(4, CPUs). docs/design.md explains.
func DefaultMaxConns() int { return max(16, 4*runtime.GOMAXPROCS(0)) }

// tunePool sizes the pool and keeps connections warm. Settings the URL
// names (pool_max_conns, pool_min_idle_conns, pool_min_conns,
// default_query_exec_mode) are the operator's and stay as written, except
// that an explicit MaxConns wins over pool_max_conns.
func tunePool(cfg *pgxpool.Config, dsn string, o Options) {
	switch {
	case o.MaxConns > 0:
		cfg.MaxConns = o.MaxConns
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
// Without connect_timeout in the URL, connecting gives up after
// o.ConnectTimeout.
func OpenPostgres(ctx context.Context, dsn string, migrateFirst bool, o Options) (*Postgres, error) {
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
		cfg.ConnConfig.ConnectTimeout = o.ConnectTimeout
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
	return &Postgres{pool: pool, acquireTimeout: o.AcquireTimeout, swapTimeout: o.SwapTimeout}, nil
}

// MigratePostgres applies pending migrations to the database at dsn. It
// returns an error when the URL is invalid or a migration fails.
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
func OpenSQLite(ctx context.Context, path string, o Options) (*SQLite, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+abs+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	// database/sql keeps two idle connections by default: with more
	// requests at once than that, every statement beyond them opened a
	// connection (file, pragmas, schema) and prepared its statement anew,
	// then closed it, which under four clients was a tenth of the CPU of
	// listTables. Idle connections are kept up to the size Postgres's pool
	// has.
	db.SetMaxIdleConns(DefaultMaxConns())
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
	return &SQLite{db: db}, nil
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

// Package sqlstore implements store.Store with portable SQL: the catalog's
// objects, RBAC, Idempotency-Keys, job queue, change events, audit records
// and file index, each statement written once for Postgres (pgx v5, in
// production) and an embedded SQLite file (the zero-install default).
// What depends on which of the two is underneath (connecting, migrations,
// transactions and their retry, driver errors) is store/sqlstore/sqldb's;
// River, which runs the jobs, is wrapped in store/sqlstore/jobqueue.
// One conformance suite (store/storetest) runs against both.
package sqlstore

import (
	"context"
	"math"
	"time"

	"github.com/lakehold/catalog/internal/dbclock"
	"github.com/lakehold/catalog/store/sqlstore/jobqueue"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

// Store is the SQL implementation of store.Store.
type Store struct {
	db    sqldb.Driver
	clock *dbclock.Clock
	// jobs is the River queue over the same database (nil only in tests
	// that build a Store around a bare driver).
	jobs jobqueue.Queue
	// reportBatch is how many reports one prune statement deletes at
	// most (0: reportPruneBatch); tests make it small.
	reportBatch int
}

// newStore wraps a driver, with the clock measured against its database
// once now (a failure leaves the local clock until a later measurement).
func newStore(ctx context.Context, db sqldb.Driver, o options) *Store {
	s := &Store{db: db, clock: dbclock.New(db.DBTime, dbclock.Config{Local: o.localClock})}
	_ = s.clock.Measure(ctx)
	return s
}

// withQueue gives s its job queue, closing s when River refuses the driver.
func (s *Store) withQueue() (*Store, error) {
	q, err := newQueue(s.db)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.jobs = q
	return s, nil
}

// newQueue returns River over the driver's own connections, skipping
// Unique jobs the job_hints table knows to wait.
func newQueue(db sqldb.Driver) (jobqueue.Queue, error) {
	return jobqueue.New(db, jobqueue.Hints{Margin: jobHintMargin, Waits: jobWaits, Record: recordJobHint})
}

// Option tunes how a store talks to its database.
type Option func(*options)

type options struct {
	db         sqldb.Options
	localClock func() time.Time
}

func defaultOptions(opts []Option) options {
	o := options{db: sqldb.DefaultOptions()}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// WithBusyTimeout sets how long a SQLite statement waits for another
// writer's lock before the store reports store.ErrUnavailable (default 10s).
func WithBusyTimeout(d time.Duration) Option { return func(o *options) { o.db.BusyTimeout = d } }

// WithAcquireTimeout sets how long a Postgres query waits for a pooled
// connection before the store reports store.ErrUnavailable (default 10s).
func WithAcquireTimeout(d time.Duration) Option { return func(o *options) { o.db.AcquireTimeout = d } }

// WithSwapTimeout sets how long a Postgres pointer swap or COMMIT may take
// once sent, whatever the request's own deadline (default 10s). Past it the
// outcome is unknown (store.ErrOutcomeUnknown) unless a re-read of the
// pointer shows the swap landed.
func WithSwapTimeout(d time.Duration) Option { return func(o *options) { o.db.SwapTimeout = d } }

// WithLocalClock replaces this process's clock (time.Now) under the
// store's estimate of the database clock. Tests use it to run a replica
// whose clock is off.
func WithLocalClock(now func() time.Time) Option { return func(o *options) { o.localClock = now } }

// WithMaxConns sets the size of the Postgres connection pool; n <= 0 keeps
// pool_max_conns from the database URL, or else DefaultMaxConns.
func WithMaxConns(n int) Option {
	return func(o *options) { o.db.MaxConns = int32(min(max(n, 0), math.MaxInt32)) }
}

// DefaultMaxConns is the Postgres pool size when neither WithMaxConns nor
// pool_max_conns in the URL sets one (sqldb.DefaultMaxConns explains).
func DefaultMaxConns() int { return sqldb.DefaultMaxConns() }

// OpenPostgres connects to Postgres at url (a libpq URL or DSN). With
// migrate set it first applies pending migrations. It returns an error when
// the URL is invalid, the server does not answer, or a migration fails.
// Without connect_timeout in the URL, connecting gives up after 5 s.
func OpenPostgres(ctx context.Context, dsn string, migrateFirst bool, opts ...Option) (*Store, error) {
	o := defaultOptions(opts)
	d, err := sqldb.OpenPostgres(ctx, dsn, migrateFirst, o.db)
	if err != nil {
		return nil, err
	}
	return newStore(ctx, d, o).withQueue()
}

// MigratePostgres applies pending migrations to the database at dsn. It
// returns an error when the URL is invalid or a migration fails.
func MigratePostgres(dsn string) error { return sqldb.MigratePostgres(dsn) }

// OpenSQLite opens (creating if needed) the SQLite file at path and applies
// pending migrations. It returns an error when the file cannot be opened or
// migrated.
func OpenSQLite(ctx context.Context, path string, opts ...Option) (*Store, error) {
	o := defaultOptions(opts)
	d, err := sqldb.OpenSQLite(ctx, path, o.db)
	if err != nil {
		return nil, err
	}
	return newStore(ctx, d, o).withQueue()
}

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// Now implements store.Store: the database's clock, estimated from this
// process's clock and an offset measured against the database (refreshed
// in the background every 30 s).
func (s *Store) Now() time.Time { return s.clock.Now() }

// ClockOffset implements store.Store: the last measured offset of the
// database's clock from this process's (positive: the database is ahead);
// ok is false until a measurement has succeeded.
func (s *Store) ClockOffset() (offset time.Duration, ok bool) { return s.clock.Offset() }

// Close releases the database connections.
func (s *Store) Close() { s.db.Close() }

// PoolStats returns (acquired, idle, total) connections of the Postgres
// pool, and ok=false for SQLite.
func (s *Store) PoolStats() (acquired, idle, total int32, ok bool) {
	if d, isPG := s.db.(*sqldb.Postgres); isPG {
		acquired, idle, total = d.PoolStats()
		return acquired, idle, total, true
	}
	return 0, 0, 0, false
}

package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite talks to the embedded SQLite file through database/sql.
type SQLite struct {
	db    *sql.DB
	stmts stmtCache
}

// stmtCache keeps prepared statements for every statement, in
// transactions (txq) or not: database/sql would otherwise prepare each
// query anew, which for SQLite costs more than running the small queries
// the catalog issues. Bounded:
// past stmtCacheSize distinct texts, queries are prepared per call again.
type stmtCache struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

const stmtCacheSize = 512

// get returns a prepared statement for q, or nil when it cannot be kept.
func (c *stmtCache) get(ctx context.Context, db *sql.DB, q string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[q]; ok {
		return st
	}
	if len(c.m) >= stmtCacheSize {
		return nil
	}
	st, err := db.PrepareContext(ctx, q)
	if err != nil {
		return nil // the unprepared call reports the error
	}
	if c.m == nil {
		c.m = map[string]*sql.Stmt{}
	}
	c.m[q] = st
	return st
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		_ = st.Close()
	}
	c.m = nil
}

type sqlQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type sqlq struct{ q sqlQuerier }

type sqlRows struct{ *sql.Rows }

// Close implements Rows, whose Close returns no error.
func (r sqlRows) Close() { _ = r.Rows.Close() }

// Exec implements Querier.
func (s sqlq) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := s.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Query implements Querier.
func (s sqlq) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	rows, err := s.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

// QueryRow implements Querier.
func (s sqlq) QueryRow(ctx context.Context, query string, args ...any) Row {
	return s.q.QueryRowContext(ctx, query, args...)
}

// Exec implements Driver.
func (d *SQLite) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	if st := d.stmts.get(ctx, d.db, q); st != nil {
		return rowsAffected(st.ExecContext(ctx, args...))
	}
	return sqlq{d.db}.Exec(ctx, q, args...)
}

func rowsAffected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Query implements Driver.
func (d *SQLite) Query(ctx context.Context, q string, args ...any) (Rows, error) {
	if st := d.stmts.get(ctx, d.db, q); st != nil {
		rows, err := st.QueryContext(ctx, args...)
		if err != nil {
			return nil, err
		}
		return sqlRows{rows}, nil
	}
	return sqlq{d.db}.Query(ctx, q, args...)
}

// QueryRow implements Driver.
func (d *SQLite) QueryRow(ctx context.Context, q string, args ...any) Row {
	if st := d.stmts.get(ctx, d.db, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return sqlq{d.db}.QueryRow(ctx, q, args...)
}

// Begin implements Driver.
func (d *SQLite) Begin(ctx context.Context, fn func(q Querier) error) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(txq{sqlq: sqlq{tx}, tx: tx, d: d}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		var se *sqlite.Error
		if errors.As(err, &se) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrCommitUnknown, err)
	}
	return nil
}

// ExecAlone implements Driver. A SQLite statement that fails (including
// its implicit commit) is rolled back by SQLite itself, so no error leaves
// the outcome unknown.
func (d *SQLite) ExecAlone(ctx context.Context, q string, args ...any) (int64, error) {
	return d.Exec(ctx, q, args...)
}

// Classify implements Driver.
func (d *SQLite) Classify(err error) Class {
	if errors.Is(err, ErrCommitUnknown) {
		return ClassUnknown
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ClassNoRows
	}
	if errors.Is(err, sql.ErrConnDone) {
		return ClassUnavailable
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return sqliteClass(se)
	}
	return ClassOther
}

func sqliteClass(se *sqlite.Error) Class {
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return ClassUnique
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return ClassForeignKey
	case sqlite3.SQLITE_BUSY_SNAPSHOT:
		// A read transaction that tried to write over a newer snapshot: the
		// busy handler cannot help, running the transaction again does.
		return ClassRetry
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		// Still locked after busy_timeout: another writer holds the file.
		return ClassUnavailable
	case sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_FULL, sqlite3.SQLITE_PROTOCOL:
		return ClassUnavailable
	case sqlite3.SQLITE_TOOBIG:
		return ClassInvalid
	case sqlite3.SQLITE_CONSTRAINT:
		// ON DELETE RESTRICT is reported with the trigger sub-code; the
		// message names the constraint kind.
		msg := se.Error()
		if strings.Contains(msg, "FOREIGN KEY") {
			return ClassForeignKey
		}
		if strings.Contains(msg, "UNIQUE") {
			return ClassUnique
		}
	}
	return ClassOther
}

// Code implements Driver.
func (d *SQLite) Code(err error) string {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return "SQLite " + strconv.Itoa(se.Code())
	}
	if errors.Is(err, ErrCommitUnknown) {
		return "commit interrupted"
	}
	return ""
}

// Ping implements Driver.
func (d *SQLite) Ping(ctx context.Context) error { return d.db.PingContext(ctx) }

// dbTime reads SQLite's clock, which is this machine's (an embedded
// database has no other), to microseconds.
func (d *SQLite) DBTime(ctx context.Context) (time.Time, error) {
	var us int64
	err := d.db.QueryRowContext(ctx, `SELECT CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)`).Scan(&us)
	return time.UnixMicro(us), err
}

// River returns River's driver over the same database, and how to find the
// *sql.Tx behind a Querier that Begin handed out (ok is false for any
// other Querier), so that jobs are enqueued inside the caller's
// transaction.
func (d *SQLite) River() (riverdriver.Driver[*sql.Tx], func(Querier) (*sql.Tx, bool)) {
	return riversqlite.New(d.db), func(q Querier) (*sql.Tx, bool) {
		if t, ok := q.(txq); ok {
			return t.tx, true
		}
		p, ok := q.(sqlq)
		if !ok {
			return nil, false
		}
		tx, ok := p.q.(*sql.Tx)
		return tx, ok
	}
}

// Close implements Driver.
func (d *SQLite) Close() {
	d.stmts.close()
	_ = d.db.Close()
}

// Preparer prepares a statement to run many times, as *sql.DB and *sql.Tx
// do.
type Preparer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// SQLitePreparer reports whether q is a SQLite Querier, which takes
// anonymous ? parameters as well as $N, and returns its database/sql handle
// for statements worth preparing once (nil if it cannot prepare). For a
// Postgres Querier it returns nil and false: pgx prepares and caches
// statements itself.
func SQLitePreparer(q Querier) (p Preparer, ok bool) {
	if t, isTx := q.(txq); isTx {
		return t.tx, true
	}
	s, ok := q.(sqlq)
	if !ok {
		return nil, false
	}
	p, _ = s.q.(Preparer)
	return p, true
}

// txq runs a transaction's statements as the cache's prepared statements,
// bound to the transaction's connection (Tx.StmtContext reuses the copy
// already prepared on that connection). Parsing each statement again in
// every transaction was about a tenth of a createTable's CPU.
type txq struct {
	sqlq
	tx *sql.Tx
	d  *SQLite
}

// stmt is q prepared for the transaction, or nil when the cache is full.
func (t txq) stmt(ctx context.Context, q string) *sql.Stmt {
	st := t.d.stmts.get(ctx, t.d.db, q)
	if st == nil {
		return nil
	}
	return t.tx.StmtContext(ctx, st)
}

// Exec implements Querier.
func (t txq) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	if st := t.stmt(ctx, q); st != nil {
		return rowsAffected(st.ExecContext(ctx, args...))
	}
	return t.sqlq.Exec(ctx, q, args...)
}

// Query implements Querier.
func (t txq) Query(ctx context.Context, q string, args ...any) (Rows, error) {
	if st := t.stmt(ctx, q); st != nil {
		rows, err := st.QueryContext(ctx, args...)
		if err != nil {
			return nil, err
		}
		return sqlRows{rows}, nil
	}
	return t.sqlq.Query(ctx, q, args...)
}

// QueryRow implements Querier.
func (t txq) QueryRow(ctx context.Context, q string, args ...any) Row {
	if st := t.stmt(ctx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.sqlq.QueryRow(ctx, q, args...)
}

package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river/riverdriver/riversqlite"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteDriver talks to the embedded SQLite file through database/sql.
type sqliteDriver struct {
	db    *sql.DB
	stmts stmtCache
}

// stmtCache keeps prepared statements for the reads outside transactions:
// database/sql would otherwise prepare each query anew, which for SQLite
// costs more than running the small queries the catalog issues. Bounded:
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

func (r sqlRows) Close() { _ = r.Rows.Close() }

func (s sqlq) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := s.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (s sqlq) query(ctx context.Context, query string, args ...any) (rowsIter, error) {
	rows, err := s.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (s sqlq) queryRow(ctx context.Context, query string, args ...any) rowScanner {
	return s.q.QueryRowContext(ctx, query, args...)
}

func (d *sqliteDriver) exec(ctx context.Context, q string, args ...any) (int64, error) {
	return sqlq{d.db}.exec(ctx, q, args...)
}

func (d *sqliteDriver) query(ctx context.Context, q string, args ...any) (rowsIter, error) {
	if st := d.stmts.get(ctx, d.db, q); st != nil {
		rows, err := st.QueryContext(ctx, args...)
		if err != nil {
			return nil, err
		}
		return sqlRows{rows}, nil
	}
	return sqlq{d.db}.query(ctx, q, args...)
}

func (d *sqliteDriver) queryRow(ctx context.Context, q string, args ...any) rowScanner {
	if st := d.stmts.get(ctx, d.db, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return sqlq{d.db}.queryRow(ctx, q, args...)
}

func (d *sqliteDriver) begin(ctx context.Context, fn func(q querier) error) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(sqlq{tx}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		var se *sqlite.Error
		if errors.As(err, &se) {
			return err
		}
		return fmt.Errorf("%w: %w", errCommitUnknown, err)
	}
	return nil
}

// execAlone implements driver. A SQLite statement that fails (including
// its implicit commit) is rolled back by SQLite itself, so no error leaves
// the outcome unknown.
func (d *sqliteDriver) execAlone(ctx context.Context, q string, args ...any) (int64, error) {
	return d.exec(ctx, q, args...)
}

func (d *sqliteDriver) classify(err error) errClass {
	if errors.Is(err, errCommitUnknown) {
		return classUnknown
	}
	if errors.Is(err, sql.ErrNoRows) {
		return classNoRows
	}
	if errors.Is(err, sql.ErrConnDone) {
		return classUnavailable
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return sqliteClass(se)
	}
	return classOther
}

func sqliteClass(se *sqlite.Error) errClass {
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return classUnique
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return classForeignKey
	case sqlite3.SQLITE_BUSY_SNAPSHOT:
		// A read transaction that tried to write over a newer snapshot: the
		// busy handler cannot help, running the transaction again does.
		return classRetry
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		// Still locked after busy_timeout: another writer holds the file.
		return classUnavailable
	case sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_FULL, sqlite3.SQLITE_PROTOCOL:
		return classUnavailable
	case sqlite3.SQLITE_TOOBIG:
		return classInvalid
	case sqlite3.SQLITE_CONSTRAINT:
		// ON DELETE RESTRICT is reported with the trigger sub-code; the
		// message names the constraint kind.
		msg := se.Error()
		if strings.Contains(msg, "FOREIGN KEY") {
			return classForeignKey
		}
		if strings.Contains(msg, "UNIQUE") {
			return classUnique
		}
	}
	return classOther
}

func (d *sqliteDriver) code(err error) string {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return "SQLite " + strconv.Itoa(se.Code())
	}
	if errors.Is(err, errCommitUnknown) {
		return "commit interrupted"
	}
	return ""
}

func (d *sqliteDriver) ping(ctx context.Context) error { return d.db.PingContext(ctx) }

// dbTime reads SQLite's clock, which is this machine's (an embedded
// database has no other), to microseconds.
func (d *sqliteDriver) dbTime(ctx context.Context) (time.Time, error) {
	var us int64
	err := d.db.QueryRowContext(ctx, `SELECT CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)`).Scan(&us)
	return time.UnixMicro(us), err
}
func (d *sqliteDriver) newQueue() (jobQueue, error) {
	return newRiverQueue(riversqlite.New(d.db), func(q querier) (*sql.Tx, bool) {
		p, ok := q.(sqlq)
		if !ok {
			return nil, false
		}
		tx, ok := p.q.(*sql.Tx)
		return tx, ok
	})
}

func (d *sqliteDriver) close() {
	d.stmts.close()
	_ = d.db.Close()
}

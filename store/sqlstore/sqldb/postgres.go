package sqldb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// Postgres talks to Postgres through a pgx v5 pool.
type Postgres struct {
	pool *pgxpool.Pool
	// acquireTimeout bounds the wait for a pooled connection, so that a
	// stuck or exhausted database answers "unavailable" instead of queueing
	// requests without end.
	acquireTimeout time.Duration
	// swapTimeout bounds a statement ExecAlone runs and a COMMIT, both
	// detached from the request's cancellation.
	swapTimeout time.Duration
}

// errAcquireTimeout marks a request that got no pooled connection in time.
var errAcquireTimeout = errors.New("no database connection within the acquire timeout")

type pgQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

type pgq struct{ q pgQuerier }

// Exec implements Querier.
func (p pgq) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := p.q.Exec(ctx, sql, args...)
	return tag.RowsAffected(), err
}

// Query implements Querier.
func (p pgq) Query(ctx context.Context, sql string, args ...any) (Rows, error) {
	rows, err := p.q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// QueryRow implements Querier.
func (p pgq) QueryRow(ctx context.Context, sql string, args ...any) Row {
	return p.q.QueryRow(ctx, sql, args...)
}

// acquire takes a pooled connection, waiting at most acquireTimeout.
func (d *Postgres) acquire(ctx context.Context) (*pgxpool.Conn, error) {
	actx, cancel := context.WithTimeout(ctx, d.acquireTimeout)
	defer cancel()
	c, err := d.pool.Acquire(actx)
	if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("%w: %w", errAcquireTimeout, err)
	}
	return c, err
}

// Exec implements Driver.
func (d *Postgres) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	c, err := d.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Release()
	return pgq{c}.Exec(ctx, sql, args...)
}

// pooledRows releases the connection when the rows are closed.
type pooledRows struct {
	pgx.Rows
	c *pgxpool.Conn
}

// Close implements Rows, giving the connection back to the pool.
func (r *pooledRows) Close() {
	r.Rows.Close()
	if r.c != nil {
		r.c.Release()
		r.c = nil
	}
}

// Query implements Driver.
func (d *Postgres) Query(ctx context.Context, sql string, args ...any) (Rows, error) {
	c, err := d.acquire(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := c.Query(ctx, sql, args...)
	if err != nil {
		c.Release()
		return nil, err
	}
	return &pooledRows{Rows: rows, c: c}, nil
}

// pooledRow releases the connection once the row is scanned.
type pooledRow struct {
	row pgx.Row
	c   *pgxpool.Conn
	err error
}

// Scan implements Row, giving the connection back to the pool.
func (r pooledRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.c.Release()
	return r.row.Scan(dest...)
}

// QueryRow implements Driver.
func (d *Postgres) QueryRow(ctx context.Context, sql string, args ...any) Row {
	c, err := d.acquire(ctx)
	if err != nil {
		return pooledRow{err: err}
	}
	return pooledRow{row: c.QueryRow(ctx, sql, args...), c: c}
}

// Begin implements Driver.
func (d *Postgres) Begin(ctx context.Context, fn func(q Querier) error) error {
	c, err := d.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		// Roll back even when ctx is cancelled, but never wait long for it.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = tx.Rollback(rctx)
	}()
	if err := fn(pgq{tx}); err != nil {
		return err
	}
	// COMMIT runs detached from the request, like ExecAlone: a client that
	// hangs up now would otherwise turn a commit that lands into one whose
	// outcome nobody knows.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.swapTimeout)
	defer cancel()
	if err := tx.Commit(cctx); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			// The server answered: it refused the commit, nothing landed.
			return err
		}
		return fmt.Errorf("%w: %w", ErrCommitUnknown, err)
	}
	return nil
}

// ExecAlone implements Driver. Once the statement is on its way it runs
// detached from the request's cancellation (bounded by swapTimeout): a
// client hanging up mid-commit would otherwise turn a commit that lands
// into one whose outcome nobody knows. A statement that outlives the bound
// may still land, so it too is ErrCommitUnknown.
func (d *Postgres) ExecAlone(ctx context.Context, sql string, args ...any) (int64, error) {
	c, err := d.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Release()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.swapTimeout)
	defer cancel()
	tag, err := c.Exec(rctx, sql, args...)
	if err == nil {
		return tag.RowsAffected(), nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) || pgconn.SafeToRetry(err) {
		// The server refused the statement, or it was never sent: nothing
		// was applied.
		return 0, err
	}
	return 0, fmt.Errorf("%w: %w", ErrCommitUnknown, err)
}

// Classify implements Driver.
func (d *Postgres) Classify(err error) Class {
	if errors.Is(err, ErrCommitUnknown) {
		return ClassUnknown
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return ClassNoRows
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgClass(pgErr.Code)
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.Is(err, errAcquireTimeout), errors.As(err, &connectErr), errors.As(err, &netErr),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, pgconn.ErrConnClosed),
		pgconn.Timeout(err), pgconn.SafeToRetry(err):
		return ClassUnavailable
	}
	return ClassOther
}

// pgClass classifies a SQLSTATE the server sent.
func pgClass(code string) Class {
	switch code {
	case "23505":
		return ClassUnique
	case "23503":
		return ClassForeignKey
	case "40001", "40P01", "55P03":
		return ClassRetry
	case "57P01", "57P02", "57P03", // admin/crash shutdown, cannot connect now
		"57014", // statement timeout or cancel
		"25006": // read-only transaction: a standby after failover
		return ClassUnavailable
	case "22021", "22P05", "54000", "22001": // bad encoding, NUL, index row too big, too long
		return ClassInvalid
	}
	switch {
	case strings.HasPrefix(code, "08"), // connection exception
		strings.HasPrefix(code, "53"): // insufficient resources (too many connections, ...)
		return ClassUnavailable
	}
	return ClassOther
}

// Code implements Driver.
func (d *Postgres) Code(err error) string {
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr):
		return "SQLSTATE " + pgErr.Code
	case errors.Is(err, errAcquireTimeout):
		return "acquire timeout"
	case errors.Is(err, ErrCommitUnknown):
		return "commit interrupted"
	case d.Classify(err) == ClassUnavailable:
		return "network"
	}
	return ""
}

// Ping implements Driver.
func (d *Postgres) Ping(ctx context.Context) error { return d.pool.Ping(ctx) }

// dbTime reads clock_timestamp(), the server's clock when the statement
// runs (now() would be the start of a transaction).
func (d *Postgres) DBTime(ctx context.Context) (time.Time, error) {
	var us int64
	err := d.QueryRow(ctx, `SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)`).Scan(&us)
	return time.UnixMicro(us), err
}

// Close implements Driver.
func (d *Postgres) Close() { d.pool.Close() }

// River returns River's driver over the same pool, and how to find the
// pgx transaction behind a Querier that Begin handed out (ok is false for
// any other Querier), so that jobs are enqueued inside the caller's
// transaction.
func (d *Postgres) River() (riverdriver.Driver[pgx.Tx], func(Querier) (pgx.Tx, bool)) {
	return riverpgxv5.New(d.pool), func(q Querier) (pgx.Tx, bool) {
		p, ok := q.(pgq)
		if !ok {
			return nil, false
		}
		tx, ok := p.q.(pgx.Tx)
		return tx, ok
	}
}

// PoolStats reports the pool's acquired, idle and total connections, for
// metrics.
func (d *Postgres) PoolStats() (acquired, idle, total int32) {
	st := d.pool.Stat()
	return st.AcquiredConns(), st.IdleConns(), st.TotalConns()
}

// pgCopier is a pgx transaction or connection, which can COPY.
type pgCopier interface {
	CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error)
}

// CopyFrom loads rows into the columns cols of table with COPY when q is a
// Postgres Querier, and returns copied=true with the database's error.
// For any other Querier it does nothing and returns copied=false, so the
// caller inserts the rows itself.
func CopyFrom(ctx context.Context, q Querier, table string, cols []string, rows [][]any) (copied bool, err error) {
	if p, ok := q.(pgq); ok {
		if c, ok := p.q.(pgCopier); ok {
			_, err := c.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows))
			return true, err
		}
	}
	return false, nil
}

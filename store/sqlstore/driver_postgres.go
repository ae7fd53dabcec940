package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pgDriver talks to Postgres through a pgx v5 pool.
type pgDriver struct {
	pool *pgxpool.Pool
}

type pgQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

type pgq struct{ q pgQuerier }

func (p pgq) exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := p.q.Exec(ctx, sql, args...)
	return tag.RowsAffected(), err
}

func (p pgq) query(ctx context.Context, sql string, args ...any) (rowsIter, error) {
	rows, err := p.q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (p pgq) queryRow(ctx context.Context, sql string, args ...any) rowScanner {
	return p.q.QueryRow(ctx, sql, args...)
}

func (d *pgDriver) exec(ctx context.Context, sql string, args ...any) (int64, error) {
	return pgq{d.pool}.exec(ctx, sql, args...)
}

func (d *pgDriver) query(ctx context.Context, sql string, args ...any) (rowsIter, error) {
	return pgq{d.pool}.query(ctx, sql, args...)
}

func (d *pgDriver) queryRow(ctx context.Context, sql string, args ...any) rowScanner {
	return pgq{d.pool}.queryRow(ctx, sql, args...)
}

func (d *pgDriver) begin(ctx context.Context, fn func(q querier) error) error {
	tx, err := d.pool.Begin(ctx)
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
	if err := tx.Commit(ctx); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			// The server answered: it refused the commit, nothing landed.
			return err
		}
		return fmt.Errorf("%w: %w", errCommitUnknown, err)
	}
	return nil
}

func (d *pgDriver) classify(err error) errClass {
	if errors.Is(err, errCommitUnknown) {
		return classUnknown
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return classNoRows
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505":
			return classUnique
		case "23503":
			return classForeignKey
		case "40001", "40P01", "55P03":
			return classRetry
		}
	}
	return classOther
}

func (d *pgDriver) ping(ctx context.Context) error { return d.pool.Ping(ctx) }
func (d *pgDriver) close()                         { d.pool.Close() }

// PoolStats reports the pgx pool counters for metrics.
func (d *pgDriver) poolStats() *pgxpool.Stat { return d.pool.Stat() }

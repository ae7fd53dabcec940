package sqldb

import "context"

// Brief returns a Querier for short reads outside a transaction: index
// lookups of a row or of one listing, which take no lock a writer holds
// (SQLite's WAL lets readers run beside the writer) and run for as long as
// their rows take to read. On SQLite each statement first returns ctx's
// error when ctx is already done, and then runs detached from ctx's
// cancellation: with a cancellable context database/sql and the SQLite
// driver each start a goroutine per statement to watch it, which made a
// 100-name page take some 58 µs instead of 45 (serial), for statements
// with nothing worth cutting short. Other drivers are returned as they are
// (pgx watches a context without a goroutine).
func Brief(d Driver) Querier {
	if s, ok := d.(*SQLite); ok {
		return briefSQLite{s}
	}
	return d
}

// briefSQLite runs the SQLite driver's statements detached from
// cancellation once the context is checked (Brief).
type briefSQLite struct{ d *SQLite }

// Exec implements Querier.
func (b briefSQLite) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return b.d.Exec(context.WithoutCancel(ctx), q, args...)
}

// Query implements Querier.
func (b briefSQLite) Query(ctx context.Context, q string, args ...any) (Rows, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return b.d.Query(context.WithoutCancel(ctx), q, args...)
}

// QueryRow implements Querier.
func (b briefSQLite) QueryRow(ctx context.Context, q string, args ...any) Row {
	if err := ctx.Err(); err != nil {
		return errRow{err}
	}
	return b.d.QueryRow(context.WithoutCancel(ctx), q, args...)
}

// errRow is a Row whose Scan returns the error of a statement not run.
type errRow struct{ err error }

// Scan implements Row.
func (r errRow) Scan(...any) error { return r.err }

// Package sqldb is the database seam under store/sqlstore: it connects to
// Postgres (pgx v5) or an embedded SQLite file, applies the migrations,
// runs statements and transactions (re-running those that lost a
// serialization race), and sorts each driver's errors into the few classes
// the store acts on, turning them into store sentinels without the driver's
// text. Everything that depends on which database is underneath lives here;
// the catalog's SQL, which runs unchanged on both, stays in sqlstore.
package sqldb

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lakehold/catalog/store"
)

// Querier runs SQL with $N placeholders; both drivers accept that syntax.
type Querier interface {
	// Exec runs a statement and returns the rows it changed.
	Exec(ctx context.Context, sql string, args ...any) (int64, error)
	// Query runs a statement that returns rows; the caller closes them.
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
	// QueryRow runs a statement for one row; its error comes with Scan.
	QueryRow(ctx context.Context, sql string, args ...any) Row
}

// Rows is the result of Querier.Query, read as with database/sql.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Row is the result of Querier.QueryRow. Scan returns the query's error,
// or one Classify puts in ClassNoRows when there was no row.
type Row interface {
	Scan(dest ...any) error
}

// Class is what the store needs to know about a driver error.
type Class int

// The classes of driver errors.
const (
	ClassOther Class = iota
	ClassUnique
	ClassForeignKey
	ClassRetry       // serialization failure or deadlock: run the transaction again
	ClassNoRows      // the single-row query found nothing
	ClassUnknown     // the commit itself failed; it may have landed
	ClassUnavailable // the database cannot be reached or refuses work for now
	ClassInvalid     // the database cannot store a value (NUL, bad encoding, too long)
)

// Driver is the seam between the portable SQL in sqlstore and a database
// client. Drivers translate their own errors at this edge.
type Driver interface {
	Querier
	// Begin runs fn in one transaction, committing when fn returns nil.
	// It returns fn's error, or the database's; errors from the commit
	// itself that leave the outcome unknown are reported as
	// ErrCommitUnknown.
	Begin(ctx context.Context, fn func(q Querier) error) error
	// ExecAlone runs one statement as its own transaction (autocommit) and
	// returns the rows it changed. When the statement may have been
	// applied without its result reaching us, the error is ErrCommitUnknown,
	// as for a failed COMMIT.
	ExecAlone(ctx context.Context, sql string, args ...any) (int64, error)
	// Classify sorts an error this driver returned.
	Classify(err error) Class
	// Code is a short printable identification of a driver error (SQLSTATE,
	// SQLite result code, "network"), safe for logs: never the driver text.
	Code(err error) string
	// Ping returns an error when the database does not answer.
	Ping(ctx context.Context) error
	// DBTime reads the database server's clock; it fails as a query does.
	DBTime(ctx context.Context) (time.Time, error)
	// Close releases the connections.
	Close()
}

// ErrCommitUnknown marks a failure of COMMIT whose outcome nobody knows.
var ErrCommitUnknown = errors.New("commit failed mid-flight")

// ErrRetryTx is returned by a transaction body to ask InTx to run it again.
var ErrRetryTx = errors.New("retry transaction")

const maxTxAttempts = 5

// InTx runs fn in a transaction on d, re-running it after serialization
// failures, deadlocks and ErrRetryTx after a doubling, jittered delay (5 ms
// plus up to as much again, then 10, 20, 40), at most five times. It
// returns the last attempt's error, or the context's when cancelled while
// waiting. A database that is unavailable is
// not retried here: the request answers 503 and the client decides.
func InTx(ctx context.Context, d Driver, fn func(q Querier) error) error {
	delay := 5 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := d.Begin(ctx, fn)
		retry := errors.Is(err, ErrRetryTx) || d.Classify(err) == ClassRetry
		if err == nil || attempt == maxTxAttempts || !retry {
			return err
		}
		t := time.NewTimer(delay + time.Duration(rand.Int64N(int64(delay))))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay *= 2
	}
}

// Error is a driver failure as the rest of the program sees it: a store
// sentinel, what the store was doing, and the driver's error code. The
// driver's own text stays out of Error() because it can name hosts, users,
// SQL and values; the cause is still reachable through errors.Is/As (for
// context cancellation, and for tests).
type Error struct {
	sentinel error
	what     string
	code     string
	cause    error
}

// Error names the sentinel, the operation and the driver's code.
func (e *Error) Error() string {
	msg := e.sentinel.Error() + ": " + e.what
	if e.code != "" {
		msg += " (" + e.code + ")"
	}
	return msg
}

// Unwrap gives errors.Is/As both the sentinel and the driver's error.
func (e *Error) Unwrap() []error { return []error{e.sentinel, e.cause} }

// storeSentinels are the errors callers of the store branch on; an error
// that already carries one is passed through unchanged.
var storeSentinels = []error{
	store.ErrNotFound, store.ErrAlreadyExists, store.ErrNotEmpty, store.ErrConflict,
	store.ErrLocationOverlap, store.ErrInvalidPageToken, store.ErrOutcomeUnknown,
	store.ErrUnavailable, store.ErrInvalidValue, store.ErrDatabase, store.ErrNotHeld, store.ErrOwnNameFree,
}

func isStoreErr(err error) bool {
	for _, s := range storeSentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// Wrap turns any error leaving the store into one that carries a store
// sentinel: nil stays nil, errors that already carry one are returned
// unchanged, and driver errors become an *Error (or store.ErrNotFound for
// a missing row). what names the operation for logs.
func Wrap(d Driver, err error, what string) error {
	if err == nil || isStoreErr(err) {
		return err
	}
	e := &Error{sentinel: store.ErrDatabase, what: what, code: d.Code(err), cause: err}
	switch {
	case d.Classify(err) == ClassUnknown:
		// First: a COMMIT (or autocommit statement) cut short by a deadline
		// or a lost connection carries context.DeadlineExceeded too, and
		// may have landed. Calling it "unavailable" would tell the caller
		// nothing was written, and the commit engine would then delete the
		// files the landed pointer names.
		e.sentinel = store.ErrOutcomeUnknown
	case errors.Is(err, ErrRetryTx):
		// Lost the same race maxTxAttempts times: not now, nothing written.
		e.sentinel, e.code = store.ErrUnavailable, "contention"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		e.sentinel, e.code = store.ErrUnavailable, "cancelled"
	default:
		switch d.Classify(err) {
		case ClassNoRows:
			return fmt.Errorf("%w: %s", store.ErrNotFound, what)
		case ClassUnavailable, ClassRetry:
			e.sentinel = store.ErrUnavailable
		case ClassInvalid:
			e.sentinel = store.ErrInvalidValue
		}
	}
	return e
}

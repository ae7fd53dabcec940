package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lakehold/catalog/store"
)

// querier runs SQL with $N placeholders; both drivers accept that syntax.
type querier interface {
	exec(ctx context.Context, sql string, args ...any) (int64, error)
	query(ctx context.Context, sql string, args ...any) (rowsIter, error)
	queryRow(ctx context.Context, sql string, args ...any) rowScanner
}

type rowsIter interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

type rowScanner interface {
	Scan(dest ...any) error
}

// errClass is what the store needs to know about a driver error.
type errClass int

const (
	classOther errClass = iota
	classUnique
	classForeignKey
	classRetry       // serialization failure or deadlock: run the transaction again
	classNoRows      // the single-row query found nothing
	classUnknown     // the commit itself failed; it may have landed
	classUnavailable // the database cannot be reached or refuses work for now
	classInvalid     // the database cannot store a value (NUL, bad encoding, too long)
)

// driver is the seam between the portable SQL in this package and a database
// client. Drivers translate their own errors at this edge.
type driver interface {
	querier
	// begin runs fn in one transaction. Errors from the commit itself that
	// leave the outcome unknown are reported as errCommitUnknown.
	begin(ctx context.Context, fn func(q querier) error) error
	// execAlone runs one statement as its own transaction (autocommit) and
	// returns the rows it changed. When the statement may have been
	// applied without its result reaching us, the error is errCommitUnknown,
	// as for a failed COMMIT.
	execAlone(ctx context.Context, sql string, args ...any) (int64, error)
	classify(err error) errClass
	// code is a short printable identification of a driver error (SQLSTATE,
	// SQLite result code, "network"), safe for logs: never the driver text.
	code(err error) string
	ping(ctx context.Context) error
	// dbTime reads the database server's clock.
	dbTime(ctx context.Context) (time.Time, error)
	// newQueue returns River over the same connections.
	newQueue() (jobQueue, error)
	close()
}

// errCommitUnknown marks a failure of COMMIT whose outcome nobody knows.
var errCommitUnknown = errors.New("commit failed mid-flight")

const maxTxAttempts = 5

// inTx runs fn in a transaction, re-running it after serialization failures
// and deadlocks with a capped, jittered, doubling delay. A database that is
// unavailable is not retried here: the request answers 503 and the client
// decides.
func (s *Store) inTx(ctx context.Context, fn func(q querier) error) error {
	return s.inTxUnfenced(ctx, fenced(ctx, s.withEvents(ctx, s.withJobs(ctx, fn))))
}

// inTxUnfenced is inTx for a transaction that changes no catalog state
// (the base-file index), which must not mark the request's
// Idempotency-Key as Mutated.
func (s *Store) inTxUnfenced(ctx context.Context, fn func(q querier) error) error {
	delay := 5 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := s.db.begin(ctx, fn)
		retry := errors.Is(err, errRetryTx) || s.db.classify(err) == classRetry
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

// dbError is a driver failure as the rest of the program sees it: a store
// sentinel, what the store was doing, and the driver's error code. The
// driver's own text stays out of Error() because it can name hosts, users,
// SQL and values; the cause is still reachable through errors.Is/As (for
// context cancellation, and for tests).
type dbError struct {
	sentinel error
	what     string
	code     string
	cause    error
}

func (e *dbError) Error() string {
	msg := e.sentinel.Error() + ": " + e.what
	if e.code != "" {
		msg += " (" + e.code + ")"
	}
	return msg
}

func (e *dbError) Unwrap() []error { return []error{e.sentinel, e.cause} }

// storeSentinels are the errors callers of the store branch on; an error
// that already carries one is passed through unchanged.
var storeSentinels = []error{
	store.ErrNotFound, store.ErrAlreadyExists, store.ErrNotEmpty, store.ErrConflict,
	store.ErrLocationOverlap, store.ErrInvalidPageToken, store.ErrOutcomeUnknown,
	store.ErrUnavailable, store.ErrInvalidValue, store.ErrDatabase, store.ErrNotHeld,
}

func isStoreErr(err error) bool {
	for _, s := range storeSentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// wrap turns any error leaving the store into one that carries a store
// sentinel; errors that already do are returned unchanged. what names the
// operation for logs.
func (s *Store) wrap(err error, what string) error {
	if err == nil || isStoreErr(err) {
		return err
	}
	e := &dbError{sentinel: store.ErrDatabase, what: what, code: s.db.code(err), cause: err}
	switch {
	case s.db.classify(err) == classUnknown:
		// First: a COMMIT (or autocommit statement) cut short by a deadline
		// or a lost connection carries context.DeadlineExceeded too, and
		// may have landed. Calling it "unavailable" would tell the caller
		// nothing was written, and the commit engine would then delete the
		// files the landed pointer names.
		e.sentinel = store.ErrOutcomeUnknown
	case errors.Is(err, errRetryTx):
		// Lost the same race maxTxAttempts times: not now, nothing written.
		e.sentinel, e.code = store.ErrUnavailable, "contention"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		e.sentinel, e.code = store.ErrUnavailable, "cancelled"
	default:
		switch s.db.classify(err) {
		case classNoRows:
			return fmt.Errorf("%w: %s", store.ErrNotFound, what)
		case classUnavailable, classRetry:
			e.sentinel = store.ErrUnavailable
		case classInvalid:
			e.sentinel = store.ErrInvalidValue
		}
	}
	return e
}

// fenced makes fn first check, in its own transaction, that the request's
// Idempotency-Key (store.WithIdempotencyFence) is still held, and mark it
// Mutated: the mark commits if and only if the change does. Every catalog
// change runs through inTx, so every change is fenced.
func fenced(ctx context.Context, fn func(q querier) error) func(q querier) error {
	key, owner, ok := store.IdempotencyFence(ctx)
	if !ok {
		return fn
	}
	return func(q querier) error {
		n, err := q.exec(ctx, `UPDATE idempotency_keys SET mutated = 1 WHERE key = $1 AND owner = $2 AND done = 0`, key, owner)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: %s", store.ErrNotHeld, key)
		}
		return fn(q)
	}
}

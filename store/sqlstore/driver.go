package sqlstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
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
	classRetry   // serialization failure, deadlock, busy database: run the transaction again
	classNoRows  // the single-row query found nothing
	classUnknown // the commit itself failed; it may have landed
)

// driver is the seam between the portable SQL in this package and a database
// client. Drivers translate their own errors at this edge.
type driver interface {
	querier
	// begin runs fn in one transaction. Errors from the commit itself that
	// leave the outcome unknown are reported as errCommitUnknown.
	begin(ctx context.Context, fn func(q querier) error) error
	classify(err error) errClass
	ping(ctx context.Context) error
	close()
}

// errCommitUnknown marks a failure of COMMIT whose outcome nobody knows.
var errCommitUnknown = errors.New("commit failed mid-flight")

const maxTxAttempts = 5

// inTx runs fn in a transaction, re-running it after serialization failures,
// deadlocks and busy errors with a capped, jittered, doubling delay.
func (s *Store) inTx(ctx context.Context, fn func(q querier) error) error {
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

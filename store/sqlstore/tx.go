package sqlstore

import (
	"context"
	"fmt"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

// inTx runs fn in a transaction with the database's retries
// (sqldb.InTx), fenced by the request's Idempotency-Key and carrying the
// change events and jobs fn records.
func (s *Store) inTx(ctx context.Context, fn func(q sqldb.Querier) error) error {
	return s.inTxUnfenced(ctx, fenced(ctx, s.withEvents(ctx, s.withJobs(ctx, fn))))
}

// inTxUnfenced is inTx for a transaction that changes no catalog state
// (the base-file index), which must not mark the request's
// Idempotency-Key as Mutated.
func (s *Store) inTxUnfenced(ctx context.Context, fn func(q sqldb.Querier) error) error {
	return sqldb.InTx(ctx, s.db, fn)
}

// wrap turns any error leaving the store into one that carries a store
// sentinel (sqldb.Wrap); what names the operation for logs.
func (s *Store) wrap(err error, what string) error { return sqldb.Wrap(s.db, err, what) }

// reads runs the hot short reads (a table's row, a namespace's, one page
// of a listing) outside a transaction; see sqldb.Brief for what it saves
// and why it is safe for these.
func (s *Store) reads() sqldb.Querier { return sqldb.Brief(s.db) }

// fenced makes fn first check, in its own transaction, that the request's
// Idempotency-Key (store.WithIdempotencyFence) is still held, and mark it
// Mutated: the mark commits if and only if the change does. Every catalog
// change runs through inTx, so every change is fenced.
func fenced(ctx context.Context, fn func(q sqldb.Querier) error) func(q sqldb.Querier) error {
	key, owner, ok := store.IdempotencyFence(ctx)
	if !ok {
		return fn
	}
	return func(q sqldb.Querier) error {
		n, err := q.Exec(ctx, `UPDATE idempotency_keys SET mutated = 1 WHERE key = $1 AND owner = $2 AND done = 0`, key, owner)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: %s", store.ErrNotHeld, key)
		}
		return fn(q)
	}
}

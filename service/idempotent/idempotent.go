// Package idempotent makes retried mutating requests safe: a request that
// carries an Idempotency-Key claims the key in the catalog database, runs
// fenced by it, and stores its final response, which a retry with the same
// key (and the same request) gets replayed instead of running again. It
// knows the store and nothing of HTTP; the server's middleware calls it.
package idempotent

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/store"
)

// Keys holds Idempotency-Keys in the catalog database: it claims a key for
// the request that runs, keeps the claim alive while it runs, and replays
// the stored outcome to a retry.
type Keys struct {
	store store.Store
	now   func() time.Time // the database's clock (lease expiry)
	log   *slog.Logger
}

// New returns Keys over st; now is the clock the store's leases are dated
// by (the database's).
func New(st store.Store, now func() time.Time, log *slog.Logger) *Keys {
	return &Keys{store: st, now: now, log: log}
}

// Request is a mutating request that carries an Idempotency-Key.
type Request struct {
	Key string
	// Operation is the method and escaped path (with query), for example
	// "POST /v1/wh/namespaces"; it appears in the 422 message.
	Operation string
	// Body is the request body; with Operation it makes the fingerprint
	// that a reused key must match.
	Body []byte
	// Lifetime is how long outcomes are kept.
	Lifetime time.Duration
	// Lease is how long a claim holds without renewal (default 5s); the
	// holder renews it every Lease/3 while the request runs.
	Lease time.Duration
	// MaxWait bounds how long a duplicate waits for a running first request
	// (default 30s) before it answers 503.
	MaxWait time.Duration
}

// Outcome is a final response stored for replay.
type Outcome struct {
	Status  int
	Headers map[string]string
	Body    []byte
}

// Claim is a key held by the running request. Exactly one of Finish or
// Abandon must be called; both stop the lease renewal.
type Claim struct {
	st    store.Store
	key   string
	owner string
	stop  func()
}

// fingerprint hashes everything that makes two requests the same request.
func fingerprint(operation string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(operation))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// scopedKey keeps each principal's Idempotency-Keys apart, so that a
// stored response is replayed only to the principal whose request made it.
// The anonymous principal (authentication off) keeps the bare key, which
// leaves keys stored before authentication existed valid.
func scopedKey(ctx context.Context, key string) string {
	p := identity.From(ctx)
	if p.Source == identity.SourceAnonymous {
		return key
	}
	h := sha256.Sum256([]byte(p.String()))
	return hex.EncodeToString(h[:8]) + ":" + key
}

func newOwner() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Begin claims req.Key. It returns the stored outcome to replay
// when the key already finished, or a claim when the caller must run the
// request (under claim.Context) and then Finish or Abandon it. A duplicate
// of a request that is still running waits for it; when the running holder
// died, its lease runs out within req.Lease and the duplicate takes over.
// Errors: 422 Unprocessable when the key was used for another operation or
// another body; 503 Unavailable when the first request still runs after
// req.MaxWait or the catalog database is unavailable; 500
// CommitStateUnknown when the first request changed the catalog and then
// died without a response (running it again would repeat the change).
func (k *Keys) Begin(ctx context.Context, req Request) (*Outcome, *Claim, error) {
	if req.Lease <= 0 {
		req.Lease = 5 * time.Second
	}
	if req.MaxWait <= 0 {
		req.MaxWait = 30 * time.Second
	}
	c := store.IdempotencyClaim{Key: scopedKey(ctx, req.Key), Operation: req.Operation, Fingerprint: fingerprint(req.Operation, req.Body),
		Owner: newOwner(), Lease: req.Lease, TTL: req.Lifetime}
	deadline := time.Now().Add(req.MaxWait)
	for {
		rec, err := k.store.IdempotencyBegin(ctx, c)
		if err != nil {
			return nil, nil, storefault.Of(err, "")
		}
		if rec == nil {
			return nil, k.hold(c), nil
		}
		if err := sameRequest(rec, c); err != nil {
			return nil, nil, err
		}
		if rec.Done {
			return &Outcome{Status: rec.Status, Headers: rec.Headers, Body: rec.Body}, nil, nil
		}
		if rec.Mutated && k.now().After(rec.LeaseUntil) {
			return nil, nil, fault.New(fault.CommitStateUnknown, "The first request with this Idempotency-Key changed the catalog but its response was lost; reload to see the outcome")
		}
		if time.Now().After(deadline) {
			return nil, nil, fault.New(fault.Unavailable, "A request with this Idempotency-Key is still in progress; retry later")
		}
		// Poll: the holder finishes, abandons (we then run it), or dies
		// (its lease runs out and we take over).
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, fault.Wrap(fault.Unavailable, ctx.Err(), "Request cancelled or timed out")
		case <-t.C:
		}
	}
}

// sameRequest answers 422 when a key comes back with another request. A
// record without a fingerprint predates them: only its operation counts.
func sameRequest(rec *store.IdempotencyRecord, c store.IdempotencyClaim) error {
	if rec.Operation != c.Operation {
		return fault.New(fault.Unprocessable, "Idempotency-Key was already used for another operation: %s", rec.Operation)
	}
	if rec.Fingerprint != "" && rec.Fingerprint != c.Fingerprint {
		return fault.New(fault.Unprocessable, "Idempotency-Key was already used with a different request body for %s", rec.Operation)
	}
	return nil
}

// hold starts renewing the lease of a claimed key every Lease/3 until the
// claim is finished or abandoned. A renewal that finds the key gone (the
// lease ran out while the database was slow) is logged; the request runs
// on, and its outcome is then not stored.
func (k *Keys) hold(c store.IdempotencyClaim) *Claim {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(max(c.Lease/3, time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			rctx, rcancel := context.WithTimeout(ctx, c.Lease)
			err := k.store.IdempotencyRenew(rctx, c.Key, c.Owner, c.Lease)
			rcancel()
			if errors.Is(err, store.ErrNotHeld) {
				k.log.Warn("idempotency key lease lost while the request ran", "error", err)
				return
			}
		}
	}()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done }) }
	return &Claim{st: k.store, key: c.Key, owner: c.Owner, stop: stop}
}

// Finish stores the final outcome for replay. It returns an error when the
// outcome could not be stored (the key is then released, or left to its
// lease); the response itself is unaffected.
func (c *Claim) Finish(ctx context.Context, out Outcome) error {
	c.stop()
	err := c.st.IdempotencyFinish(ctx, &store.IdempotencyRecord{Key: c.key, Owner: c.owner, Status: out.Status,
		Headers: out.Headers, Body: out.Body})
	if err != nil && !errors.Is(err, store.ErrNotHeld) {
		_ = c.st.IdempotencyAbandon(ctx, c.key, c.owner)
	}
	return err
}

// Context returns ctx fenced by the held key: every catalog change made
// under it checks, in its own transaction, that the key is still held
// (store.WithIdempotencyFence), so a request that lost its key to a retry
// changes nothing.
func (c *Claim) Context(ctx context.Context) context.Context {
	return store.WithIdempotencyFence(ctx, c.key, c.owner)
}

// Abandon releases the key without an outcome (after a 5xx or a panic), so
// that a retry runs the request again.
func (c *Claim) Abandon(ctx context.Context) {
	c.stop()
	_ = c.st.IdempotencyAbandon(ctx, c.key, c.owner)
}

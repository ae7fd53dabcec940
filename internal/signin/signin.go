// Package signin bounds the sign-ins of the token endpoint
// (POST /v1/oauth/tokens, client credentials): how many client secrets are
// verified at once (each argon2id verification holds 19 MiB for about
// 20-40 ms), and how often a client id or a source address may fail
// before it is locked out for a while, with the lockout doubling on each
// further failure up to a cap.
//
// All state is per replica, in memory: replicas share the database but not
// this, so N replicas admit N times as many verifications and failures. It
// bounds abuse (memory, CPU, the guessing rate); it is not a correctness
// mechanism, and a restart forgets it.
package signin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"golang.org/x/sync/semaphore"
)

// Defaults of Config.
const (
	DefaultWait              = time.Second
	DefaultMaxFailures       = 5
	DefaultSourceMaxFailures = 20
	DefaultWindow            = 15 * time.Minute
	DefaultLockout           = time.Second
	DefaultMaxLockout        = 15 * time.Minute
	DefaultMaxTracked        = 10000
)

// DefaultConcurrency is the default number of secrets verified at once:
// 2×GOMAXPROCS, at least 4 and at most 16 (16 × 19 MiB = 304 MiB). One
// verification keeps one core busy, so more would not sign in faster.
func DefaultConcurrency() int {
	return min(max(2*runtime.GOMAXPROCS(0), 4), 16)
}

// Config configures a Gate. Zero values take the defaults.
type Config struct {
	// Concurrency is how many sign-ins may verify a secret at once on this
	// replica (default DefaultConcurrency).
	Concurrency int
	// Wait is how long a sign-in waits for a verification slot before it is
	// refused as Busy (default 1s).
	Wait time.Duration
	// MaxFailures is how many failed sign-ins of one client id (known or
	// not) lock it out (default 5; negative: never).
	MaxFailures int
	// SourceMaxFailures is how many failed sign-ins from one source address
	// (an IPv4 address or an IPv6 /64) lock it out, whatever client ids
	// they named (default 20; negative: never). Behind a proxy every client
	// shares the proxy's address.
	SourceMaxFailures int
	// Window is how long failures are remembered: a client id or address
	// with no failure and no lockout for this long starts again from zero
	// (default 15m).
	Window time.Duration
	// Lockout is the first lockout, at the MaxFailures-th failure; each
	// further failure doubles it, up to MaxLockout (defaults 1s and 15m).
	Lockout    time.Duration
	MaxLockout time.Duration
	// MaxTracked bounds the client ids and, separately, the addresses
	// remembered (default 10000 each, least recently failed dropped first).
	MaxTracked int
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency()
	}
	if c.Wait <= 0 {
		c.Wait = DefaultWait
	}
	if c.MaxFailures == 0 {
		c.MaxFailures = DefaultMaxFailures
	}
	if c.SourceMaxFailures == 0 {
		c.SourceMaxFailures = DefaultSourceMaxFailures
	}
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.Lockout <= 0 {
		c.Lockout = DefaultLockout
	}
	if c.MaxLockout <= 0 {
		c.MaxLockout = DefaultMaxLockout
	}
	if c.MaxLockout < c.Lockout {
		c.MaxLockout = c.Lockout
	}
	if c.MaxTracked <= 0 {
		c.MaxTracked = DefaultMaxTracked
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Reason says why a sign-in was refused.
type Reason string

const (
	// LockedOut: the client id or the source address failed too often.
	LockedOut Reason = "locked_out"
	// Busy: no verification slot freed up within Config.Wait.
	Busy Reason = "busy"
)

// Refused is the error of Gate.Enter.
type Refused struct {
	Reason Reason
	// RetryAfter is when a retry may succeed: the rest of the lockout, or
	// Config.Wait when busy.
	RetryAfter time.Duration
}

func (r *Refused) Error() string {
	return fmt.Sprintf("sign-in refused: %s, retry after %s", r.Reason, r.RetryAfter)
}

// Outcome is what a verification admitted by Enter found.
type Outcome int

const (
	// Aborted: nothing was decided (the store failed); nothing is recorded.
	Aborted Outcome = iota
	// Failed: a wrong secret or an unknown client id.
	Failed
	// Succeeded: the client id's failures are forgotten (not the address's:
	// one good credential must not reset the count of guesses at others).
	Succeeded
)

// Gate admits sign-ins. It is safe for concurrent use.
type Gate struct {
	cfg Config
	sem *semaphore.Weighted

	mu      sync.Mutex
	clients *simplelru.LRU[string, *record]
	sources *simplelru.LRU[string, *record]
	busy    int // slots held, for InFlight
}

// record is the failure history of one client id or address.
type record struct {
	failures int
	last     time.Time // of the last failure
	until    time.Time // end of the lockout; zero or past when none
}

// New returns a gate configured by c.
func New(c Config) *Gate {
	c = c.withDefaults()
	clients, _ := simplelru.NewLRU[string, *record](c.MaxTracked, nil)
	sources, _ := simplelru.NewLRU[string, *record](c.MaxTracked, nil)
	return &Gate{cfg: c, sem: semaphore.NewWeighted(int64(c.Concurrency)), clients: clients, sources: sources}
}

// Config returns the configuration in effect, defaults filled in.
func (g *Gate) Config() Config { return g.cfg }

// Enter admits one sign-in of clientID from source (SourceOf). It refuses
// at once, as LockedOut, when either is locked out; otherwise it waits up
// to Config.Wait (or until ctx ends) for a verification slot, refusing as
// Busy when none frees up, and looks at the lockouts again, since another
// attempt may have set one while this one waited. Slots are handed out in
// arrival order. The error is always a *Refused. When admitted, the caller
// verifies the secret and calls done exactly once with the outcome; done
// releases the slot and returns the lockout the outcome started (zero when
// none).
func (g *Gate) Enter(ctx context.Context, clientID, source string) (done func(Outcome) time.Duration, err error) {
	ck := clientKey(clientID)
	if d := g.lockedFor(ck, source); d > 0 {
		return nil, &Refused{Reason: LockedOut, RetryAfter: d}
	}
	wctx, cancel := context.WithTimeout(ctx, g.cfg.Wait)
	err = g.sem.Acquire(wctx, 1)
	cancel()
	if err != nil {
		return nil, &Refused{Reason: Busy, RetryAfter: g.cfg.Wait}
	}
	if d := g.lockedFor(ck, source); d > 0 {
		g.sem.Release(1)
		return nil, &Refused{Reason: LockedOut, RetryAfter: d}
	}
	g.mu.Lock()
	g.busy++
	g.mu.Unlock()
	var once sync.Once
	return func(o Outcome) (lock time.Duration) {
		once.Do(func() {
			lock = g.record(ck, source, o)
			g.mu.Lock()
			g.busy--
			g.mu.Unlock()
			g.sem.Release(1)
		})
		return lock
	}, nil
}

// InFlight is how many admitted sign-ins have not called done yet.
func (g *Gate) InFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.busy
}

// lockedFor is how much longer the client key or the source is locked out.
func (g *Gate) lockedFor(ck, source string) time.Duration {
	now := g.cfg.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	var d time.Duration
	if r, ok := g.clients.Peek(ck); ok {
		d = max(d, r.until.Sub(now))
	}
	if r, ok := g.sources.Peek(source); ok {
		d = max(d, r.until.Sub(now))
	}
	return d
}

// record notes the outcome of an admitted sign-in.
func (g *Gate) record(ck, source string, o Outcome) time.Duration {
	now := g.cfg.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	switch o {
	case Succeeded:
		g.clients.Remove(ck)
		return 0
	case Failed:
		return max(g.fail(g.clients, ck, g.cfg.MaxFailures, now), g.fail(g.sources, source, g.cfg.SourceMaxFailures, now))
	}
	return 0
}

// fail counts a failure of key; at limit failures and beyond it locks the
// key out for Lockout × 2^(failures-limit), at most MaxLockout, and
// returns that lockout.
func (g *Gate) fail(m *simplelru.LRU[string, *record], key string, limit int, now time.Time) time.Duration {
	if limit < 0 {
		return 0
	}
	r, ok := m.Get(key)
	if !ok {
		r = &record{}
		m.Add(key, r)
	}
	if quiet := laterOf(r.last, r.until); now.Sub(quiet) > g.cfg.Window {
		*r = record{}
	}
	r.failures++
	r.last = now
	if r.failures < limit {
		return 0
	}
	d := g.cfg.Lockout
	for i := limit; i < r.failures && d < g.cfg.MaxLockout; i++ {
		d *= 2
	}
	d = min(d, g.cfg.MaxLockout)
	r.until = now.Add(d)
	return d
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// maxKeyBytes bounds the client ids kept verbatim; longer ones (never
// valid, client ids are 19 characters) are kept as their SHA-256.
const maxKeyBytes = 64

func clientKey(id string) string {
	if len(id) <= maxKeyBytes {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// SourceOf names the source of a request for the per-address limit, from
// its remote address (host:port, as net/http's Request.RemoteAddr): the
// IPv4 address, or the /64 of an IPv6 address (one subscriber commonly
// holds a whole /64, so single IPv6 addresses would not bound anything).
// Anything unparsable is kept as is, bounded in length.
func SourceOf(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return clientKey(remoteAddr)
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}

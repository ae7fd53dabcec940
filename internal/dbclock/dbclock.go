// Package dbclock gives a replica the wall clock of the catalog database.
//
// Replicas share one database but each has its own clock. Every time that
// is compared across replicas (an Idempotency-Key lease written by one and
// judged expired by another, a snapshot timestamp one replica stamps after
// another's, the cut-off of snapshot expiry) is read from a Clock, so that
// a replica whose own clock is minutes off still agrees with the others:
// the Clock is the local clock plus an offset measured against the
// database's clock (the sample with the shortest round trip of a few
// queries, trusted to half that round trip), refreshed in the background.
// It is a cache of a measurement, not a lock: a stale offset only makes a
// reading as wrong as the local clock's drift since the last measurement.
package dbclock

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// Defaults of Config.
const (
	DefaultRefresh = 30 * time.Second
	DefaultMaxRTT  = time.Second
	samples        = 3
	measureTimeout = 5 * time.Second
)

// Config tunes a Clock. Zero fields take the defaults.
type Config struct {
	// Local is this process's clock; nil: time.Now. Tests set it to run a
	// replica whose clock is off.
	Local func() time.Time
	// Refresh is how old a measurement may get before Now starts a new
	// one in the background.
	Refresh time.Duration
	// MaxRTT is the longest round trip a sample may take to count: a slow
	// answer says little about when the database read its clock.
	MaxRTT time.Duration
}

// Clock is the database's clock as this process estimates it. The zero
// value is not usable; see New.
type Clock struct {
	local   func() time.Time
	read    func(context.Context) (time.Time, error)
	refresh time.Duration
	maxRTT  time.Duration

	offset   atomic.Int64 // nanoseconds: database minus local
	measured atomic.Int64 // local UnixNano of the last good measurement; 0: none
	tried    atomic.Int64 // local UnixNano when the last background measurement began
	busy     atomic.Bool  // a background measurement runs
}

// retryAfter spaces background attempts while the database does not answer.
const retryAfter = time.Second

// New returns a Clock that reads the database's clock with read (one
// query; its answer is the database's time when it ran the query). Until a
// measurement succeeds the offset is zero: the Clock is the local clock.
func New(read func(context.Context) (time.Time, error), cfg Config) *Clock {
	c := &Clock{local: cfg.Local, read: read, refresh: cfg.Refresh, maxRTT: cfg.MaxRTT}
	if c.local == nil {
		c.local = time.Now
	}
	if c.refresh <= 0 {
		c.refresh = DefaultRefresh
	}
	if c.maxRTT <= 0 {
		c.maxRTT = DefaultMaxRTT
	}
	return c
}

// Now returns the database's current time as estimated here. When the last
// measurement is older than the refresh interval (or none succeeded), it
// starts one in the background (at most one at a time) and answers with
// the offset it has.
func (c *Clock) Now() time.Time {
	now := c.local()
	if last := c.measured.Load(); last == 0 || now.Sub(time.Unix(0, last)) > c.refresh || now.UnixNano() < last {
		c.refreshAsync(now)
	}
	return now.Add(time.Duration(c.offset.Load()))
}

// Offset returns the measured offset of the database's clock from the
// local one (positive: the database is ahead) and whether any measurement
// has succeeded yet.
func (c *Clock) Offset() (time.Duration, bool) {
	return time.Duration(c.offset.Load()), c.measured.Load() != 0
}

// ErrNoSample is returned by Measure when no query answered within the
// round-trip bound.
var ErrNoSample = errors.New("dbclock: no clock sample within the round-trip bound")

// Measure takes a few samples now and keeps the one with the shortest
// round trip. It returns the read error (or ErrNoSample) when none counts;
// the previous offset then stays.
func (c *Clock) Measure(ctx context.Context) error {
	best, bestRTT, found := time.Duration(0), time.Duration(0), false
	var lastErr error
	for range samples {
		before := c.local()
		db, err := c.read(ctx)
		after := c.local()
		if err != nil {
			lastErr = err
			continue
		}
		rtt := after.Sub(before)
		if rtt < 0 || rtt > c.maxRTT || (found && rtt >= bestRTT) {
			continue
		}
		best, bestRTT, found = db.Sub(before.Add(rtt/2)), rtt, true
	}
	if !found {
		if lastErr != nil {
			return lastErr
		}
		return ErrNoSample
	}
	c.offset.Store(int64(best))
	c.measured.Store(c.local().UnixNano())
	return nil
}

// refreshAsync starts a background measurement unless one runs or one
// began less than retryAfter ago.
func (c *Clock) refreshAsync(now time.Time) {
	if t := c.tried.Load(); t != 0 && now.UnixNano() >= t && now.Sub(time.Unix(0, t)) < retryAfter {
		return
	}
	if !c.busy.CompareAndSwap(false, true) {
		return
	}
	c.tried.Store(now.UnixNano())
	go func() {
		defer c.busy.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), measureTimeout)
		defer cancel()
		_ = c.Measure(ctx) // on failure the next Now tries again
	}()
}

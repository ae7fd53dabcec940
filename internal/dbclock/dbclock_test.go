package dbclock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeWorld is a true time that a local clock (off by skew) and a database
// (whose answers take rtt, read half-way) observe.
type fakeWorld struct {
	mu    sync.Mutex
	now   time.Time
	skew  time.Duration   // local minus true
	rtts  []time.Duration // round trip of each query, in turn; the last repeats
	calls int
	err   error
}

func (w *fakeWorld) local() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now.Add(w.skew)
}

func (w *fakeWorld) read(context.Context) (time.Time, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rtt := w.rtts[min(w.calls, len(w.rtts)-1)]
	w.calls++
	if w.err != nil {
		return time.Time{}, w.err
	}
	w.now = w.now.Add(rtt / 2)
	at := w.now
	w.now = w.now.Add(rtt - rtt/2)
	return at, nil
}

func (w *fakeWorld) advance(d time.Duration) {
	w.mu.Lock()
	w.now = w.now.Add(d)
	w.mu.Unlock()
}

func TestMeasure(t *testing.T) {
	start := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		skew     time.Duration
		rtts     []time.Duration
		maxRTT   time.Duration
		wantErr  error
		tolerate time.Duration
	}{
		{name: "ten minutes ahead", skew: 10 * time.Minute, rtts: []time.Duration{time.Millisecond}, tolerate: time.Microsecond},
		{name: "ten minutes behind", skew: -10 * time.Minute, rtts: []time.Duration{2 * time.Millisecond}, tolerate: time.Microsecond},
		{name: "in step", rtts: []time.Duration{time.Millisecond}, tolerate: time.Microsecond},
		// The shortest of the samples wins: the slow ones count only if
		// nothing better came.
		{name: "shortest sample kept", skew: time.Hour, rtts: []time.Duration{400 * time.Millisecond, 2 * time.Millisecond, 300 * time.Millisecond}, tolerate: time.Microsecond},
		{name: "every sample too slow", skew: time.Hour, rtts: []time.Duration{3 * time.Second}, wantErr: ErrNoSample},
		{name: "slow but within the bound", skew: time.Hour, rtts: []time.Duration{3 * time.Second}, maxRTT: 5 * time.Second, tolerate: time.Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &fakeWorld{now: start, skew: tc.skew, rtts: tc.rtts}
			c := New(w.read, Config{Local: w.local, MaxRTT: tc.maxRTT})
			err := c.Measure(context.Background())
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Measure = %v, want %v", err, tc.wantErr)
			}
			off, ok := c.Offset()
			if tc.wantErr != nil {
				if ok || off != 0 {
					t.Fatalf("offset %v (measured %v) after a failed measurement", off, ok)
				}
				return
			}
			if !ok {
				t.Fatal("no measurement recorded")
			}
			if d := off + tc.skew; d > tc.tolerate || d < -tc.tolerate {
				t.Fatalf("offset %v, want %v within %v", off, -tc.skew, tc.tolerate)
			}
			w.mu.Lock()
			truth := w.now
			w.mu.Unlock()
			if got := c.Now(); got.Sub(truth).Abs() > tc.tolerate {
				t.Fatalf("Now = %v, true time %v", got, truth)
			}
		})
	}
}

func TestFailedMeasurementKeepsOffset(t *testing.T) {
	w := &fakeWorld{now: time.Unix(1_800_000_000, 0), skew: 5 * time.Minute, rtts: []time.Duration{time.Millisecond}}
	c := New(w.read, Config{Local: w.local})
	if err := c.Measure(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.err = errors.New("connection refused")
	if err := c.Measure(context.Background()); err == nil || err.Error() != "connection refused" {
		t.Fatalf("Measure with the database away = %v", err)
	}
	if off, ok := c.Offset(); !ok || (off+5*time.Minute).Abs() > time.Microsecond {
		t.Fatalf("offset %v (measured %v) changed by a failed measurement", off, ok)
	}
}

// TestNowRefreshesInBackground: the first Now answers from the local clock
// and starts a measurement; once it lands Now follows the database, and a
// measurement older than Refresh is replaced.
func TestNowRefreshesInBackground(t *testing.T) {
	w := &fakeWorld{now: time.Unix(1_800_000_000, 0), skew: -10 * time.Minute, rtts: []time.Duration{time.Millisecond}}
	c := New(w.read, Config{Local: w.local, Refresh: time.Minute})
	if got := c.Now(); got.Sub(w.local()).Abs() > time.Millisecond {
		t.Fatalf("Now before any measurement = %v, want the local clock %v", got, w.local())
	}
	waitMeasured(t, c)
	w.mu.Lock()
	truth := w.now
	w.mu.Unlock()
	if got := c.Now(); got.Sub(truth).Abs() > time.Millisecond {
		t.Fatalf("Now after the measurement = %v, true %v", got, truth)
	}
	// The local clock is stepped (NTP fixed it); the old offset is now
	// wrong until the next refresh, which a stale measurement triggers.
	w.mu.Lock()
	w.skew = 0
	w.mu.Unlock()
	w.advance(2 * time.Minute)
	calls := w.callCount()
	c.Now()
	waitCalls(t, w, calls+samples)
	waitIdle(t, c)
	w.mu.Lock()
	truth = w.now
	w.mu.Unlock()
	if got := c.Now(); got.Sub(truth).Abs() > time.Millisecond {
		t.Fatalf("Now after the refresh = %v, true %v", got, truth)
	}
}

// TestBackgroundRetriesAreSpaced: while the database is away, Now does not
// start a measurement on every call.
func TestBackgroundRetriesAreSpaced(t *testing.T) {
	w := &fakeWorld{now: time.Unix(1_800_000_000, 0), rtts: []time.Duration{time.Millisecond}, err: errors.New("down")}
	c := New(w.read, Config{Local: w.local})
	for range 100 {
		c.Now()
		waitIdle(t, c)
	}
	if calls := w.callCount(); calls != samples {
		t.Fatalf("%d database reads for 100 readings within %v, want one measurement (%d)", calls, retryAfter, samples)
	}
	w.advance(retryAfter + time.Millisecond)
	c.Now()
	waitIdle(t, c)
	if calls := w.callCount(); calls != 2*samples {
		t.Fatalf("%d database reads, want a second measurement after %v", calls, retryAfter)
	}
}

func (w *fakeWorld) callCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls
}

func waitMeasured(t *testing.T, c *Clock) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, ok := c.Offset(); ok && !c.busy.Load() {
			return
		}
	}
	t.Fatal("no background measurement landed")
}

func waitCalls(t *testing.T, w *fakeWorld, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if w.callCount() >= n {
			return
		}
	}
	t.Fatalf("fewer than %d database reads", n)
}

func waitIdle(t *testing.T, c *Clock) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if !c.busy.Load() {
			return
		}
	}
	t.Fatal("background measurement did not finish")
}

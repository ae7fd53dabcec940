package signin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// step is one sign-in attempt after advancing the clock by wait: op "fail"
// and "ok" must be admitted (want: the lockout the failure starts),
// "locked" must be refused as LockedOut (want: its RetryAfter).
type step struct {
	wait           time.Duration
	op             string
	client, source string
	want           time.Duration
}

func repeat(n int, s step) []step {
	out := make([]step, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func steps(groups ...[]step) []step {
	var out []step
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func TestLockout(t *testing.T) {
	fail := step{op: "fail", client: "lh-a", source: "192.0.2.1"}
	at := func(s step, wait, want time.Duration) step { s.wait, s.want = wait, want; return s }
	with := func(s step, client, source string) step { s.client, s.source = client, source; return s }
	cases := []struct {
		name  string
		cfg   Config
		steps []step
	}{
		{"the fifth failure locks for 1s, each later one doubles", Config{}, steps(
			repeat(4, fail),
			[]step{at(fail, 0, time.Second)},
			[]step{{op: "locked", client: "lh-a", source: "192.0.2.9", want: time.Second}}, // any address
			[]step{{wait: 400 * time.Millisecond, op: "locked", client: "lh-a", source: "192.0.2.1", want: 600 * time.Millisecond}},
			[]step{at(fail, 600*time.Millisecond, 2*time.Second)},
			[]step{at(fail, 2*time.Second, 4*time.Second)},
			[]step{at(fail, 4*time.Second, 8*time.Second)},
			[]step{{op: "ok", client: "lh-b", source: "192.0.2.2"}}, // other clients are not affected
		)},
		{"the lockout stops doubling at MaxLockout", Config{MaxFailures: 1, Lockout: time.Second, MaxLockout: 5 * time.Second}, steps(
			[]step{at(fail, 0, time.Second)},
			[]step{at(fail, time.Second, 2*time.Second)},
			[]step{at(fail, 2*time.Second, 4*time.Second)},
			[]step{at(fail, 4*time.Second, 5*time.Second)},
			[]step{at(fail, 5*time.Second, 5*time.Second)},
		)},
		{"a success forgets the client's failures", Config{}, steps(
			repeat(4, fail),
			[]step{{op: "ok", client: "lh-a", source: "192.0.2.1"}},
			repeat(4, fail),
			[]step{at(fail, 0, time.Second)},
		)},
		{"failures older than the window are forgotten", Config{Window: 10 * time.Minute}, steps(
			repeat(4, fail),
			[]step{at(fail, 10*time.Minute+time.Second, 0)},
			repeat(3, fail),
			[]step{at(fail, 0, time.Second)},
		)},
		{"the window runs from the end of the lockout", Config{Window: 10 * time.Minute, MaxLockout: time.Hour}, steps(
			repeat(4, fail),
			[]step{at(fail, 0, time.Second)},
			[]step{at(fail, time.Second, 2*time.Second)},
			// locked until +3s; 10 minutes after that the count still stands
			[]step{at(fail, 2*time.Second+10*time.Minute, 4*time.Second)},
			// more than the window after the end of that lockout: from zero
			[]step{at(fail, 4*time.Second+10*time.Minute+time.Second, 0)},
		)},
		{"an address is locked out whatever ids it names, and a success does not free it",
			Config{MaxFailures: 100, SourceMaxFailures: 3}, steps(
				[]step{with(fail, "lh-1", "192.0.2.1"), with(fail, "lh-2", "192.0.2.1")},
				[]step{at(with(fail, "lh-3", "192.0.2.1"), 0, time.Second)},
				[]step{{op: "locked", client: "lh-4", source: "192.0.2.1", want: time.Second}},
				[]step{{op: "ok", client: "lh-4", source: "192.0.2.2"}},
				[]step{with(fail, "lh-4", "192.0.2.2")}, // another address counts apart
				[]step{{wait: time.Second, op: "ok", client: "lh-5", source: "192.0.2.1"}},
				[]step{at(with(fail, "lh-6", "192.0.2.1"), 0, 2*time.Second)},
			)},
		{"negative limits never lock out", Config{MaxFailures: -1, SourceMaxFailures: -1}, repeat(50, fail)},
		{"long client ids are told apart", Config{MaxFailures: 2}, steps(
			[]step{with(fail, strings.Repeat("x", 100)+"1", "192.0.2.1"), with(fail, strings.Repeat("x", 100)+"2", "192.0.2.1")},
			[]step{at(with(fail, strings.Repeat("x", 100)+"1", "192.0.2.1"), 0, time.Second)},
			[]step{{op: "locked", client: strings.Repeat("x", 100) + "1", source: "192.0.2.7", want: time.Second}},
			[]step{{op: "ok", client: strings.Repeat("x", 100) + "3", source: "192.0.2.7"}},
		)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			tc.cfg.Now = clk.Now
			g := New(tc.cfg)
			for i, s := range tc.steps {
				clk.Add(s.wait)
				done, err := g.Enter(context.Background(), s.client, s.source)
				if s.op == "locked" {
					var r *Refused
					if !errors.As(err, &r) || r.Reason != LockedOut || r.RetryAfter != s.want {
						t.Fatalf("step %d: Enter = %v, want locked out for %s", i, err, s.want)
					}
					continue
				}
				if err != nil {
					t.Fatalf("step %d (%s %s from %s): refused: %v", i, s.op, s.client, s.source, err)
				}
				o := Failed
				if s.op == "ok" {
					o = Succeeded
				}
				if got := done(o); got != s.want {
					t.Fatalf("step %d: lockout %s, want %s", i, got, s.want)
				}
			}
			if g.InFlight() != 0 {
				t.Fatalf("%d slots still held", g.InFlight())
			}
		})
	}
}

// TestAbortedRecordsNothing: a verification the store could not decide
// is neither a failure nor a success.
func TestAbortedRecordsNothing(t *testing.T) {
	g := New(Config{MaxFailures: 1})
	for range 10 {
		done, err := g.Enter(context.Background(), "lh-a", "192.0.2.1")
		if err != nil {
			t.Fatal(err)
		}
		done(Aborted)
		done(Failed) // a second call is ignored
	}
	if _, err := g.Enter(context.Background(), "lh-a", "192.0.2.1"); err != nil {
		t.Fatalf("locked out by aborted attempts: %v", err)
	}
}

// TestConcurrencyBound: no more than Concurrency sign-ins are admitted at
// once, and the others wait for a slot.
func TestConcurrencyBound(t *testing.T) {
	const limit, n = 3, 24
	g := New(Config{Concurrency: limit, Wait: time.Minute, MaxFailures: -1, SourceMaxFailures: -1})
	var cur, peak atomic.Int32
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			done, err := g.Enter(context.Background(), "lh-a", "192.0.2.1")
			if err != nil {
				t.Error(err)
				return
			}
			c := cur.Add(1)
			for p := peak.Load(); c > p && !peak.CompareAndSwap(p, c); p = peak.Load() {
			}
			time.Sleep(5 * time.Millisecond)
			cur.Add(-1)
			done(Failed)
		})
	}
	wg.Wait()
	if p := peak.Load(); p != limit {
		t.Fatalf("peak concurrency %d, want %d", p, limit)
	}
}

func TestBusy(t *testing.T) {
	g := New(Config{Concurrency: 1, Wait: 20 * time.Millisecond})
	done, err := g.Enter(context.Background(), "lh-a", "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = g.Enter(context.Background(), "lh-b", "192.0.2.2")
	var r *Refused
	if !errors.As(err, &r) || r.Reason != Busy || r.RetryAfter != 20*time.Millisecond {
		t.Fatalf("Enter = %v, want busy", err)
	}
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Fatalf("refused after %s, before the wait was over", waited)
	}
	done(Succeeded)
	done2, err := g.Enter(context.Background(), "lh-b", "192.0.2.2")
	if err != nil {
		t.Fatalf("slot not released: %v", err)
	}
	done2(Succeeded)
}

// TestLockedWhileWaiting: an attempt queued for a slot while another
// attempt locked its client out is refused, not admitted to verify.
func TestLockedWhileWaiting(t *testing.T) {
	g := New(Config{Concurrency: 1, Wait: time.Minute, MaxFailures: 1})
	done, err := g.Enter(context.Background(), "lh-a", "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 1)
	go func() {
		d, err := g.Enter(context.Background(), "lh-a", "192.0.2.2")
		if d != nil {
			d(Aborted)
		}
		res <- err
	}()
	time.Sleep(50 * time.Millisecond) // the second attempt is waiting for the slot
	done(Failed)
	var r *Refused
	if err := <-res; !errors.As(err, &r) || r.Reason != LockedOut {
		t.Fatalf("queued attempt: %v, want locked out", err)
	}
}

// TestTrackingIsBounded: at most MaxTracked client ids are remembered.
func TestTrackingIsBounded(t *testing.T) {
	g := New(Config{MaxTracked: 100, SourceMaxFailures: -1})
	for i := range 1000 {
		done, err := g.Enter(context.Background(), fmt.Sprintf("lh-%d", i), "192.0.2.1")
		if err != nil {
			t.Fatal(err)
		}
		done(Failed)
	}
	if n := g.clients.Len(); n != 100 {
		t.Fatalf("%d client ids tracked, want 100", n)
	}
}

func TestSourceOf(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1:1234":            "192.0.2.1",
		"[::ffff:192.0.2.1]:80":     "192.0.2.1",
		"[2001:db8:1:2:3:4:5:6]:80": "2001:db8:1:2::/64",
		"[2001:db8:1:2::9]:81":      "2001:db8:1:2::/64",
		"[fe80::1%eth0]:1":          "fe80::/64",
		"192.0.2.1":                 "192.0.2.1",
		"@":                         "@",
		"":                          "",
		strings.Repeat("z", 200):    clientKey(strings.Repeat("z", 200)),
	} {
		if got := SourceOf(in); got != want {
			t.Errorf("SourceOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDefaults(t *testing.T) {
	c := New(Config{}).Config()
	if c.Concurrency < 4 || c.Concurrency > 16 || c.Wait != time.Second || c.MaxFailures != 5 ||
		c.SourceMaxFailures != 20 || c.Lockout != time.Second || c.MaxLockout != 15*time.Minute {
		t.Fatalf("defaults: %+v", c)
	}
}

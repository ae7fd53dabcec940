package loadgen

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// RunLoop runs op in a closed loop from clients workers (each starts its
// next operation when the previous one has finished) until d has passed,
// and returns what it measured. op returns how often it resent; failed
// operations count as errors, not ops.
func RunLoop(ctx context.Context, clients int, d time.Duration, op func(ctx context.Context, worker, seq int) (int, error)) Sample {
	samples := make([]Sample, clients)
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for w := range clients {
		wg.Go(func() {
			s := &samples[w]
			for seq := 0; time.Now().Before(deadline) && ctx.Err() == nil; seq++ {
				t0 := time.Now()
				retries, err := op(ctx, w, seq)
				s.Retries += retries
				if err != nil {
					s.Errors++
					if s.First == "" {
						s.First = err.Error()
					}
					continue
				}
				s.Ops++
				s.Lat = append(s.Lat, time.Since(t0))
			}
		})
	}
	wg.Wait()
	var out Sample
	for _, s := range samples {
		out.Merge(s)
	}
	out.Elapsed = time.Since(start)
	return out
}

// Config is one benchmark: the same scenarios, client counts and
// durations for every target.
type Config struct {
	Targets   []*Target
	Scenarios []Scenario
	Clients   []int
	Duration  time.Duration // per scenario, per target, per round
	Rounds    int
	Warmup    time.Duration // per scenario and target, at the largest client count, before any round
	Log       io.Writer     // progress lines
}

// Result is one scenario at one client count: a sample per target name,
// or the reason it does not apply to that target.
type Result struct {
	Clients  int
	Scenario Scenario
	Samples  map[string]*Sample
	NA       map[string]string
}

// Bench warms every target up, then runs each scenario in Rounds rounds,
// the targets one after another in each round with the starting target
// rotating, so that drift in the machine's load (other processes, caches)
// falls on all targets alike. Targets must have been set up.
func Bench(ctx context.Context, cfg Config) []Result {
	maxClients := slices.Max(cfg.Clients)
	for _, sc := range cfg.Scenarios {
		for _, t := range cfg.Targets {
			if _, na := t.fx.na[sc.Name]; !na && cfg.Warmup > 0 {
				runOne(ctx, t, sc, maxClients, cfg.Warmup)
			}
		}
	}
	var out []Result
	for _, c := range cfg.Clients {
		for _, sc := range cfg.Scenarios {
			res := Result{Clients: c, Scenario: sc, Samples: map[string]*Sample{}, NA: map[string]string{}}
			for _, t := range cfg.Targets {
				if why, na := t.fx.na[sc.Name]; na {
					res.NA[t.Name] = why
				} else {
					res.Samples[t.Name] = &Sample{}
				}
			}
			for r := range cfg.Rounds {
				for i := range cfg.Targets {
					t := cfg.Targets[(i+r)%len(cfg.Targets)]
					acc, ok := res.Samples[t.Name]
					if !ok {
						continue
					}
					s := runOne(ctx, t, sc, c, cfg.Duration)
					acc.Merge(s)
					logRun(cfg.Log, r, c, sc.Name, t.Name, s)
				}
			}
			out = append(out, res)
		}
	}
	return out
}

func runOne(ctx context.Context, t *Target, sc Scenario, clients int, d time.Duration) Sample {
	return RunLoop(ctx, clients, d, func(ctx context.Context, w, seq int) (int, error) { return sc.op(ctx, t, w, seq) })
}

func logRun(w io.Writer, round, clients int, scenario, target string, s Sample) {
	if w == nil {
		return
	}
	sum := Summarize(s)
	fmt.Fprintf(w, "round %d c=%-2d %-16s %-8s %9.1f ops/s  p50 %s  p99 %s", round+1, clients, scenario, target,
		sum.OpsPerSec, fmtDur(sum.P50), fmtDur(sum.P99))
	if s.Retries > 0 {
		fmt.Fprintf(w, "  resends(409) %d", s.Retries)
	}
	if s.Errors > 0 {
		fmt.Fprintf(w, "  errors %d (first: %.200s)", s.Errors, s.First)
	}
	fmt.Fprintln(w)
}

package loadgen

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// RunCount runs exactly n operations of op from clients workers in a
// closed loop (each worker takes the next operation when its previous one
// has finished) and returns what it measured; it stops early only when ctx
// ends. Failed operations count as errors, not ops.
func RunCount(ctx context.Context, clients, n int, op func(ctx context.Context, worker, seq int) (int, error)) Sample {
	samples := make([]Sample, clients)
	var next atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for w := range clients {
		wg.Go(func() {
			s := &samples[w]
			for ctx.Err() == nil {
				seq := int(next.Add(1)) - 1
				if seq >= n {
					return
				}
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

// CPUConfig is the CPU-per-operation phase: every scenario runs Ops[name]
// operations from Clients workers on each target, Rounds times, the
// targets one after another in each round with the starting one rotating;
// before the rounds each target gets one unmeasured run of as many
// operations (a JVM's JIT needs thousands of calls to settle; a quarter
// left the fixture's first round visibly slower). CPU is read from ProcRoot
// (normally "/proc") before and after each run, over the target's CPUPids
// trees. Targets must have been set up; a target without pids is skipped.
type CPUConfig struct {
	Targets   []*Target
	Scenarios []Scenario
	Ops       map[string]int // per scenario name; a scenario missing here is not run
	Clients   int
	Rounds    int
	ProcRoot  string
	Log       io.Writer
}

// CPURun is one measured run: the operations it sent and the CPU time the
// target's processes used meanwhile.
type CPURun struct {
	Sample
	CPU time.Duration
}

// PerOp is the run's CPU time per operation sent (failed ones included:
// the server worked for them too); 0 when nothing was sent.
func (r CPURun) PerOp() time.Duration {
	if n := r.Ops + r.Errors; n > 0 {
		return r.CPU / time.Duration(n)
	}
	return 0
}

// CPUResult is one scenario's runs per target name, round by round, or
// the reason the scenario does not apply to a target.
type CPUResult struct {
	Scenario Scenario
	Ops      int
	Runs     map[string][]CPURun
	NA       map[string]string
}

// BenchCPU runs the CPU-per-operation phase described by cfg.
func BenchCPU(ctx context.Context, cfg CPUConfig) []CPUResult {
	var out []CPUResult
	for _, sc := range cfg.Scenarios {
		n := cfg.Ops[sc.Name]
		if n <= 0 {
			continue
		}
		res := CPUResult{Scenario: sc, Ops: n, Runs: map[string][]CPURun{}, NA: map[string]string{}}
		var ts []*Target
		for _, t := range cfg.Targets {
			switch why, na := t.fx.na[sc.Name]; {
			case na:
				res.NA[t.Name] = why
			case len(t.CPUPids) == 0:
				res.NA[t.Name] = "no process to read CPU time from"
			default:
				ts = append(ts, t)
			}
		}
		for _, t := range ts {
			cpuOne(ctx, cfg, t, sc, n)
		}
		for r := range cfg.Rounds {
			for i := range ts {
				t := ts[(i+r)%len(ts)]
				run := cpuOne(ctx, cfg, t, sc, n)
				res.Runs[t.Name] = append(res.Runs[t.Name], run)
				if cfg.Log != nil {
					fmt.Fprintf(cfg.Log, "cpu round %d %-16s %-8s %5d ops  cpu %7.0f ms  %s ms/op  wall %s\n", r+1, sc.Name, t.Name,
						run.Ops+run.Errors, float64(run.CPU)/float64(time.Millisecond), fmtMs(run.PerOp()), run.Elapsed.Round(time.Millisecond))
				}
			}
		}
		out = append(out, res)
	}
	return out
}

func cpuOne(ctx context.Context, cfg CPUConfig, t *Target, sc Scenario, n int) CPURun {
	before := TreeCPU(cfg.ProcRoot, t.CPUPids)
	s := RunCount(ctx, max(1, cfg.Clients), n, func(ctx context.Context, w, seq int) (int, error) { return sc.op(ctx, t, w, seq) })
	return CPURun{Sample: s, CPU: TreeCPU(cfg.ProcRoot, t.CPUPids) - before}
}

// fmtMs prints a CPU time per operation in milliseconds, with three
// significant decimals for the sub-millisecond ones.
func fmtMs(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	if ms < 1 {
		return fmt.Sprintf("%.3f", ms)
	}
	return fmt.Sprintf("%.2f", ms)
}

package loadgen

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// CPUReport prints one row per scenario: each target's CPU per operation
// (all its rounds' CPU over all their operations, then the lowest and
// highest round), and Ref's CPU per operation divided by each other
// target's (how many times less CPU the other needs; over all rounds, then
// the lowest and highest of round r against round r); then errors and
// not-applicable cells.
func CPUReport(w io.Writer, rs []CPUResult, o ReportOptions) {
	others := slices.DeleteFunc(slices.Clone(o.Targets), func(n string) bool { return n == o.Ref })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"scenario", "ops x rounds"}
	for _, n := range o.Targets {
		head = append(head, n+" ms/op", "min-max")
	}
	for _, n := range others {
		head = append(head, o.Ref+"/"+n, "min-max")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range rs {
		fmt.Fprintln(tw, strings.Join(cpuRow(r, o, others), "\t")+"\t")
	}
	tw.Flush()
	cpuProblems(w, rs, o.Targets)
}

func cpuRow(r CPUResult, o ReportOptions, others []string) []string {
	rounds := 0
	for _, runs := range r.Runs {
		rounds = max(rounds, len(runs))
	}
	row := []string{r.Scenario.Name, fmt.Sprintf("%d x %d", r.Ops, rounds)}
	for _, n := range o.Targets {
		runs, ok := r.Runs[n]
		if !ok || len(runs) == 0 {
			row = append(row, "n/a", "")
			continue
		}
		per := make([]time.Duration, len(runs))
		for i, run := range runs {
			per[i] = run.PerOp()
		}
		row = append(row, fmtMs(totalPerOp(runs)), fmtMs(slices.Min(per))+"-"+fmtMs(slices.Max(per)))
	}
	ref := r.Runs[o.Ref]
	for _, n := range others {
		runs := r.Runs[n]
		mine := totalPerOp(runs)
		if len(ref) == 0 || len(runs) == 0 || mine == 0 {
			row = append(row, "n/a", "")
			continue
		}
		var ratios []float64
		for i := range min(len(ref), len(runs)) {
			if p := runs[i].PerOp(); p > 0 {
				ratios = append(ratios, float64(ref[i].PerOp())/float64(p))
			}
		}
		rng := ""
		if len(ratios) > 0 {
			rng = fmt.Sprintf("%.1f-%.1f", slices.Min(ratios), slices.Max(ratios))
		}
		row = append(row, fmt.Sprintf("%.1fx", float64(totalPerOp(ref))/float64(mine)), rng)
	}
	return row
}

// totalPerOp is the CPU of all runs over all their operations.
func totalPerOp(runs []CPURun) time.Duration {
	var sum CPURun
	for _, r := range runs {
		sum.CPU += r.CPU
		sum.Ops += r.Ops
		sum.Errors += r.Errors
	}
	return sum.PerOp()
}

// cpuProblems lists failed operations (their CPU is in the figures) and
// scenarios a target was not measured on.
func cpuProblems(w io.Writer, rs []CPUResult, targets []string) {
	for _, r := range rs {
		for _, n := range targets {
			if why, ok := r.NA[n]; ok {
				fmt.Fprintf(w, "n/a: %s %s: %s\n", n, r.Scenario.Name, why)
			}
			var bad CPURun
			for _, run := range r.Runs[n] {
				bad.Errors += run.Errors
				bad.Ops += run.Ops
				if bad.First == "" {
					bad.First = run.First
				}
			}
			if bad.Errors > 0 {
				fmt.Fprintf(w, "errors: %s %s: %d of %d operations (first: %.200s)\n",
					n, r.Scenario.Name, bad.Errors, bad.Errors+bad.Ops, bad.First)
			}
		}
	}
}

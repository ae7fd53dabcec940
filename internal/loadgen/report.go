package loadgen

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Ceilings are pgbench rates (transactions/s) keyed by CeilingKey.
type Ceilings map[string]float64

// CeilingKey names a ceiling: "select" or "update", at a client count.
func CeilingKey(stmt string, clients int) string { return stmt + "@" + strconv.Itoa(clients) }

// ParseCeilings reads "select@8=41000,update@8=9000,..."; an empty string
// is no ceilings. It returns an error for a malformed entry.
func ParseCeilings(s string) (Ceilings, error) {
	out := Ceilings{}
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		stmt, c, ok2 := strings.Cut(k, "@")
		n, err := strconv.Atoi(c)
		f, err2 := strconv.ParseFloat(v, 64)
		if !ok || !ok2 || (stmt != "select" && stmt != "update") || err != nil || err2 != nil {
			return nil, fmt.Errorf("ceiling %q: want select@N=TPS or update@N=TPS", part)
		}
		out[CeilingKey(stmt, n)] = f
	}
	return out, nil
}

// ReportOptions says how to print results: Targets in column order, Ref
// the target every other is divided by, CeilingFor the targets that get a
// "% of ceiling" column.
type ReportOptions struct {
	Targets    []string
	Ref        string
	CeilingFor []string
	Ceilings   Ceilings
}

// Report prints one row per client count and scenario: each target's
// ops/s with p50/p99, each other target's ratio to Ref, and % of the
// matching pgbench ceiling; then the ceilings, resends and errors.
func Report(w io.Writer, rs []Result, o ReportOptions) {
	others := slices.DeleteFunc(slices.Clone(o.Targets), func(n string) bool { return n == o.Ref })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"clients", "scenario"}
	for _, n := range o.Targets {
		head = append(head, n+" ops/s", "p50/p99 ms")
	}
	for _, n := range others {
		head = append(head, n+"/"+o.Ref)
	}
	for _, n := range o.CeilingFor {
		head = append(head, n+" %ceil")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range rs {
		fmt.Fprintln(tw, strings.Join(reportRow(r, o, others), "\t")+"\t")
	}
	tw.Flush()
	printCeilings(w, o.Ceilings)
	printProblems(w, rs, o.Targets)
}

func reportRow(r Result, o ReportOptions, others []string) []string {
	sum := map[string]Summary{}
	for n, s := range r.Samples {
		sum[n] = Summarize(*s)
	}
	row := []string{strconv.Itoa(r.Clients), r.Scenario.Name}
	for _, n := range o.Targets {
		s, ok := sum[n]
		if !ok {
			row = append(row, "n/a", "")
			continue
		}
		row = append(row, fmt.Sprintf("%.0f", s.OpsPerSec), fmtDur(s.P50)+"/"+fmtDur(s.P99))
	}
	ref, refOK := sum[o.Ref]
	for _, n := range others {
		s, ok := sum[n]
		if !ok || !refOK || ref.OpsPerSec == 0 {
			row = append(row, "n/a")
			continue
		}
		row = append(row, fmt.Sprintf("%.2f", s.OpsPerSec/ref.OpsPerSec))
	}
	stmt := map[Kind]string{KindRead: "select", KindWrite: "update"}[r.Scenario.Kind]
	for _, n := range o.CeilingFor {
		s, ok := sum[n]
		c := o.Ceilings[CeilingKey(stmt, r.Clients)]
		if !ok || stmt == "" || c == 0 {
			row = append(row, "-")
			continue
		}
		row = append(row, fmt.Sprintf("%.1f%%", 100*s.OpsPerSec/c))
	}
	return row
}

func printCeilings(w io.Writer, c Ceilings) {
	if len(c) == 0 {
		return
	}
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Fprint(w, "pgbench ceilings (tps):")
	for _, k := range keys {
		fmt.Fprintf(w, " %s=%.0f", k, c[k])
	}
	fmt.Fprintln(w)
}

// printProblems lists errors and not-applicable cells, so that a rate
// is never read without knowing that some requests failed.
func printProblems(w io.Writer, rs []Result, targets []string) {
	seen := map[string]bool{}
	for _, r := range rs {
		for _, n := range targets {
			if why, ok := r.NA[n]; ok && !seen[n+r.Scenario.Name] {
				seen[n+r.Scenario.Name] = true
				fmt.Fprintf(w, "n/a: %s %s: %s\n", n, r.Scenario.Name, why)
			}
			if s, ok := r.Samples[n]; ok && s.Retries > 0 {
				fmt.Fprintf(w, "resends after 409: %s %s c=%d: %d for %d operations\n",
					n, r.Scenario.Name, r.Clients, s.Retries, s.Ops+s.Errors)
			}
			if s, ok := r.Samples[n]; ok && s.Errors > 0 {
				fmt.Fprintf(w, "errors: %s %s c=%d: %d of %d operations (first: %.200s)\n",
					n, r.Scenario.Name, r.Clients, s.Errors, s.Errors+s.Ops, s.First)
			}
		}
	}
}

// fmtDur prints a latency in milliseconds with two decimals.
func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond))
}

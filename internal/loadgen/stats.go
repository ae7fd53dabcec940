package loadgen

import (
	"slices"
	"time"
)

// Sample is what one closed-loop run measured: operations that got the
// expected answer (Ops, with their latencies), operations that did not
// (Errors), resends after a 409 (Retries), and the wall time the run
// lasted.
type Sample struct {
	Ops     int
	Errors  int
	Retries int
	Elapsed time.Duration
	Lat     []time.Duration
	First   string // the first error's text, for the progress log
}

// Merge adds other to s: rounds of the same scenario on the same server
// add up, so the rate is total ops over total time.
func (s *Sample) Merge(other Sample) {
	s.Ops += other.Ops
	s.Errors += other.Errors
	s.Retries += other.Retries
	s.Elapsed += other.Elapsed
	s.Lat = append(s.Lat, other.Lat...)
	if s.First == "" {
		s.First = other.First
	}
}

// Summary is a Sample reduced to the numbers the report prints.
type Summary struct {
	OpsPerSec float64
	P50, P99  time.Duration
	Errors    int
}

// Summarize reduces s; a sample with no elapsed time or no ops has a zero
// rate and zero percentiles.
func Summarize(s Sample) Summary {
	out := Summary{Errors: s.Errors}
	if s.Elapsed > 0 {
		out.OpsPerSec = float64(s.Ops) / s.Elapsed.Seconds()
	}
	lat := slices.Clone(s.Lat)
	slices.Sort(lat)
	out.P50 = Percentile(lat, 0.50)
	out.P99 = Percentile(lat, 0.99)
	return out
}

// Percentile returns the nearest-rank p-quantile (0 < p <= 1) of sorted,
// or 0 when sorted is empty.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	// Nearest rank: the smallest value with at least p*n values at or below it.
	rank := int(p*float64(n) + 0.999999999)
	rank = max(1, min(rank, n))
	return sorted[rank-1]
}

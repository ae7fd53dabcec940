package loadgen

import (
	"testing"
	"time"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = ms(i + 1)
	}
	cases := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one", []time.Duration{ms(7)}, 0.99, ms(7)},
		{"median of two is the lower", []time.Duration{ms(1), ms(9)}, 0.5, ms(1)},
		{"p50 of 1..100", hundred, 0.5, ms(50)},
		{"p99 of 1..100", hundred, 0.99, ms(99)},
		{"p100 is the max", hundred, 1, ms(100)},
		{"tiny p is the min", hundred, 0.001, ms(1)},
	}
	for _, c := range cases {
		if got := Percentile(c.sorted, c.p); got != c.want {
			t.Errorf("%s: Percentile = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSummarizeMergesRounds(t *testing.T) {
	var s Sample
	s.Merge(Sample{Ops: 3, Errors: 1, Elapsed: time.Second, Lat: []time.Duration{ms(3), ms(1), ms(2)}})
	s.Merge(Sample{Ops: 1, Elapsed: time.Second, Lat: []time.Duration{ms(100)}})
	got := Summarize(s)
	if got.OpsPerSec != 2 {
		t.Errorf("OpsPerSec = %v, want 2 (4 ops over 2s)", got.OpsPerSec)
	}
	if got.P50 != ms(2) || got.P99 != ms(100) || got.Errors != 1 {
		t.Errorf("Summarize = %+v, want p50 2ms, p99 100ms, 1 error", got)
	}
	if s.Lat[0] != ms(3) {
		t.Errorf("Summarize sorted the caller's latencies in place")
	}
	if z := Summarize(Sample{}); z.OpsPerSec != 0 || z.P50 != 0 {
		t.Errorf("empty sample: %+v, want zeros", z)
	}
}

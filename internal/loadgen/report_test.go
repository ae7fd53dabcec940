package loadgen

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestParseCeilings(t *testing.T) {
	got, err := ParseCeilings(" select@8=41000.5, update@16=9000 ,")
	if err != nil {
		t.Fatal(err)
	}
	if got[CeilingKey("select", 8)] != 41000.5 || got[CeilingKey("update", 16)] != 9000 || len(got) != 2 {
		t.Errorf("ParseCeilings = %v", got)
	}
	if c, err := ParseCeilings(""); err != nil || len(c) != 0 {
		t.Errorf("empty: %v, %v", c, err)
	}
	for _, bad := range []string{"select=1", "delete@8=1", "select@x=1", "select@8=fast", "select@8"} {
		if _, err := ParseCeilings(bad); err == nil {
			t.Errorf("ParseCeilings(%q) accepted", bad)
		}
	}
}

func TestParseTarget(t *testing.T) {
	tg, err := ParseTarget("pg=http://127.0.0.1:1/,warehouse=bench")
	if err != nil || tg.Name != "pg" || tg.URI != "http://127.0.0.1:1" || tg.Warehouse != "bench" {
		t.Errorf("ParseTarget = %+v, %v", tg, err)
	}
	for _, bad := range []string{"pg", "=http://x", "pg=", "pg=http://x,prefix=a"} {
		if _, err := ParseTarget(bad); err == nil {
			t.Errorf("ParseTarget(%q) accepted", bad)
		}
	}
}

func sample(ops int, lat time.Duration) *Sample {
	s := &Sample{Ops: ops, Elapsed: time.Second}
	for range ops {
		s.Lat = append(s.Lat, lat)
	}
	return s
}

func TestReport(t *testing.T) {
	read := Scenario{Name: ScenarioLoadSmall, Kind: KindRead}
	write := Scenario{Name: ScenarioCommitHot, Kind: KindWrite}
	other := Scenario{Name: ScenarioList, Kind: KindOther}
	reval := Scenario{Name: ScenarioLoad304, Kind: KindRead}
	rs := []Result{
		{Clients: 8, Scenario: read, Samples: map[string]*Sample{"pg": sample(400, ms(2)), "fx": sample(100, ms(8))}},
		{Clients: 8, Scenario: write, Samples: map[string]*Sample{"pg": {Ops: 50, Errors: 3, Retries: 7, First: "status 409", Elapsed: time.Second}, "fx": sample(25, ms(1))}},
		{Clients: 8, Scenario: other, Samples: map[string]*Sample{"pg": sample(10, ms(1)), "fx": sample(0, 0)}},
		{Clients: 8, Scenario: reval, Samples: map[string]*Sample{"pg": sample(10, ms(1))}, NA: map[string]string{"fx": "no ETag"}},
		{Clients: 16, Scenario: reval, Samples: map[string]*Sample{"pg": sample(10, ms(1))}, NA: map[string]string{"fx": "no ETag"}},
	}
	var buf bytes.Buffer
	Report(&buf, rs, ReportOptions{Targets: []string{"pg", "fx"}, Ref: "fx", CeilingFor: []string{"pg"},
		Ceilings: Ceilings{"select@8": 800, "update@8": 1000}})
	out := buf.String()
	lines := strings.Split(out, "\n")
	want := map[int][]string{
		0: {"pg ops/s", "fx ops/s", "pg/fx", "pg %ceil"},
		1: {"load-small", "400", "2.00/2.00", "100", "8.00/8.00", "4.00", "50.0%"},
		2: {"commit-hot", "50", "25", "2.00", "5.0%"},
		3: {"list", "10", "n/a", "-"},            // reference at 0 ops/s: no ratio; no ceiling for lists
		4: {"load-304", "10", "n/a", "n/a", "-"}, // fixture not applicable; no select@16... at c=8 there is
	}
	for i, subs := range want {
		for _, s := range subs {
			if !strings.Contains(lines[i], s) {
				t.Errorf("line %d %q lacks %q", i, lines[i], s)
			}
		}
	}
	if !strings.Contains(lines[4], "1.2%") {
		t.Errorf("load-304 at c=8 should be 10/800 = 1.2%% of the select ceiling: %q", lines[4])
	}
	if !strings.HasSuffix(strings.TrimSpace(lines[5]), "-") {
		t.Errorf("load-304 at c=16 has no ceiling, want '-': %q", lines[5])
	}
	for _, s := range []string{"pgbench ceilings (tps): select@8=800 update@8=1000",
		"errors: pg commit-hot c=8: 3 of 53 operations (first: status 409)",
		"resends after 409: pg commit-hot c=8: 7 for 53 operations", "n/a: fx load-304: no ETag"} {
		if !strings.Contains(out, s) {
			t.Errorf("report lacks %q:\n%s", s, out)
		}
	}
	if strings.Count(out, "n/a: fx load-304") != 1 {
		t.Errorf("not-applicable note repeated per client count:\n%s", out)
	}
}

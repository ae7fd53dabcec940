package loadgen

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestParseStat: fields are counted from the last ')', so a command name
// with spaces and parentheses does not shift them.
func TestParseStat(t *testing.T) {
	line := "4242 (post gres: (x)) S 17 4242 4242 0 -1 4194560 100 0 0 0 123 45 6 7 20 0 1 0 99 0 0\n"
	st, err := parseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := procStat{ppid: 17, utime: 123, stime: 45, cutime: 6, cstime: 7}
	if st != want {
		t.Errorf("parseStat = %+v, want %+v", st, want)
	}
	if _, err := parseStat([]byte("4242 (x) S 17 1 2")); err == nil {
		t.Error("short line parsed")
	}
}

func writeStat(t *testing.T, root string, pid, ppid int, ut, st, cut, cst int) {
	t.Helper()
	dir := filepath.Join(root, itoa(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	line := itoa(pid) + " (p) S " + itoa(ppid) + " 0 0 0 -1 0 0 0 0 0 " +
		itoa(ut) + " " + itoa(st) + " " + itoa(cut) + " " + itoa(cst) + " 20 0 1 0 0 0 0\n"
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestTreeCPU: a root counts its own time, its reaped children's and its
// living descendants' (with theirs); other processes are not counted.
func TestTreeCPU(t *testing.T) {
	root := t.TempDir()
	writeStat(t, root, 100, 1, 10, 5, 3, 2)  // postmaster: 15 own, 5 reaped
	writeStat(t, root, 101, 100, 7, 1, 0, 0) // a backend
	writeStat(t, root, 102, 101, 1, 1, 1, 0) // its child
	writeStat(t, root, 200, 1, 50, 50, 0, 0) // someone else
	writeStat(t, root, 300, 1, 4, 0, 0, 0)
	got := TreeCPU(root, []int{100})
	if want := (15 + 5 + 8 + 3) * ClockTick; got != want {
		t.Errorf("TreeCPU(100) = %s, want %s", got, want)
	}
	if got, want := TreeCPU(root, []int{100, 300}), (31+4)*ClockTick; got != want {
		t.Errorf("TreeCPU(100, 300) = %s, want %s", got, want)
	}
	if got := TreeCPU(root, []int{999}); got != 0 {
		t.Errorf("TreeCPU of a missing pid = %s, want 0", got)
	}
}

// TestTreeCPUSelf: the test process's own CPU time grows while it works.
func TestTreeCPUSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	before := TreeCPU("/proc", []int{os.Getpid()})
	for end := time.Now().Add(60 * time.Millisecond); time.Now().Before(end); {
	}
	if after := TreeCPU("/proc", []int{os.Getpid()}); after-before < ClockTick {
		t.Errorf("60 ms of spinning read as %s of CPU", after-before)
	}
}

func TestParsePIDs(t *testing.T) {
	got, err := ParsePIDs("12+345")
	if err != nil || len(got) != 2 || got[0] != 12 || got[1] != 345 {
		t.Errorf("ParsePIDs = %v, %v", got, err)
	}
	for _, bad := range []string{"", "x", "1+", "-3", "0"} {
		if _, err := ParsePIDs(bad); err == nil {
			t.Errorf("ParsePIDs(%q) accepted", bad)
		}
	}
}

// TestRunCount sends exactly n operations whatever the client count, and
// counts failures as errors.
func TestRunCount(t *testing.T) {
	for _, clients := range []int{1, 3, 8} {
		var calls atomic.Int64
		s := RunCount(context.Background(), clients, 25, func(_ context.Context, _, seq int) (int, error) {
			calls.Add(1)
			if seq%5 == 0 {
				return 0, context.Canceled
			}
			return 0, nil
		})
		if calls.Load() != 25 || s.Ops != 20 || s.Errors != 5 || len(s.Lat) != 20 {
			t.Errorf("clients=%d: %d calls, %d ops, %d errors, %d latencies; want 25, 20, 5, 20",
				clients, calls.Load(), s.Ops, s.Errors, len(s.Lat))
		}
	}
}

// TestCPUReport: CPU per op over all rounds, the rounds' range, and the
// reference divided by each other target.
func TestCPUReport(t *testing.T) {
	run := func(ops int, cpu time.Duration) CPURun { return CPURun{Sample: Sample{Ops: ops}, CPU: cpu} }
	rs := []CPUResult{{
		Scenario: Scenario{Name: ScenarioCreate}, Ops: 100,
		Runs: map[string][]CPURun{
			"ours":    {run(100, 100*time.Millisecond), run(100, 300*time.Millisecond)},
			"fixture": {run(100, 1000*time.Millisecond), run(100, 1200*time.Millisecond)},
		},
		NA: map[string]string{},
	}, {
		Scenario: Scenario{Name: ScenarioList}, Ops: 10,
		Runs: map[string][]CPURun{"fixture": {run(10, 10*time.Millisecond)}},
		NA:   map[string]string{"ours": "no process to read CPU time from"},
	}}
	var b strings.Builder
	CPUReport(&b, rs, ReportOptions{Targets: []string{"ours", "fixture"}, Ref: "fixture"})
	out := b.String()
	for _, want := range []string{
		"fixture/ours", "100 x 2",
		"2.00", "1.00-3.00", // ours: 400 ms over 200 ops; rounds 1 and 3 ms
		"11.00", "10.00-12.00", // fixture
		"5.5x", "4.0-10.0", // 11/2; round 1: 10/1, round 2: 12/3
		"n/a: ours list: no process to read CPU time from",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

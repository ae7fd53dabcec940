package loadgen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ClockTick is the unit of the CPU times in /proc/<pid>/stat (USER_HZ,
// 100 on every Linux architecture Go supports).
const ClockTick = 10 * time.Millisecond

// procStat is what /proc/<pid>/stat says about one process: its parent and
// its CPU times in clock ticks (its own threads, and its waited-for
// children's).
type procStat struct {
	ppid                         int
	utime, stime, cutime, cstime int64
}

// parseStat reads a /proc/<pid>/stat line. The command name is the field
// in parentheses and may itself hold spaces and parentheses, so fields are
// counted from the last ')'. It returns an error for a malformed line.
func parseStat(line []byte) (procStat, error) {
	i := bytes.LastIndexByte(line, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("stat line without a command name")
	}
	// After ")": state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17).
	f := strings.Fields(string(line[i+1:]))
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("stat line with %d fields after the name", len(f))
	}
	var v [5]int64
	for k, idx := range []int{1, 11, 12, 13, 14} {
		n, err := strconv.ParseInt(f[idx], 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("stat field %d: %w", idx+3, err)
		}
		v[k] = n
	}
	return procStat{ppid: int(v[0]), utime: v[1], stime: v[2], cutime: v[3], cstime: v[4]}, nil
}

// readProcs reads every process's stat under root (normally "/proc");
// processes that exit while it reads are skipped.
func readProcs(root string) map[int]procStat {
	paths, _ := filepath.Glob(filepath.Join(root, "[0-9]*", "stat"))
	out := make(map[int]procStat, len(paths))
	for _, p := range paths {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if st, err := parseStat(b); err == nil {
			out[pid] = st
		}
	}
	return out
}

// TreeCPU is the CPU time the process trees rooted at pids have used: for
// every living process in them, its own user and system time plus that of
// the children it has reaped. A child that exits and is reaped moves its
// whole time into its parent's, so the sum only grows (Postgres backends
// and autovacuum workers that come and go are counted). A root that no
// longer exists counts nothing. Resolution: one clock tick per process.
func TreeCPU(root string, pids []int) time.Duration {
	procs := readProcs(root)
	children := map[int][]int{}
	for pid, st := range procs {
		children[st.ppid] = append(children[st.ppid], pid)
	}
	var ticks int64
	seen := map[int]bool{}
	stack := append([]int(nil), pids...)
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		st, ok := procs[pid]
		if !ok || seen[pid] {
			continue
		}
		seen[pid] = true
		ticks += st.utime + st.stime + st.cutime + st.cstime
		stack = append(stack, children[pid]...)
	}
	return time.Duration(ticks) * ClockTick
}

// ParsePIDs reads "PID[+PID...]"; it returns an error for anything that
// is not a positive integer.
func ParsePIDs(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, "+") {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("pid %q: want a positive integer", p)
		}
		out = append(out, n)
	}
	return out, nil
}

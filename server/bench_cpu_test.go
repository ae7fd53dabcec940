package server_test

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/lakehold/catalog/internal/loadgen"
)

// reportCPU starts counting the process's CPU time (user and system, every
// goroutine: the in-process client's as well as the server's); the
// function it returns reports it per operation as cpu-µs/op. On cores
// shared with other work, wall time per op measures the neighbours as much
// as the code; CPU time much less so. Call it after setup, defer the
// result. With CATALOG_BENCH_PG_PID set to the postmaster's pid (the first
// line of $PGROOT/data/postmaster.pid) it also reports the Postgres
// server's CPU (its whole process tree, backends included) as
// pg-cpu-µs/op: a round trip costs the database CPU too, which a process's
// own count misses.
func reportCPU(b *testing.B) func() {
	start := processCPU()
	pg := pgPID()
	var pgStart time.Duration
	if pg > 0 {
		pgStart = loadgen.TreeCPU("/proc", []int{pg})
	}
	return func() {
		if b.N == 0 {
			return
		}
		b.ReportMetric(float64(processCPU()-start)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
		if pg > 0 {
			used := loadgen.TreeCPU("/proc", []int{pg}) - pgStart
			b.ReportMetric(float64(used)/float64(time.Microsecond)/float64(b.N), "pg-cpu-µs/op")
		}
	}
}

// pgPID is CATALOG_BENCH_PG_PID, or 0 when unset or not a number.
func pgPID() int {
	n, err := strconv.Atoi(os.Getenv("CATALOG_BENCH_PG_PID"))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// processCPU is the CPU time this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

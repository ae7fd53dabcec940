package server_test

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU starts counting the process's CPU time (user and system, every
// goroutine: the in-process client's as well as the server's); the
// function it returns reports it per operation as cpu-µs/op. On cores
// shared with other work, wall time per op measures the neighbours as much
// as the code; CPU time much less so. Call it after setup, defer the
// result.
func reportCPU(b *testing.B) func() {
	start := processCPU()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(processCPU()-start)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
		}
	}
}

// processCPU is the CPU time this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

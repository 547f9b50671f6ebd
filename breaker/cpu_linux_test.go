//go:build linux

package breaker

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// reportCPU pins a serial benchmark to its OS thread and, when called
// back at the end, reports the thread's CPU time per iteration as
// "cpu-ns/op". Unlike ns/op (wall time) it leaves out the time the thread
// spent waiting for a CPU, which on a shared, loaded machine can be most
// of the wall time. Use: defer reportCPU(b)().
func reportCPU(b *testing.B) func() {
	runtime.LockOSThread()
	start := threadCPU()
	return func() {
		d := threadCPU() - start
		runtime.UnlockOSThread()
		if d > 0 && b.N > 0 {
			b.ReportMetric(float64(d)/float64(b.N), "cpu-ns/op")
		}
	}
}

// reportProcCPU is reportCPU for parallel benchmarks: it reports the CPU
// time of the whole process per iteration, summed over its threads, as
// "cpu-ns/op". Use: defer reportProcCPU(b)() around b.RunParallel.
func reportProcCPU(b *testing.B) func() {
	start := procCPU()
	return func() {
		if d := procCPU() - start; d > 0 && b.N > 0 {
			b.ReportMetric(float64(d)/float64(b.N), "cpu-ns/op")
		}
	}
}

// procCPU returns the user and system CPU time of the process.
func procCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// threadCPU returns the user and system CPU time of the calling thread.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

//go:build linux

package benchcpu

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// Thread pins a serial benchmark to its OS thread and, when called back
// at the end, reports the thread's CPU time per iteration as
// "cpu-ns/op". Use: defer benchcpu.Thread(b)().
func Thread(b *testing.B) func() {
	runtime.LockOSThread()
	start := threadCPU()
	return func() {
		d := threadCPU() - start
		runtime.UnlockOSThread()
		report(b, d)
	}
}

// Process is Thread for parallel benchmarks: it reports the CPU time of
// the whole process per iteration, summed over its threads, as
// "cpu-ns/op". Use: defer benchcpu.Process(b)() around b.RunParallel.
func Process(b *testing.B) func() {
	start := usage(syscall.RUSAGE_SELF)
	return func() { report(b, usage(syscall.RUSAGE_SELF)-start) }
}

func report(b *testing.B, d time.Duration) {
	if d > 0 && b.N > 0 {
		b.ReportMetric(float64(d)/float64(b.N), "cpu-ns/op")
	}
}

// threadCPU returns the user and system CPU time of the calling thread.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD
	return usage(rusageThread)
}

// usage returns the user and system CPU time of who (a RUSAGE_ value).
func usage(who int) time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(who, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

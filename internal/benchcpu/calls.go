package benchcpu

import (
	"runtime"
	"testing"
)

// Calls runs b.N calls and reports their allocations and the process's
// CPU time per call ("cpu-ns/op"). With one caller the benchmark's own
// goroutine makes them one at a time; with more, that many goroutines
// (rounded up to a multiple of GOMAXPROCS) make them at once, through
// b.RunParallel. newCaller is called once per caller, on its goroutine,
// and returns the call that caller makes; a call's error fails the
// benchmark.
func Calls(b *testing.B, callers int, newCaller func() func() error) {
	b.ReportAllocs()
	if callers <= 1 {
		call := newCaller()
		defer Process(b)()
		for b.Loop() {
			if err := call(); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((callers + procs - 1) / procs)
	b.ResetTimer()
	defer Process(b)()
	b.RunParallel(func(pb *testing.PB) {
		call := newCaller()
		for pb.Next() {
			if err := call(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

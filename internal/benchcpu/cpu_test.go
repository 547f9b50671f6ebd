package benchcpu

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestReportsCPU runs a busy benchmark and checks that it reports a CPU
// time per iteration on Linux.
func TestReportsCPU(t *testing.T) {
	for _, tc := range []struct {
		name   string
		report func(*testing.B) func()
	}{{"Thread", Thread}, {"Process", Process}} {
		t.Run(tc.name, func(t *testing.T) {
			r := testing.Benchmark(func(b *testing.B) {
				defer tc.report(b)()
				x := 0
				for i := 0; i < b.N; i++ {
					for j := 0; j < 10000; j++ {
						x += j ^ i
					}
				}
				runtime.KeepAlive(x)
			})
			got, ok := r.Extra["cpu-ns/op"]
			if runtime.GOOS != "linux" {
				if ok {
					t.Fatalf("cpu-ns/op = %v off Linux, want none", got)
				}
				return
			}
			if !ok || got <= 0 {
				t.Fatalf("cpu-ns/op = %v (reported %v), want > 0", got, ok)
			}
		})
	}
}

// TestCalls checks that Calls makes b.N calls with the callers it is
// asked for, reports CPU time per call on Linux, and fails on a call's
// error.
func TestCalls(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, tc := range []struct {
		callers, wantCallers int
		fail                 bool
	}{
		{1, 1, false},
		{64, (64 + procs - 1) / procs * procs, false},
		{1, 1, true},
		{64, (64 + procs - 1) / procs * procs, true},
	} {
		t.Run(fmt.Sprintf("callers=%d/fail=%v", tc.callers, tc.fail), func(t *testing.T) {
			var callers, calls atomic.Int64
			r := testing.Benchmark(func(b *testing.B) {
				callers.Store(0)
				calls.Store(0)
				Calls(b, tc.callers, func() func() error {
					callers.Add(1)
					return func() error {
						if tc.fail {
							return errors.New("call failed")
						}
						calls.Add(1)
						return nil
					}
				})
			})
			if tc.fail {
				if r.N != 0 {
					t.Fatalf("N = %d for calls that fail, want a failed benchmark", r.N)
				}
				return
			}
			if got := calls.Load(); got != int64(r.N) || r.N == 0 {
				t.Errorf("%d calls for N = %d", got, r.N)
			}
			if got := callers.Load(); got != int64(tc.wantCallers) {
				t.Errorf("%d callers, want %d", got, tc.wantCallers)
			}
			if _, ok := r.Extra["cpu-ns/op"]; ok != (runtime.GOOS == "linux") {
				t.Errorf("cpu-ns/op reported: %v on %s", ok, runtime.GOOS)
			}
		})
	}
}

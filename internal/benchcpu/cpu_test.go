package benchcpu

import (
	"runtime"
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

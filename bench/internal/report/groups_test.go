package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompareGroups(t *testing.T) {
	row := func(impl string, c int, cps, cpu, allocs float64) Result {
		return Result{Impl: impl, C: c, CallsPerSec: cps, P50: 1e6 / cps, ClientCPU: cpu, ServerCPU: cpu / 2,
			ClientAllocs: allocs, ServerAllocs: allocs / 2}
	}
	tests := []struct {
		name string
		sum  []Result
		want []string
	}{
		{
			name: "groups apart from the plain rows, best peer first, no ratio of tiny figures",
			sum: []Result{
				row("yrpc", 1, 20000, 10, 4), row("grpc", 1, 5000, 40, 90),
				row("feed/yrpc", 1, 400000, 2, 1), row("feed/grpc", 1, 100000, 8, 10), row("feed/drpc", 1, 200000, 4, 6),
				row("echo/grpc", 1, 8000, 20, 30), row("nop/yrpc", 1, 10, 0, 0.01), row("nop/x", 1, 10, 0, 0.02),
			},
			want: []string{
				"c=1: yrpc 20,000 calls/s = 4.00× the best peer (grpc, 5,000 calls/s); p50 0.25×, p99 n/a",
				"c=1 feed: yrpc vs drpc (the best): calls/s 2.00× (400,000 vs 200,000), p50 0.50×; per call: CPU µs client 2.0 vs 4.0 (0.50×), server 1.0 vs 2.0 (0.50×); allocs client 1.0 vs 6.0 (0.17×), server 0.50 vs 3.0 (0.17×)",
				"c=1 feed: yrpc vs grpc: calls/s 4.00× (400,000 vs 100,000), p50 0.25×; per call: CPU µs client 2.0 vs 8.0 (0.25×), server 1.0 vs 4.0 (0.25×); allocs client 1.0 vs 10.0 (0.10×), server 0.50 vs 5.0 (0.10×)",
				"c=1 nop: yrpc vs x: calls/s 1.00× (10 vs 10), p50 1.00×; per call: CPU µs client 0.00 vs 0.00, server 0.00 vs 0.00; allocs client 0.01 vs 0.02, server 0.01 vs 0.01",
			},
		},
		{
			name: "groups only: no line about a missing yrpc row",
			sum:  []Result{row("native/yrpc", 64, 100000, 10, 3), row("native/yrpc-grpcoff", 64, 50000, 10, 3)},
			want: []string{
				"c=64 native: yrpc vs yrpc-grpcoff: calls/s 2.00× (100,000 vs 50,000), p50 0.50×; per call: CPU µs client 10.0 vs 10.0 (1.00×), server 5.0 vs 5.0 (1.00×); allocs client 3.0 vs 3.0 (1.00×), server 1.5 vs 1.5 (1.00×)",
			},
		},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Compare(tt.sum)); diff != "" {
			t.Errorf("%s: Compare (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestGroupRowRatios checks the table's ratio to the best peer for grouped
// rows: the best row of the same group and c that is not GROUP/yrpc*,
// never a plain row or another group's; none in a group of yrpc rows only.
func TestGroupRowRatios(t *testing.T) {
	rows := []Result{
		{Impl: "grpc", C: 1, CallsPerSec: 1000000},
		{Impl: "feed/yrpc", C: 1, CallsPerSec: 400000},
		{Impl: "feed/grpc", C: 1, CallsPerSec: 100000},
		{Impl: "feed/drpc", C: 1, CallsPerSec: 200000},
		{Impl: "echo/yrpc", C: 1, CallsPerSec: 15000},
		{Impl: "echo/grpc", C: 1, CallsPerSec: 30000},
		{Impl: "echo/grpc", C: 64, CallsPerSec: 50000},
		{Impl: "native/yrpc", C: 1, CallsPerSec: 20000},
		{Impl: "native/yrpc-grpcoff", C: 1, CallsPerSec: 21000},
		{Impl: "yrpc", C: 1, CallsPerSec: 20000},
	}
	want := []string{"1.00×", "2.00×", "0.50×", "1.00×", "0.50×", "1.00×", "1.00×", "–", "–", "0.02×"}
	for i, r := range rows {
		if got := vsBest(r, rows); got != want[i] {
			t.Errorf("%s c=%d: × best peer %s, want %s", r.Impl, r.C, got, want[i])
		}
	}
}

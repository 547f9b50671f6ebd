package report_test

import (
	"fmt"

	"github.com/yrpc/yrpc/bench/internal/report"
)

func ExampleCompare() {
	sum := []report.Result{
		{Impl: "yrpc", C: 64, CallsPerSec: 54000, P50: 1100, P99: 3000},
		{Impl: "grpc", C: 64, CallsPerSec: 17300, P50: 3359, P99: 9666},
		{Impl: "netrpc", C: 64, CallsPerSec: 27000, P50: 2151, P99: 6874},
	}
	for _, line := range report.Compare(sum) {
		fmt.Println(line)
	}
	// Output: c=64: yrpc 54,000 calls/s = 2.00× the best peer (netrpc, 27,000 calls/s); p50 0.51×, p99 0.44×
}

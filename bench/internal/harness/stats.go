package harness

import (
	"math"
	"slices"
	"time"
)

func sortDurations(d []time.Duration) { slices.Sort(d) }

// Percentile returns the q-quantile (0 <= q <= 1) of sorted latencies by the
// nearest-rank method, or 0 for an empty slice.
func Percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	// Nearest rank: the smallest value with at least q of the samples at
	// or below it.
	rank := int(math.Ceil(q * float64(len(sorted))))
	rank = max(1, min(rank, len(sorted)))
	return sorted[rank-1]
}

// Mean returns the mean latency, or 0 for an empty slice.
func Mean(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}

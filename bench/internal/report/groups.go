package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Grouped rows are named GROUP/IMPL ("feed/grpc"): one benchmark run by
// several implementations, compared within their group only. In a feed
// group a call is one streamed message; in an echo group one round trip
// on a stream.

// grouped reports whether impl names a grouped row.
func grouped(impl string) bool { return strings.Contains(impl, "/") }

// splitGroup returns the group and the implementation of a grouped row's
// name ("feed/grpc": "feed", "grpc"), and "" and impl for another row.
func splitGroup(impl string) (group, name string) {
	if g, n, ok := strings.Cut(impl, "/"); ok {
		return g, n
	}
	return "", impl
}

// compareGroups returns, for each group of rows (all of concurrency c),
// GROUP/yrpc against every other row of the group, the best (by calls/s)
// first and so marked when there are several: calls/s, p50, and each process's CPU time and allocations per
// call with their ratios.
func compareGroups(c int, rows []Result) []string {
	var groups []string
	byGroup := map[string][]Result{}
	for _, r := range rows {
		g, _, _ := strings.Cut(r.Impl, "/")
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], r)
	}
	var lines []string
	for _, g := range groups {
		rs := byGroup[g]
		y := find(rs, g+"/"+YRPC)
		if y == nil {
			continue
		}
		var others []Result
		for _, r := range rs {
			if r.Impl != y.Impl {
				others = append(others, r)
			}
		}
		slices.SortStableFunc(others, func(a, b Result) int { return cmp.Compare(b.CallsPerSec, a.CallsPerSec) })
		for i, r := range others {
			best := ""
			if i == 0 && len(others) > 1 {
				best = " (the best)"
			}
			_, name, _ := strings.Cut(r.Impl, "/")
			lines = append(lines, fmt.Sprintf("c=%d %s: yrpc vs %s%s: calls/s %s (%s vs %s), p50 %s; per call: CPU µs client %s, server %s; allocs client %s, server %s",
				c, g, name, best, ratio(y.CallsPerSec, r.CallsPerSec), Thousands(y.CallsPerSec), Thousands(r.CallsPerSec),
				ratio(y.P50, r.P50), versus(y.ClientCPU, r.ClientCPU), versus(y.ServerCPU, r.ServerCPU),
				versus(y.ClientAllocs, r.ClientAllocs), versus(y.ServerAllocs, r.ServerAllocs)))
		}
	}
	return lines
}

// versus formats "a vs b (a/b×)" with one decimal, two below 1; without
// the ratio when b is under 0.05, where it means nothing.
func versus(a, b float64) string {
	f := func(v float64) string {
		if v < 1 {
			return strconv.FormatFloat(v, 'f', 2, 64)
		}
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	if b < 0.05 {
		return f(a) + " vs " + f(b)
	}
	return fmt.Sprintf("%s vs %s (%s)", f(a), f(b), ratio(a, b))
}

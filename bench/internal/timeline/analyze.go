package timeline

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Bucket is the width of the windows in which Analyze measures how
// bunched the slow calls are.
const Bucket = 5 * time.Millisecond

// Summary is what Analyze finds in one client's phase.
type Summary struct {
	Impl string
	C    int
	// Calls is how many calls were compared, of Total: those that started
	// after the oldest collection a process still knew of, when it knew
	// only its last 256 (runtime.MemStats keeps no more), so that no
	// collection under way is missed.
	Calls, Total int
	// P50 and P99 are of all the calls.
	P50, P99 time.Duration
	// ClientGCs and ServerGCs count the collections that ended during the
	// phase in each process.
	ClientGCs, ServerGCs int
	// All and Slow are the shares of all calls and of the slowest 1 %
	// whose span meets the window before the end of a collection: of the
	// client, of the server, of either.
	All, Slow [3]float64
	// Bunched is the share of the slowest 1 % of all the calls that
	// started in the busiest tenth of the phase's Bucket windows: near 1
	// when they come in bursts, near 0.1 when they are spread evenly (so
	// long as there are several times more of them than windows, as in a
	// bench phase: 1,500 in about 200 windows).
	Bunched float64
}

// Analyze compares the slowest 1 % of client's calls with all of them:
// how often each meets a collection of the client or of server (a
// collection's span is taken as the window before its end), and how
// bunched in time they are.
func Analyze(client, server *File, window time.Duration) (Summary, error) {
	n := len(client.Starts)
	if n == 0 || len(client.Took) != n {
		return Summary{}, fmt.Errorf("timeline: %s c=%d: no calls", client.Impl, client.C)
	}
	s := Summary{Impl: client.Impl, C: client.C, Total: n}
	sorted := slices.Clone(client.Took)
	slices.Sort(sorted)
	s.P50, s.P99 = sorted[n/2], sorted[min(n*99/100, n-1)]

	first, last := client.Starts[0], client.Starts[0]
	for i, st := range client.Starts {
		first = min(first, st)
		last = max(last, st+int64(client.Took[i]))
	}
	from := first // calls from here on are compared
	for _, f := range []*File{client, server} {
		if f != nil && len(f.GCEnds) >= len(runtime.MemStats{}.PauseEnd) {
			from = max(from, slices.Min(f.GCEnds))
		}
	}
	during := func(ends []int64) []int64 {
		var in []int64
		for _, e := range ends {
			if e >= first && e-int64(window) <= last {
				in = append(in, e)
			}
		}
		slices.Sort(in)
		return in
	}
	cli := during(client.GCEnds)
	var srv []int64
	if server != nil {
		srv = during(server.GCEnds)
	}
	s.ClientGCs, s.ServerGCs = len(cli), len(srv)
	both := slices.Sorted(slices.Values(append(slices.Clone(cli), srv...)))

	var slow int
	var all, slowHits [3]int
	for i, st := range client.Starts {
		if st < from {
			continue
		}
		s.Calls++
		end := st + int64(client.Took[i])
		isSlow := client.Took[i] >= s.P99
		if isSlow {
			slow++
		}
		for k, ends := range [3][]int64{cli, srv, both} {
			if meets(ends, st, end, window) {
				all[k]++
				if isSlow {
					slowHits[k]++
				}
			}
		}
	}
	for k := range all {
		s.All[k] = ratio(all[k], s.Calls)
		s.Slow[k] = ratio(slowHits[k], slow)
	}
	s.Bunched = bunched(client, s.P99, first, last)
	return s, nil
}

// ratio returns a/b, or 0 when b is 0.
func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// meets reports whether the span [start, end] meets [e-window, e] for an
// e of ends (sorted).
func meets(ends []int64, start, end int64, window time.Duration) bool {
	i, _ := slices.BinarySearch(ends, start)
	return i < len(ends) && ends[i]-int64(window) <= end
}

// bunched returns the share of the calls that took p99 or more that
// started in the busiest tenth of the Bucket windows from first to last.
func bunched(f *File, p99 time.Duration, first, last int64) float64 {
	counts := make([]int, (last-first)/int64(Bucket)+1)
	total := 0
	for i, st := range f.Starts {
		if f.Took[i] >= p99 {
			counts[(st-first)/int64(Bucket)]++
			total++
		}
	}
	slices.Sort(counts)
	slices.Reverse(counts)
	top := 0
	for _, c := range counts[:max(len(counts)/10, 1)] {
		top += c
	}
	return ratio(top, total)
}

// Markdown returns the summaries as a markdown table.
func Markdown(sums []Summary, window time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| impl | c | calls compared | p50 µs | p99 µs | GCs cli / srv | meet a client GC: all → slowest 1 %% | a server GC | either | slowest 1 %% in the busiest 10 %% of %v windows |\n", Bucket)
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	pct := func(all, slow float64) string { return fmt.Sprintf("%.0f %% → %.0f %%", 100*all, 100*slow) }
	us := func(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/float64(time.Microsecond)) }
	for _, s := range sums {
		calls := strconv.Itoa(s.Calls)
		if s.Calls < s.Total {
			calls += " of " + strconv.Itoa(s.Total)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %d / %d | %s | %s | %s | %.0f %% |\n",
			s.Impl, s.C, calls, us(s.P50), us(s.P99), s.ClientGCs, s.ServerGCs,
			pct(s.All[0], s.Slow[0]), pct(s.All[1], s.Slow[1]), pct(s.All[2], s.Slow[2]), 100*s.Bunched)
	}
	fmt.Fprintf(&b, "\nA call meets a collection when its span meets the %v before the collection's end.\n", window)
	return b.String()
}

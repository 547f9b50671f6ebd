package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// noise is the run-to-run difference that figures on the shared 2-core
// machine show without any change (README.md): growth within it is not
// counted against a curve.
const noise = 1.2

// SweepRows returns the summary rows of sweep, in summary order.
func SweepRows(f *File, sweep string) []Result {
	var rows []Result
	for _, r := range f.Summary {
		if r.Sweep == sweep {
			rows = append(rows, r)
		}
	}
	return rows
}

// sweepTitle describes what a sweep varies and how it is measured.
func sweepTitle(sw Sweep) string {
	switch sw.Name {
	case SweepSize:
		return fmt.Sprintf("Message size: one client connection (drpc and the ping-pong: one per worker), c=%d", sw.C)
	case SweepFanIn:
		return fmt.Sprintf("Fan-in: %d workers in one client process over N client connections (N clients) to one server", sw.C)
	case SweepProviders:
		return fmt.Sprintf("Providers: one client, c=%d, balancing over N servers (N listeners in one server process)", sw.C)
	}
	return sw.Name
}

// xName names a sweep's varied figure, for table headers and axes.
func xName(sweep string) string {
	switch sweep {
	case SweepSize:
		return "request"
	case SweepFanIn:
		return "connections"
	case SweepProviders:
		return "providers"
	}
	return "c"
}

// FormatX formats a sweep's value: bytes for SweepSize (64 B, 16 KiB,
// 1 MiB), a plain number otherwise.
func FormatX(sweep string, x int) string {
	if sweep != SweepSize {
		return strconv.Itoa(x)
	}
	switch {
	case x >= 1<<20 && x%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", x>>20)
	case x >= 1<<10 && x%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", x>>10)
	}
	return fmt.Sprintf("%d B", x)
}

func curveColumns(sweep string) []string {
	cols := []string{"impl", xName(sweep), "calls/s", "× best peer", "p50 µs", "p99 µs", "p99/p50",
		"cli CPU µs", "srv CPU µs", "cli allocs", "srv allocs", "cli B", "srv B"}
	if sweep == SweepSize {
		cols = append(cols, "cli B ÷ size", "srv B ÷ size")
	}
	return append(cols, "srv conns", "srv RSS MiB", "srv peak MiB", "errors")
}

func curveCells(r Result, rows []Result) []string {
	c := []string{r.Impl, FormatX(r.Sweep, r.X()), Thousands(r.CallsPerSec), vsBest(r, rows),
		micros(r.P50), micros(r.P99), spread(r), cpu(r.ClientCPU), cpu(r.ServerCPU),
		strconv.FormatFloat(r.ClientAllocs, 'f', 1, 64), strconv.FormatFloat(r.ServerAllocs, 'f', 1, 64),
		Thousands(r.ClientBytes), Thousands(r.ServerBytes)}
	if r.Sweep == SweepSize {
		c = append(c, copies(r.ClientBytes, r.X()), copies(r.ServerBytes, r.X()))
	}
	return append(c, count(r.ServerConns), mib(r.ServerRSS), mib(r.ServerPeakRSS), strconv.Itoa(r.Errors))
}

// count formats a count that 0 marks as unknown.
func count(n int) string {
	if n == 0 {
		return "?"
	}
	return strconv.Itoa(n)
}

func copies(bytes float64, size int) string {
	return strconv.FormatFloat(bytes/float64(size), 'f', 2, 64)
}

func mib(v float64) string {
	if v == 0 {
		return "?"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// WriteCurves writes a cost-curve run as markdown: the machine, then per
// sweep its method, a table of every point and the growth lines.
func WriteCurves(w io.Writer, f *File) error {
	var b strings.Builder
	m := f.Machine
	fmt.Fprintf(&b, "machine: %s, %d cores, %s, kernel %s, %s\n\n", m.CPU, m.Cores, m.GoVersion, m.Kernel, m.OSArch)
	if m.LoadStart != "" || m.LoadEnd != "" {
		fmt.Fprintf(&b, "load average (1, 5, 15 min): %s at start, %s at end\n\n", m.LoadStart, m.LoadEnd)
	}
	fmt.Fprintf(&b, "method: server and client processes, GOMAXPROCS=%d each; %d repeat(s), implementations interleaved at each point; figures are medians over repeats; %.0f%% warm-up\n\n",
		f.Settings.Procs, f.Settings.Repeats, f.Settings.Warmup*100)
	b.WriteString("versions: " + strings.Join(f.Settings.Versions, ", ") + "\n\n")
	if f.Settings.Quick {
		b.WriteString("QUICK smoke run: too few calls for the figures to mean anything\n\n")
	}
	for _, sw := range f.Settings.Curves {
		rows := SweepRows(f, sw.Name)
		fmt.Fprintf(&b, "### %s\n\n", sweepTitle(sw))
		calls := fmt.Sprintf("%s counted calls per point", Thousands(float64(sw.Calls)))
		if sw.CallBytes > 0 {
			calls = fmt.Sprintf("at most %s counted calls per point and at most %s bytes of requests (at least 1,000 calls)",
				Thousands(float64(sw.Calls)), Thousands(float64(sw.CallBytes)))
		}
		fmt.Fprintf(&b, "%s; chart: %s.svg\n\n", calls, sw.Name)
		cols := curveColumns(sw.Name)
		b.WriteString("| " + strings.Join(cols, " | ") + " |\n")
		b.WriteString("|" + strings.Repeat("---|", len(cols)) + "\n")
		for _, r := range rows {
			b.WriteString("| " + strings.Join(curveCells(r, rows), " | ") + " |\n")
		}
		b.WriteString("\n")
		for _, l := range Growth(sw.Name, rows) {
			b.WriteString("- " + l + "\n")
		}
		if sw.Name == SweepSize {
			for _, l := range Copies(rows) {
				b.WriteString("- " + l + "\n")
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// metric is one per-call figure whose growth along a sweep is judged.
type metric struct {
	name  string
	value func(Result) float64
}

var growthMetrics = []metric{
	{"client CPU", func(r Result) float64 { return r.ClientCPU }},
	{"server CPU", func(r Result) float64 { return r.ServerCPU }},
	{"p50", func(r Result) float64 { return r.P50 }},
	{"client B", func(r Result) float64 { return r.ClientBytes }},
	{"server B", func(r Result) float64 { return r.ServerBytes }},
}

// Exponent returns the growth exponent of y from (x1, y1) to (x2, y2):
// y grows as x^e. 1 is linear. ok is false when a value is not positive
// or x does not change.
func Exponent(x1, y1, x2, y2 float64) (e float64, ok bool) {
	if x1 <= 0 || x2 <= 0 || y1 <= 0 || y2 <= 0 || x1 == x2 {
		return 0, false
	}
	return math.Log(y2/y1) / math.Log(x2/x1), true
}

// Growth returns, for each implementation of a sweep's rows, how each
// per-call figure (CPU of each side, p50, allocated bytes of each side)
// grows between consecutive points: its exponents (y ∝ x^e; 1 is linear)
// and whether any step is worse than linear beyond the machine's noise
// (a ratio of 1.2 between two figures), that is e > 1 + log(1.2)/log(x2/x1).
func Growth(sweep string, rows []Result) []string {
	var lines []string
	for _, impl := range implsOf(rows) {
		pts := pointsOf(rows, impl)
		if len(pts) < 2 {
			continue
		}
		var parts, worse []string
		for _, m := range growthMetrics {
			var es []string
			for i := 1; i < len(pts); i++ {
				a, b := pts[i-1], pts[i]
				e, ok := Exponent(float64(a.X()), m.value(a), float64(b.X()), m.value(b))
				if !ok {
					es = append(es, "?")
					continue
				}
				es = append(es, strconv.FormatFloat(e, 'f', 2, 64))
				if e > 1+math.Log(noise)/math.Log(float64(b.X())/float64(a.X())) {
					worse = append(worse, fmt.Sprintf("%s %s→%s (%.2f)", m.name, FormatX(sweep, a.X()), FormatX(sweep, b.X()), e))
				}
			}
			first, last := m.value(pts[0]), m.value(pts[len(pts)-1])
			parts = append(parts, fmt.Sprintf("%s %s (%s)", m.name, ratio(last, first), strings.Join(es, " ")))
		}
		verdict := "no step worse than linear"
		if len(worse) > 0 {
			verdict = "WORSE than linear: " + strings.Join(worse, ", ")
		}
		lines = append(lines, fmt.Sprintf("%s, %s → %s (×%s): %s; %s",
			impl, FormatX(sweep, pts[0].X()), FormatX(sweep, pts[len(pts)-1].X()),
			trimZeros(strconv.FormatFloat(float64(pts[len(pts)-1].X())/float64(pts[0].X()), 'f', 1, 64)),
			strings.Join(parts, ", "), verdict))
	}
	if len(lines) > 0 {
		lines = append([]string{"growth per call from the first point to the last, with the exponent of each step in parentheses (figure ∝ x^e; 1 is linear, 0 flat):"}, lines...)
	}
	return lines
}

// copyLimit is the most copies of itself a message may need per side
// (issue 16).
const copyLimit = 2

// Copies returns, for each implementation of the size sweep's rows, the
// bytes each side allocates per call divided by the request size at the
// sizes of 16 KiB and more (where the fixed cost of a call no longer
// counts), and whether that stays within 2 copies per side.
func Copies(rows []Result) []string {
	var lines []string
	for _, impl := range implsOf(rows) {
		var cli, srv, at []string
		over := false
		for _, r := range pointsOf(rows, impl) {
			if r.X() < 16<<10 {
				continue
			}
			at = append(at, FormatX(SweepSize, r.X()))
			cli = append(cli, copies(r.ClientBytes, r.X()))
			srv = append(srv, copies(r.ServerBytes, r.X()))
			over = over || r.ClientBytes > copyLimit*float64(r.X()) || r.ServerBytes > copyLimit*float64(r.X())
		}
		if len(at) == 0 {
			continue
		}
		verdict := fmt.Sprintf("within %d copies per side", copyLimit)
		if over {
			verdict = fmt.Sprintf("MORE than %d copies on a side", copyLimit)
		}
		lines = append(lines, fmt.Sprintf("%s: allocated bytes per call ÷ request size at %s: client %s, server %s: %s",
			impl, strings.Join(at, ", "), strings.Join(cli, ", "), strings.Join(srv, ", "), verdict))
	}
	return lines
}

// implsOf returns the implementations of rows in order of appearance.
func implsOf(rows []Result) []string {
	var impls []string
	for _, r := range rows {
		if !slices.Contains(impls, r.Impl) {
			impls = append(impls, r.Impl)
		}
	}
	return impls
}

// pointsOf returns impl's rows, by the sweep's value.
func pointsOf(rows []Result, impl string) []Result {
	var pts []Result
	for _, r := range rows {
		if r.Impl == impl {
			pts = append(pts, r)
		}
	}
	slices.SortStableFunc(pts, func(a, b Result) int { return a.X() - b.X() })
	return pts
}

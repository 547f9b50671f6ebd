package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// YRPC is the name of the implementation the comparisons are about, and
// YRPCTLS its variant over TLS, compared with the other TLS rows and with
// YRPC.
const (
	YRPC    = "yrpc"
	YRPCTLS = "yrpc-tls"
)

var columns = []string{"impl", "c", "calls/s", "× best peer", "p50 µs", "p99 µs", "p99.9 µs", "p99/p50",
	"cli allocs", "cli B", "srv allocs", "srv B", "cli CPU µs", "srv CPU µs", "errors"}

// cells renders r, a row of rows (the summary), for the side-by-side table.
func cells(r Result, rows []Result) []string {
	return []string{
		r.Impl, strconv.Itoa(r.C), Thousands(r.CallsPerSec), vsBest(r, rows),
		micros(r.P50), micros(r.P99), micros(r.P999), spread(r),
		strconv.FormatFloat(r.ClientAllocs, 'f', 1, 64), Thousands(r.ClientBytes),
		strconv.FormatFloat(r.ServerAllocs, 'f', 1, 64), Thousands(r.ServerBytes),
		cpu(r.ClientCPU), cpu(r.ServerCPU),
		strconv.Itoa(r.Errors),
	}
}

// idleColumns are the columns of the idle table ("bench run -idle").
var idleColumns = []string{"impl", "c", "cli idle CPU %", "srv idle CPU %", "cli wake-ups/s", "srv wake-ups/s"}

// idleCells renders r for the idle table.
func idleCells(r Result) []string {
	pct := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	rate := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	return []string{r.Impl, strconv.Itoa(r.C), pct(r.ClientIdleCPU), pct(r.ServerIdleCPU), rate(r.ClientIdleWakeups), rate(r.ServerIdleWakeups)}
}

// opsColumns are the columns of the table of wake-ups and system calls
// per call, shown when they were measured.
var opsColumns = []string{"impl", "c", "cli wake-ups/call", "srv wake-ups/call", "cli read+write syscalls/call", "srv read+write syscalls/call"}

// opsCells renders r for the table of wake-ups and system calls.
func opsCells(r Result) []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	return []string{r.Impl, strconv.Itoa(r.C), f(r.ClientWakeups), f(r.ServerWakeups), f(r.ClientSyscalls), f(r.ServerSyscalls)}
}

// hasOps reports whether any row of rows has wake-ups or system calls
// measured (none are on a system without /proc).
func hasOps(rows []Result) bool {
	return slices.ContainsFunc(rows, func(r Result) bool {
		return r.ClientWakeups > 0 || r.ServerWakeups > 0 || r.ClientSyscalls > 0 || r.ServerSyscalls > 0
	})
}

// extra is a table printed under the main one.
type extra struct {
	columns []string
	cells   func(Result) []string
}

// extras returns the tables that follow the main one in f's output:
// wake-ups and system calls per call when they were measured, the idle
// figures with -idle.
func extras(f *File) []extra {
	var ts []extra
	if hasOps(f.Summary) {
		ts = append(ts, extra{opsColumns, opsCells})
	}
	if f.Settings.IdleSeconds > 0 {
		ts = append(ts, extra{idleColumns, idleCells})
	}
	return ts
}

// IsYRPC reports whether impl is a build of yrpc (yrpc, yrpc-tls,
// yrpc-lz4, or one of them from another binary, NAME@BINARY): the rows
// that are not peers.
func IsYRPC(impl string) bool {
	base, _, _ := strings.Cut(impl, "@")
	return base == YRPC || strings.HasPrefix(base, YRPC+"-")
}

// bestPeer returns the peer of highest calls/s at r's point among rows:
// not yrpc, not a reference line, over TLS exactly when r is, of r's group
// when r is a grouped row (GROUP/IMPL, IMPL not yrpc) and of no group
// otherwise; nil if none.
func bestPeer(r Result, rows []Result) *Result {
	var best *Result
	group, _ := splitGroup(r.Impl)
	for i := range rows {
		p := &rows[i]
		pg, pname := splitGroup(p.Impl)
		if p.Ref || IsYRPC(pname) || pg != group || p.TLS != r.TLS || p.Sweep != r.Sweep || p.C != r.C || p.X() != r.X() {
			continue
		}
		if best == nil || p.CallsPerSec > best.CallsPerSec {
			best = p
		}
	}
	return best
}

// vsBest formats r's calls/s as a multiple of its best peer's, or "–"
// when there is none.
func vsBest(r Result, rows []Result) string {
	if b := bestPeer(r, rows); b != nil && b.CallsPerSec > 0 {
		return ratio(r.CallsPerSec, b.CallsPerSec)
	}
	return "–"
}

// spread formats p99/p50, the width of the tail.
func spread(r Result) string {
	if r.P50 <= 0 {
		return "–"
	}
	return strconv.FormatFloat(r.P99/r.P50, 'f', 1, 64)
}

// Header returns the lines that describe the machine and the settings.
func Header(f *File) []string {
	m, s := f.Machine, f.Settings
	lines := []string{
		fmt.Sprintf("machine: %s, %d cores, %s, kernel %s, %s", m.CPU, m.Cores, m.GoVersion, m.Kernel, m.OSArch),
		fmt.Sprintf("method: server and client processes, GOMAXPROCS=%d each; c=%s; %s calls at c=1, %s otherwise, after %.0f%% warm-up; %d repeat(s), implementations interleaved; figures are medians over repeats",
			s.Procs, joinInts(s.Conc), Thousands(float64(s.Calls1)), Thousands(float64(s.Calls)), s.Warmup*100, s.Repeats),
		"versions: " + strings.Join(s.Versions, ", "),
	}
	if m.LoadStart != "" || m.LoadEnd != "" {
		lines = append(lines, fmt.Sprintf("load average (1, 5, 15 min): %s at start, %s at end", m.LoadStart, m.LoadEnd))
	}
	if !s.YRPC {
		lines = append(lines, "yrpc: not included (the module did not build with -tags yrpc)")
	}
	if slices.ContainsFunc(f.Summary, func(r Result) bool { return r.TLS }) {
		lines = append(lines, "tls: the -tls rows run over mutual TLS 1.3 (ECDSA P-256 certificates made for the run), the others in plaintext")
	}
	if s.Quick {
		lines = append(lines, "QUICK smoke run: too few calls for the figures to mean anything")
	}
	if hasOps(f.Summary) {
		lines = append(lines, "wake-ups and system calls: the second table gives, per counted call, how many times each process's threads were put on a CPU (/proc/PID/task/*/schedstat) and how many read and write system calls it made (/proc/PID/io syscr + syscw)")
	}
	if s.IdleSeconds > 0 {
		lines = append(lines, fmt.Sprintf("idle: after each measurement's calls both processes stayed connected and idle for %gs (after 1s to settle, or less for a shorter window); the idle table gives the CPU each used meanwhile, as a per cent of one core, and how many times per second its threads were put on a CPU (/proc/PID/task/*/schedstat)",
			s.IdleSeconds))
	}
	return lines
}

// WriteTable writes the header and the summary as an aligned text table.
func WriteTable(w io.Writer, f *File) error {
	for _, l := range Header(f) {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(columns, "\t")+"\t")
	prevC := -1
	for _, r := range f.Summary {
		if r.C != prevC && prevC != -1 {
			fmt.Fprintln(tw, strings.Repeat("\t", len(columns)))
		}
		prevC = r.C
		fmt.Fprintln(tw, strings.Join(cells(r, f.Summary), "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, x := range extras(f) {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, strings.Join(x.columns, "\t")+"\t")
		for _, r := range f.Summary {
			fmt.Fprintln(tw, strings.Join(x.cells(r), "\t")+"\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// WriteMarkdown writes the header and the summary as a markdown table,
// followed by the comparison lines.
func WriteMarkdown(w io.Writer, f *File) error {
	var b strings.Builder
	for _, l := range Header(f) {
		b.WriteString(l + "\n\n")
	}
	b.WriteString("| " + strings.Join(columns, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat("---|", len(columns)) + "\n")
	for _, r := range f.Summary {
		b.WriteString("| " + strings.Join(cells(r, f.Summary), " | ") + " |\n")
	}
	for _, x := range extras(f) {
		b.WriteString("\n| " + strings.Join(x.columns, " | ") + " |\n")
		b.WriteString("|" + strings.Repeat("---|", len(x.columns)) + "\n")
		for _, r := range f.Summary {
			b.WriteString("| " + strings.Join(x.cells(r), " | ") + " |\n")
		}
	}
	b.WriteString("\n")
	for _, l := range Compare(f.Summary) {
		b.WriteString("- " + l + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Compare returns, for each c, yrpc's calls/s and latency against the best
// peer (reference lines left out) and against each reference line; then,
// when TLS rows were measured, yrpc-tls against the best TLS peer, and
// what TLS costs yrpc (yrpc-tls against yrpc, with CPU per call); then
// the grouped rows (GROUP/IMPL) within their groups.
func Compare(sum []Result) []string {
	var lines []string
	for _, c := range concs(sum) {
		var plain, secure, groups []Result
		for _, r := range sum {
			switch {
			case r.C != c:
			case grouped(r.Impl):
				groups = append(groups, r)
			case r.TLS:
				secure = append(secure, r)
			default:
				plain = append(plain, r)
			}
		}
		lines = append(lines, compareWith(c, YRPC, "peer", plain)...)
		lines = append(lines, compareWith(c, YRPCTLS, "TLS peer", secure)...)
		lines = append(lines, compareGroups(c, groups)...)
		y, yt := find(plain, YRPC), find(secure, YRPCTLS)
		if y != nil && yt != nil {
			lines = append(lines, fmt.Sprintf("c=%d: yrpc with TLS vs without: calls/s %s, p50 %s (%s vs %s µs), p99 %s; CPU µs per call: client %s → %s, server %s → %s",
				c, ratio(yt.CallsPerSec, y.CallsPerSec), ratio(yt.P50, y.P50), micros(yt.P50), micros(y.P50), ratio(yt.P99, y.P99),
				cpu(y.ClientCPU), cpu(yt.ClientCPU), cpu(y.ServerCPU), cpu(yt.ServerCPU)))
		}
	}
	return lines
}

// compareWith compares the row named name of rows, all of concurrency c,
// with the best other row that is not a reference line ("the best
// <kind>"), and with each reference line.
func compareWith(c int, name, kind string, rows []Result) []string {
	var y, best *Result
	var refs, builds []*Result
	for i := range rows {
		r := &rows[i]
		switch {
		case r.Impl == name:
			y = r
		case r.Ref:
			refs = append(refs, r)
		case IsYRPC(r.Impl): // another build or variant of yrpc is no peer
			builds = append(builds, r)
		case best == nil || r.CallsPerSec > best.CallsPerSec:
			best = r
		}
	}
	var lines []string
	switch {
	case y == nil && best == nil:
		return nil
	case y == nil:
		return []string{fmt.Sprintf("c=%d: %s not measured; best %s %s %s calls/s", c, name, kind, best.Impl, Thousands(best.CallsPerSec))}
	case best != nil:
		lines = append(lines, fmt.Sprintf("c=%d: %s %s calls/s = %s the best %s (%s, %s calls/s); p50 %s, p99 %s",
			c, name, Thousands(y.CallsPerSec), ratio(y.CallsPerSec, best.CallsPerSec), kind, best.Impl, Thousands(best.CallsPerSec),
			ratio(y.P50, best.P50), ratio(y.P99, best.P99)))
	}
	for _, r := range refs {
		lines = append(lines, fmt.Sprintf("c=%d: %s vs %s: calls/s %s, p50 %s (%s vs %s µs)",
			c, name, r.Impl, ratio(y.CallsPerSec, r.CallsPerSec), ratio(y.P50, r.P50), micros(y.P50), micros(r.P50)))
	}
	for _, r := range builds {
		lines = append(lines, fmt.Sprintf("c=%d: %s vs %s: calls/s %s, p50 %s, p99 %s; CPU µs per call: client %s vs %s, server %s vs %s",
			c, name, r.Impl, ratio(y.CallsPerSec, r.CallsPerSec), ratio(y.P50, r.P50), ratio(y.P99, r.P99),
			cpu(y.ClientCPU), cpu(r.ClientCPU), cpu(y.ServerCPU), cpu(r.ServerCPU)))
	}
	return lines
}

// find returns the row named impl, or nil.
func find(rows []Result, impl string) *Result {
	for i := range rows {
		if rows[i].Impl == impl {
			return &rows[i]
		}
	}
	return nil
}

// cpu formats a CPU time per call in µs; "?" when unknown (0).
func cpu(us float64) string {
	if us == 0 {
		return "?"
	}
	return strconv.FormatFloat(us, 'f', 1, 64)
}

// concs returns the distinct concurrencies of sum in order of appearance.
func concs(sum []Result) []int {
	var cs []int
	for _, r := range sum {
		if len(cs) == 0 || cs[len(cs)-1] != r.C {
			cs = append(cs, r.C)
		}
	}
	return cs
}

func ratio(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64) + "×"
}

// micros formats microseconds: one decimal below 100, none above.
func micros(us float64) string {
	if us < 100 {
		return strconv.FormatFloat(us, 'f', 1, 64)
	}
	return Thousands(us)
}

// Thousands formats v rounded to an integer with comma separators.
func Thousands(v float64) string {
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	return b.String()
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// YRPC is the name of the implementation the comparisons are about.
const YRPC = "yrpc"

var columns = []string{"impl", "c", "calls/s", "p50 µs", "p99 µs", "p99.9 µs",
	"cli allocs", "cli B", "srv allocs", "srv B", "cli CPU µs", "srv CPU µs", "errors"}

func cells(r Result) []string {
	return []string{
		r.Impl, strconv.Itoa(r.C), Thousands(r.CallsPerSec),
		micros(r.P50), micros(r.P99), micros(r.P999),
		strconv.FormatFloat(r.ClientAllocs, 'f', 1, 64), Thousands(r.ClientBytes),
		strconv.FormatFloat(r.ServerAllocs, 'f', 1, 64), Thousands(r.ServerBytes),
		strconv.FormatFloat(r.ClientCPU, 'f', 1, 64), strconv.FormatFloat(r.ServerCPU, 'f', 1, 64),
		strconv.Itoa(r.Errors),
	}
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
	if s.Quick {
		lines = append(lines, "QUICK smoke run: too few calls for the figures to mean anything")
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
		fmt.Fprintln(tw, strings.Join(cells(r), "\t")+"\t")
	}
	return tw.Flush()
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
		b.WriteString("| " + strings.Join(cells(r), " | ") + " |\n")
	}
	b.WriteString("\n")
	for _, l := range Compare(f.Summary) {
		b.WriteString("- " + l + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Compare returns, for each c, yrpc's calls/s and latency against the best
// peer (reference lines left out) and against each reference line.
func Compare(sum []Result) []string {
	var lines []string
	for _, c := range concs(sum) {
		var y, best *Result
		var refs []*Result
		for i := range sum {
			r := &sum[i]
			switch {
			case r.C != c:
			case r.Impl == YRPC:
				y = r
			case r.Ref:
				refs = append(refs, r)
			case best == nil || r.CallsPerSec > best.CallsPerSec:
				best = r
			}
		}
		switch {
		case y == nil && best == nil:
			continue
		case y == nil:
			lines = append(lines, fmt.Sprintf("c=%d: yrpc not measured; best peer %s %s calls/s", c, best.Impl, Thousands(best.CallsPerSec)))
			continue
		case best != nil:
			lines = append(lines, fmt.Sprintf("c=%d: yrpc %s calls/s = %s the best peer (%s, %s calls/s); p50 %s, p99 %s",
				c, Thousands(y.CallsPerSec), ratio(y.CallsPerSec, best.CallsPerSec), best.Impl, Thousands(best.CallsPerSec),
				ratio(y.P50, best.P50), ratio(y.P99, best.P99)))
		}
		for _, r := range refs {
			lines = append(lines, fmt.Sprintf("c=%d: yrpc vs %s: calls/s %s, p50 %s (%s vs %s µs)",
				c, r.Impl, ratio(y.CallsPerSec, r.CallsPerSec), ratio(y.P50, r.P50), micros(y.P50), micros(r.P50)))
		}
	}
	return lines
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

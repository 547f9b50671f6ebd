package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"
)

// Chart geometry, in SVG user units.
const (
	chartW     = 1000
	marginL    = 70
	marginR    = 210 // room for the legend
	panelH     = 300
	panelGap   = 90
	topPad     = 80
	groupPad   = 0.2 // fraction of a group's width left empty
	axisTicks  = 5
	labelFont  = 9
	legendLine = 18
)

// palette colours the implementations in order; reference lines are grey.
var palette = []string{"#d62728", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

var refPalette = []string{"#7f7f7f", "#c7c7c7", "#a0a0a0"}

// WriteSVG draws f.Summary as two panels of grouped bars, one group per c
// and one bar per implementation: calls/s on a linear axis capped a little
// above the best framework (bars over the cap, such as the pipelined echo,
// are drawn broken and labelled with their value), and p99 latency on a
// logarithmic axis.
func WriteSVG(w io.Writer, f *File) error {
	impls, cs := layout(f.Summary)
	rows := map[[2]any]Result{}
	for _, r := range f.Summary {
		rows[[2]any{r.Impl, r.C}] = r
	}
	colors := colorsFor(impls, f.Summary)
	height := topPad + 2*panelH + panelGap + 40
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartW, height, chartW, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	title := "Hello.Say, 581-byte request, 527-byte reply — separate client and server processes"
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", marginL, esc(title))
	fmt.Fprintf(&b, `<text x="%d" y="42" font-size="11" fill="#555">%s</text>`+"\n", marginL,
		esc(fmt.Sprintf("%s, %d cores, %s; medians of %d repeat(s)", f.Machine.CPU, f.Machine.Cores, f.Machine.GoVersion, f.Settings.Repeats)))

	// Calls/s: linear, capped at 1.2× the best non-reference bar.
	var capV float64
	for _, r := range f.Summary {
		if !r.Ref {
			capV = max(capV, r.CallsPerSec)
		}
	}
	if capV == 0 {
		for _, r := range f.Summary {
			capV = max(capV, r.CallsPerSec)
		}
	}
	capV = niceCeil(capV * 1.2)
	lin := func(v float64) float64 { return min(v, capV) / capV }
	ticks := make([]float64, axisTicks+1)
	for i := range ticks {
		ticks[i] = capV * float64(i) / axisTicks
	}
	panel(&b, topPad, "calls/s (higher is better)", impls, cs, rows, colors, ticks, lin,
		func(r Result) float64 { return r.CallsPerSec }, shortCount, capV)

	// p99: logarithmic.
	var p99s []float64
	for _, r := range f.Summary {
		if r.P99 > 0 {
			p99s = append(p99s, r.P99)
		}
	}
	logScale, lticks := logAxis(p99s)
	panel(&b, topPad+panelH+panelGap, "p99 latency (log scale, lower is better)", impls, cs, rows, colors, lticks, logScale,
		func(r Result) float64 { return r.P99 }, shortMicros, math.Inf(1))

	// Legend.
	lx := chartW - marginR + 20
	for i, impl := range impls {
		y := topPad + 10 + i*legendLine
		label := impl
		for _, r := range f.Summary {
			if r.Impl == impl {
				label = r.Label
				break
			}
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`, lx, y, colors[impl])
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10">%s</text>`+"\n", lx+16, y+10, esc(truncate(label, 30)))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// panel draws one set of grouped bars with its axis, top edge at y0. scale
// maps a value to [0, 1]; values above capV are drawn broken.
func panel(b *strings.Builder, y0 int, title string, impls []string, cs []int, rows map[[2]any]Result,
	colors map[string]string, ticks []float64, scale func(float64) float64, value func(Result) float64,
	format func(float64) string, capV float64) {
	plotW := float64(chartW - marginL - marginR)
	base := float64(y0 + panelH)
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>`+"\n", marginL, y0-10, esc(title))
	for _, t := range ticks {
		y := base - scale(t)*panelH
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e0e0e0"/>`, marginL, y, float64(marginL)+plotW, y)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" font-size="10" text-anchor="end">%s</text>`+"\n", marginL-6, y+3, esc(format(t)))
	}
	fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", marginL, base, float64(marginL)+plotW, base)
	if len(cs) == 0 || len(impls) == 0 {
		return
	}
	groupW := plotW / float64(len(cs))
	barW := groupW * (1 - groupPad) / float64(len(impls))
	for gi, c := range cs {
		gx := float64(marginL) + float64(gi)*groupW + groupW*groupPad/2
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">c = %d</text>`+"\n", gx+groupW*(1-groupPad)/2, base+18, c)
		for ii, impl := range impls {
			r, ok := rows[[2]any{impl, c}]
			if !ok {
				continue
			}
			v := value(r)
			h := scale(v) * panelH
			x := gx + float64(ii)*barW
			fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>`,
				x+1, base-h, barW-2, h, colors[impl], esc(fmt.Sprintf("%s, c=%d: %s", impl, c, format(v))))
			if v > capV {
				// A white zigzag across the top marks a broken bar.
				yb := base - h + 12
				fmt.Fprintf(b, `<path d="M%.1f %.1f l%.1f -4 l%.1f 8 l%.1f -4" stroke="white" stroke-width="3" fill="none"/>`,
					x, yb, barW/3, barW/3, barW/3)
			}
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="%d" text-anchor="middle">%s</text>`+"\n",
				x+barW/2, base-h-3, labelFont, esc(format(v)))
		}
	}
}

// layout returns the implementations and concurrencies of sum in order.
func layout(sum []Result) (impls []string, cs []int) {
	for _, r := range sum {
		if !slices.Contains(impls, r.Impl) {
			impls = append(impls, r.Impl)
		}
		if !slices.Contains(cs, r.C) {
			cs = append(cs, r.C)
		}
	}
	return impls, cs
}

func colorsFor(impls []string, sum []Result) map[string]string {
	ref := map[string]bool{}
	for _, r := range sum {
		ref[r.Impl] = r.Ref
	}
	colors := map[string]string{}
	pi, ri := 0, 0
	if slices.Contains(impls, YRPC) {
		colors[YRPC] = palette[0]
	}
	pi = 1
	for _, impl := range impls {
		switch {
		case impl == YRPC:
		case ref[impl]:
			colors[impl] = refPalette[ri%len(refPalette)]
			ri++
		default:
			colors[impl] = palette[pi%len(palette)]
			pi++
		}
	}
	return colors
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// shortCount formats a count compactly: 950, 17.3k, 1.17M.
func shortCount(v float64) string {
	switch {
	case v >= 1e6:
		return trimZeros(fmt.Sprintf("%.2f", v/1e6)) + "M"
	case v >= 1e4:
		return trimZeros(fmt.Sprintf("%.1f", v/1e3)) + "k"
	case v >= 1e3:
		return trimZeros(fmt.Sprintf("%.2f", v/1e3)) + "k"
	}
	return fmt.Sprintf("%.0f", v)
}

// shortMicros formats microseconds compactly: 28µs, 3.4ms.
func shortMicros(us float64) string {
	switch {
	case us >= 1e6:
		return trimZeros(fmt.Sprintf("%.2f", us/1e6)) + "s"
	case us >= 1e4:
		return fmt.Sprintf("%.0fms", us/1e3)
	case us >= 1e3:
		return trimZeros(fmt.Sprintf("%.1f", us/1e3)) + "ms"
	}
	return fmt.Sprintf("%.0fµs", us)
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func esc(s string) string { return html.EscapeString(s) }

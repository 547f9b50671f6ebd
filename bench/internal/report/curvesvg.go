package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Geometry of a curve chart: a grid of panels, two per row, in SVG user
// units.
const (
	curveW      = 1000
	curvePanelW = 390
	curvePanelH = 220
	curveLeft   = 80  // left edge of the first column's plot
	curveColGap = 110 // between the columns' plots
	curveTop    = 150 // top of the first row's plot
	curveRowGap = 85  // between the rows' plots
)

// curvePanel is one panel of a curve chart: one line per implementation
// (solid), optionally a second (dashed) for the other side or the tail.
type curvePanel struct {
	title         string
	log           bool
	solid, dashed func(Result) float64 // dashed may be nil
	ref           float64              // a dotted horizontal line, 0 for none
	refLabel      string
	format        func(float64) string
}

// curvePanels are the panels of sweep's chart. Byte counts below one and
// copies below 0.01 are drawn at that floor, so that a log axis does not
// spend its decades on what is nothing.
func curvePanels(sweep string) []curvePanel {
	ps := []curvePanel{
		{title: "calls/s", log: true, solid: func(r Result) float64 { return r.CallsPerSec }, format: shortCount},
		{title: "latency: p50, p99 (dashed)", log: true,
			solid: func(r Result) float64 { return r.P50 }, dashed: func(r Result) float64 { return r.P99 }, format: shortMicros},
		{title: "CPU per call: client, server (dashed)", log: true,
			solid: func(r Result) float64 { return r.ClientCPU }, dashed: func(r Result) float64 { return r.ServerCPU }, format: shortMicros},
	}
	if sweep == SweepSize {
		ps = append(ps, curvePanel{title: "allocated bytes ÷ request size: client, server (dashed)", log: true,
			solid:  func(r Result) float64 { return max(r.ClientBytes/float64(r.X()), 0.01) },
			dashed: func(r Result) float64 { return max(r.ServerBytes/float64(r.X()), 0.01) },
			ref:    copyLimit, refLabel: "2 copies", format: shortRatio})
	}
	return append(ps,
		curvePanel{title: "allocated bytes per call: client, server (dashed)", log: true,
			solid: func(r Result) float64 { return max(r.ClientBytes, 1) }, dashed: func(r Result) float64 { return max(r.ServerBytes, 1) },
			format: shortBytes},
		curvePanel{title: "server RSS MiB: after the calls, peak (dashed)", log: true,
			solid: func(r Result) float64 { return r.ServerRSS }, dashed: func(r Result) float64 { return r.ServerPeakRSS }, format: shortRatio},
	)
}

// WriteCurveSVG draws the rows of one sweep of f as a grid of line charts
// over the sweep's value (logarithmic), one colour per implementation.
func WriteCurveSVG(w io.Writer, f *File, sweep string) error {
	rows := SweepRows(f, sweep)
	impls := implsOf(rows)
	colors := colorsFor(impls, rows)
	var xs []int
	for _, r := range rows {
		if x := r.X(); !slices.Contains(xs, x) {
			xs = append(xs, x)
		}
	}
	panels := curvePanels(sweep)
	nrows := (len(panels) + 1) / 2
	height := curveTop + nrows*(curvePanelH+curveRowGap)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		curveW, height, curveW, height)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	title := "Cost curve: " + sweep
	for _, sw := range f.Settings.Curves {
		if sw.Name == sweep {
			title = sweepTitle(sw)
		}
	}
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", curveLeft-60, esc(title))
	fmt.Fprintf(&b, `<text x="%d" y="40" font-size="11" fill="#555">%s</text>`+"\n", curveLeft-60,
		esc(fmt.Sprintf("%s, %d cores, %s; medians of %d repeat(s); x: %s (log scale)", f.Machine.CPU, f.Machine.Cores,
			f.Machine.GoVersion, f.Settings.Repeats, xName(sweep))))
	for i, impl := range impls {
		x, y := curveLeft-60+(i%6)*160, 60+(i/6)*16
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d" font-size="10">%s</text>`+"\n",
			x, y, colors[impl], x+16, y+10, esc(truncate(impl, 24)))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" fill="#555">%s</text>`+"\n", curveLeft-60, 60+((len(impls)+5)/6)*16+8,
		esc("solid lines: client, p50, RSS after the calls; dashed: server, p99, peak RSS; versions in curves.md"))
	for i, p := range panels {
		x0 := curveLeft + (i%2)*(curvePanelW+curveColGap)
		y0 := curveTop + (i/2)*(curvePanelH+curveRowGap)
		drawCurvePanel(&b, x0, y0, p, sweep, xs, impls, rows, colors)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// drawCurvePanel draws one panel with its plot's top left corner at
// (x0, y0).
func drawCurvePanel(b *strings.Builder, x0, y0 int, p curvePanel, sweep string, xs []int, impls []string,
	rows []Result, colors map[string]string) {
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="12" font-weight="bold">%s</text>`+"\n", x0, y0-10, esc(p.title))
	// The x axis: the sweep's values on a logarithmic scale.
	lx, hx := math.Inf(1), 0.0
	for _, x := range xs {
		lx, hx = min(lx, float64(x)), max(hx, float64(x))
	}
	if hx <= lx {
		lx, hx = lx/2, lx*2
	}
	px := func(x int) float64 {
		return float64(x0) + 10 + math.Log(float64(x)/lx)/math.Log(hx/lx)*float64(curvePanelW-20)
	}
	// The y axis: logarithmic over whole decades, or linear from 0.
	var vals []float64
	for _, r := range rows {
		for _, f := range []func(Result) float64{p.solid, p.dashed} {
			if f != nil {
				if v := f(r); v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
					vals = append(vals, v)
				}
			}
		}
	}
	if p.ref > 0 {
		vals = append(vals, p.ref)
	}
	scale, ticks := linearAxis(vals)
	if p.log {
		scale, ticks = logAxis(vals)
	}
	py := func(v float64) float64 { return float64(y0+curvePanelH) - scale(v)*curvePanelH }
	for _, t := range ticks {
		y := py(t)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e0e0e0"/>`, x0, y, x0+curvePanelW, y)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" font-size="10" text-anchor="end">%s</text>`+"\n", x0-5, y+3, esc(p.format(t)))
	}
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", x0, y0, curvePanelW, curvePanelH)
	for _, x := range xs {
		fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>`+"\n",
			px(x), y0+curvePanelH+14, esc(FormatX(sweep, x)))
	}
	if p.ref > 0 {
		y := py(p.ref)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#555" stroke-dasharray="1,3"/>`, x0, y, x0+curvePanelW, y)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" font-size="9" fill="#555" text-anchor="end">%s</text>`+"\n", x0+curvePanelW-3, y-3, esc(p.refLabel))
	}
	for _, impl := range impls {
		pts := pointsOf(rows, impl)
		for _, s := range []struct {
			f    func(Result) float64
			dash string
		}{{p.solid, ""}, {p.dashed, ` stroke-dasharray="6,3"`}} {
			if s.f == nil {
				continue
			}
			var path []string
			for _, r := range pts {
				v := s.f(r)
				if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
					continue
				}
				path = append(path, fmt.Sprintf("%.1f,%.1f", px(r.X()), py(v)))
				fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"><title>%s</title></circle>`, px(r.X()), py(v), colors[impl],
					esc(fmt.Sprintf("%s, %s: %s", impl, FormatX(sweep, r.X()), p.format(v))))
			}
			if len(path) > 1 {
				fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.8"%s/>`+"\n",
					strings.Join(path, " "), colors[impl], s.dash)
			}
		}
	}
}

// logAxis maps values to [0, 1] over the whole decades that hold them and
// returns a tick per decade.
func logAxis(vals []float64) (func(float64) float64, []float64) {
	lo, hi := math.Inf(1), 0.0
	for _, v := range vals {
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi == 0 {
		lo, hi = 1, 10
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi*1.01)))
	scale := func(v float64) float64 {
		if v <= lo {
			return 0
		}
		return math.Log10(v/lo) / math.Log10(hi/lo)
	}
	var ticks []float64
	for t := lo; t <= hi*1.001; t *= 10 {
		ticks = append(ticks, t)
	}
	return scale, ticks
}

// linearAxis maps values to [0, 1] from 0 to a round number above them.
func linearAxis(vals []float64) (func(float64) float64, []float64) {
	hi := 0.0
	for _, v := range vals {
		hi = max(hi, v)
	}
	hi = niceCeil(hi * 1.1)
	ticks := make([]float64, axisTicks+1)
	for i := range ticks {
		ticks[i] = hi * float64(i) / axisTicks
	}
	return func(v float64) float64 { return min(v, hi) / hi }, ticks
}

// shortRatio formats a plain figure compactly: 0.25, 1.5, 12, 1.2k.
func shortRatio(v float64) string {
	switch {
	case v >= 1000:
		return shortCount(v)
	case v >= 10:
		return fmt.Sprintf("%.0f", v)
	case v < 0.1:
		return trimZeros(fmt.Sprintf("%.3f", v))
	}
	return trimZeros(fmt.Sprintf("%.2f", v))
}

// shortBytes formats a byte count compactly in decimal units, as the
// log axes' decades fall: 512B, 16kB, 1.5MB.
func shortBytes(v float64) string {
	switch {
	case v >= 1e6:
		return trimZeros(fmt.Sprintf("%.1f", v/1e6)) + "MB"
	case v >= 1e3:
		return trimZeros(fmt.Sprintf("%.1f", v/1e3)) + "kB"
	}
	return fmt.Sprintf("%.0fB", v)
}

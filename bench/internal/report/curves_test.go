package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// curveSample is a size curve and a fan-in curve: yrpc grows linearly
// with size and needs one copy per side; "fat" allocates three copies on
// the server and its server CPU grows faster than the size.
func curveSample() *File {
	var rs []Result
	size := func(impl string, x int, cps, cpu, srvCPU, cliB, srvB float64) {
		rs = append(rs, Result{Impl: impl, Sweep: SweepSize, Size: x, C: 16, Repeat: 1, Calls: 1000, CallsPerSec: cps,
			P50: cpu * 2, P99: cpu * 6, ClientCPU: cpu, ServerCPU: srvCPU, ClientBytes: cliB, ServerBytes: srvB,
			ServerRSS: 20, ServerPeakRSS: 25, ServerConns: 1})
	}
	size("yrpc", 64, 100000, 5, 4, 300, 200)
	size("yrpc", 16<<10, 20000, 20, 15, 17000, 16500)
	size("yrpc", 1<<20, 500, 1000, 800, 1.05*(1<<20), 1.01*(1<<20))
	size("fat", 64, 50000, 10, 8, 900, 800)
	size("fat", 16<<10, 10000, 40, 30, 20000, 50000)
	size("fat", 1<<20, 250, 2000, 30*64*2, 1.2*(1<<20), 3*(1<<20))
	for _, x := range []int{1, 16} {
		rs = append(rs, Result{Impl: "yrpc", Sweep: SweepFanIn, Conns: x, C: 256, Repeat: 1, Calls: 1000,
			CallsPerSec: 150000 / float64(x), P50: 1000, P99: 3000, ClientCPU: 5, ServerCPU: 4, ServerConns: x})
	}
	return &File{
		Machine: Machine{CPU: "Test CPU", Cores: 2, GoVersion: "go1.26.8"},
		Settings: Settings{Repeats: 1, Procs: 2, Versions: []string{"yrpc v1", "fat v1"}, Curves: []Sweep{
			{Name: SweepSize, X: []int{64, 16 << 10, 1 << 20}, C: 16, Impls: []string{"yrpc", "fat"}, Calls: 100000, CallBytes: 1 << 30},
			{Name: SweepFanIn, X: []int{1, 16}, C: 256, Impls: []string{"yrpc"}, Calls: 150000},
		}},
		Results: rs,
		Summary: Summarize(rs, []string{"yrpc", "fat"}),
	}
}

func TestSummarizeSweeps(t *testing.T) {
	f := curveSample()
	var got []string
	for _, r := range f.Summary {
		got = append(got, r.Impl+" "+FormatX(r.Sweep, r.X()))
	}
	want := []string{"yrpc 64 B", "fat 64 B", "yrpc 16 KiB", "fat 16 KiB", "yrpc 1 MiB", "fat 1 MiB", "yrpc 1", "yrpc 16"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if r := f.Summary[0]; r.ServerRSS != 20 || r.ServerPeakRSS != 25 || r.Size != 64 {
		t.Errorf("summary row %+v lost the sweep's fields", r)
	}
}

func TestExponent(t *testing.T) {
	tests := []struct {
		x1, y1, x2, y2 float64
		want           float64
		ok             bool
	}{
		{1, 1, 16, 16, 1, true},
		{1, 1, 16, 4, 0.5, true},
		{4, 3, 16, 3, 0, true},
		{1, 1, 4, 16, 2, true},
		{1, 0, 4, 16, 0, false},
		{4, 1, 4, 2, 0, false},
	}
	for _, tt := range tests {
		got, ok := Exponent(tt.x1, tt.y1, tt.x2, tt.y2)
		if ok != tt.ok || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Exponent(%v, %v, %v, %v) = %v, %v; want %v, %v", tt.x1, tt.y1, tt.x2, tt.y2, got, ok, tt.want, tt.ok)
		}
	}
}

func TestGrowthAndCopies(t *testing.T) {
	rows := SweepRows(curveSample(), SweepSize)
	growth := Growth(SweepSize, rows)
	if len(growth) != 3 {
		t.Fatalf("Growth = %q, want a header and a line per implementation", growth)
	}
	if !strings.Contains(growth[1], "yrpc, 64 B → 1 MiB (×16384)") || !strings.Contains(growth[1], "no step worse than linear") {
		t.Errorf("yrpc growth: %s", growth[1])
	}
	// fat's server CPU goes 30 → 3840 µs for 16 KiB → 1 MiB: x^1.17, over
	// the 1 + log(1.2)/log(64) = 1.04 that noise allows.
	if !strings.Contains(growth[2], "WORSE than linear: server CPU 16 KiB→1 MiB (1.17)") {
		t.Errorf("fat growth: %s", growth[2])
	}
	want := []string{
		"yrpc: allocated bytes per call ÷ request size at 16 KiB, 1 MiB: client 1.04, 1.05, server 1.01, 1.01: within 2 copies per side",
		"fat: allocated bytes per call ÷ request size at 16 KiB, 1 MiB: client 1.22, 1.20, server 3.05, 3.00: MORE than 2 copies on a side",
	}
	if diff := cmp.Diff(want, Copies(rows)); diff != "" {
		t.Errorf("Copies (-want +got):\n%s", diff)
	}
}

func TestFormatX(t *testing.T) {
	for _, tt := range []struct {
		sweep string
		x     int
		want  string
	}{{SweepSize, 64, "64 B"}, {SweepSize, 581, "581 B"}, {SweepSize, 16 << 10, "16 KiB"}, {SweepSize, 1 << 20, "1 MiB"},
		{SweepSize, 1500, "1500 B"}, {SweepFanIn, 256, "256"}, {SweepProviders, 8, "8"}} {
		if got := FormatX(tt.sweep, tt.x); got != tt.want {
			t.Errorf("FormatX(%s, %d) = %q, want %q", tt.sweep, tt.x, got, tt.want)
		}
	}
}

func TestWriteCurves(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCurves(&b, curveSample()); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"### Message size: one client connection",
		"at most 100,000 counted calls per point and at most 1,073,741,824 bytes of requests",
		"| impl | request | calls/s | × best peer |",
		"| yrpc | 1 MiB | 500 | 2.00× | 2,000 | 6,000 | 3.0 | 1000.0 | 800.0 |",
		"| 1.05 | 1.01 | 1 | 20.0 | 25.0 | 0 |",
		"### Fan-in: 256 workers",
		"| yrpc | 16 | 9,375 |",
		"| 16 | ? | ? | 0 |", // 16 connections, RSS unknown
		"- fat: allocated bytes per call",
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("curves.md lacks %q:\n%s", w, b.String())
		}
	}
}

// TestCurveSVG checks that each sweep's chart is well-formed XML with a
// line per implementation and the 2-copies mark on the size chart.
func TestCurveSVG(t *testing.T) {
	f := curveSample()
	for _, tt := range []struct {
		sweep string
		want  []string
	}{
		{SweepSize, []string{"2 copies", "fat, 1 MiB", "yrpc, 64 B", "<polyline", "Message size"}},
		{SweepFanIn, []string{"yrpc, 16: 9.38k", "connections (log scale)"}},
		{SweepProviders, nil}, // no rows: an empty chart, still well-formed
	} {
		var b bytes.Buffer
		if err := WriteCurveSVG(&b, f, tt.sweep); err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s chart lacks %q", tt.sweep, w)
			}
		}
		dec := xml.NewDecoder(&b)
		for {
			_, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s chart is not well-formed XML: %v", tt.sweep, err)
			}
		}
	}
}

// TestRowRatios checks the side-by-side table's per-row ratio to the best
// peer (never yrpc, a reference line or another build of yrpc; TLS rows
// against TLS rows) and p99/p50.
func TestRowRatios(t *testing.T) {
	rows := []Result{
		{Impl: "yrpc", C: 64, CallsPerSec: 90000, P50: 100, P99: 400},
		{Impl: "yrpc@old", C: 64, CallsPerSec: 80000, P50: 100, P99: 300},
		{Impl: "grpc", C: 64, CallsPerSec: 20000, P50: 300, P99: 900},
		{Impl: "netrpc", C: 64, CallsPerSec: 30000, P50: 200, P99: 500},
		{Impl: "tcp-pipeline", Ref: true, C: 64, CallsPerSec: 900000, P50: 10, P99: 20},
		{Impl: "grpc-tls", TLS: true, C: 64, CallsPerSec: 15000, P50: 400, P99: 800},
		{Impl: "yrpc-tls", TLS: true, C: 64, CallsPerSec: 60000, P50: 150, P99: 450},
		{Impl: "netrpc", C: 1, CallsPerSec: 9000, P50: 100, P99: 0},
	}
	want := []struct{ vs, spread string }{
		{"3.00×", "4.0"}, {"2.67×", "3.0"}, {"0.67×", "3.0"}, {"1.00×", "2.5"}, {"30.00×", "2.0"}, {"1.00×", "2.0"}, {"4.00×", "3.0"}, {"1.00×", "0.0"},
	}
	for i, r := range rows {
		if got := vsBest(r, rows); got != want[i].vs {
			t.Errorf("%s c=%d: × best peer %s, want %s", r.Impl, r.C, got, want[i].vs)
		}
		if got := spread(r); got != want[i].spread {
			t.Errorf("%s c=%d: p99/p50 %s, want %s", r.Impl, r.C, got, want[i].spread)
		}
	}
	if got := vsBest(Result{Impl: "yrpc", C: 8}, rows); got != "–" {
		t.Errorf("no peer at c=8: %s", got)
	}
	for name, want := range map[string]bool{"yrpc": true, "yrpc-lz4": true, "yrpc@bench.old": true, "yrpc-tls@x": true, "grpc": false, "yrpcx": false} {
		if IsYRPC(name) != want {
			t.Errorf("IsYRPC(%q) = %v", name, !want)
		}
	}
	lines := Compare(rows[:5])
	if len(lines) != 3 || !strings.Contains(lines[0], "= 3.00× the best peer (netrpc") ||
		lines[2] != "c=64: yrpc vs yrpc@old: calls/s 1.12×, p50 1.00×, p99 1.33×; CPU µs per call: client ? vs ?, server ? vs ?" {
		t.Errorf("Compare = %q", lines)
	}
}

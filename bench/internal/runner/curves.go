package runner

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/yrpc/yrpc/bench/internal/impl"
	"github.com/yrpc/yrpc/bench/internal/report"
)

// curvesConfig holds the flags of "bench curves".
type curvesConfig struct {
	measureConfig
	sweeps  []sweepSpec
	repeats int
	out     string
	bin     string
	quick   bool
}

// sweepSpec is one cost curve to measure.
type sweepSpec struct {
	name  string // report.SweepSize, SweepFanIn or SweepProviders
	impls []entry
	xs    []int
	c     int
	calls int
	bytes int // SweepSize: at most this many request bytes per point
}

// minCalls is the fewest counted calls of a point of the size curve.
const minCalls = 1000

// calls returns the counted calls of the point at x.
func (s *sweepSpec) callsAt(x int) int {
	if s.bytes == 0 {
		return s.calls
	}
	return max(min(s.calls, minCalls), min(s.calls, s.bytes/x))
}

// point returns the measurement of the sweep at x.
func (s *sweepSpec) point(x int) point {
	pt := point{sweep: s.name, c: s.c, n: s.callsAt(x)}
	switch s.name {
	case report.SweepSize:
		pt.size = x
	case report.SweepFanIn:
		pt.conns = x
	case report.SweepProviders:
		pt.listeners = x
	}
	return pt
}

// runs reports whether e runs at x: a client with a connection per
// worker has no fan-in below c connections.
func (s *sweepSpec) runs(e entry, x int) bool {
	return s.name != report.SweepFanIn || !e.im.ConnPerWorker || x >= s.c
}

// defaultImpls keeps the names of list that are compiled in.
func defaultImpls(list ...string) string {
	var names []string
	for _, n := range list {
		if impl.Has(n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}

func parseCurves(args []string) (*curvesConfig, error) {
	fs := flag.NewFlagSet("curves", flag.ContinueOnError)
	sweeps := "size,fanin"
	if len(balanced()) > 0 {
		sweeps += ",providers"
	}
	sweepList := fs.String("sweeps", sweeps, "cost curves to measure, in this order (providers needs a balancing client: yrpc)")
	sizeImpls := fs.String("size-impls", defaultImpls("yrpc", "yrpc-lz4", "grpc", "rpcx", "netrpc", "drpc", "tcp-pingpong"), "implementations of the size curve")
	sizes := fs.String("sizes", "64,581,16384,262144,1048576", "request sizes in bytes")
	sizeC := fs.Int("size-c", 16, "workers of the size curve")
	sizeN := fs.Int("size-n", 100000, "counted calls per point of the size curve, at most")
	sizeBytes := fs.Int("size-bytes", 1<<30, "request bytes per point of the size curve, at most (calls = bytes/size, at least 1,000)")
	fanImpls := fs.String("fanin-impls", defaultImpls("yrpc", "grpc", "rpcx", "netrpc", "drpc"), "implementations of the fan-in curve")
	fanin := fs.String("fanin", "1,16,256", "client connections of the fan-in curve")
	fanC := fs.Int("fanin-c", 256, "workers of the fan-in curve, spread over the connections")
	fanN := fs.Int("fanin-n", 150000, "counted calls per point of the fan-in curve")
	provImpls := fs.String("providers-impls", defaultImpls("yrpc"), "implementations of the providers curve (balancing clients only)")
	provs := fs.String("providers", "1,8,64", "servers of the providers curve")
	provC := fs.Int("providers-c", 64, "workers of the providers curve")
	provN := fs.Int("providers-n", 150000, "counted calls per point of the providers curve")
	warmup := fs.Float64("warmup", 0.02, "warm-up calls as a fraction of the counted ones")
	repeats := fs.Int("repeats", 2, "repeats; every implementation runs once per repeat and point")
	procs := fs.Int("procs", 2, "GOMAXPROCS of each server and client process")
	out := fs.String("out", "results/curves", "directory for curves.json, curves.md and one SVG per curve")
	bin := fs.String("bin", "", "bench binary to start the processes from (default: this one)")
	timeout := fs.Duration("timeout", 5*time.Minute, "limit for one measurement")
	quick := fs.Bool("quick", false, "smoke run: 2,000 calls per point (32 MiB of requests), one repeat, output in OUT/quick")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	cfg := &curvesConfig{repeats: *repeats, out: *out, quick: *quick,
		measureConfig: measureConfig{warmup: *warmup, procs: *procs, timeout: *timeout}}
	if cfg.quick {
		*sizeN, *sizeBytes, *fanN, *provN, cfg.repeats = 2000, 32<<20, 2000, 2000, 1
		outSet := false
		fs.Visit(func(f *flag.Flag) { outSet = outSet || f.Name == "out" })
		if !outSet {
			cfg.out = filepath.Join(cfg.out, "quick")
		}
	}
	var err error
	if cfg.bin, err = binary(*bin); err != nil {
		return nil, err
	}
	type spec struct {
		impls, xs string
		c, n, b   int
	}
	specs := map[string]spec{
		report.SweepSize:      {*sizeImpls, *sizes, *sizeC, *sizeN, *sizeBytes},
		report.SweepFanIn:     {*fanImpls, *fanin, *fanC, *fanN, 0},
		report.SweepProviders: {*provImpls, *provs, *provC, *provN, 0},
	}
	for _, name := range strings.Split(*sweepList, ",") {
		name = strings.TrimSpace(name)
		sp, ok := specs[name]
		if !ok {
			return nil, fmt.Errorf("runner: unknown curve %q; want size, fanin or providers", name)
		}
		s := sweepSpec{name: name, c: sp.c, calls: sp.n, bytes: sp.b}
		if s.impls, err = parseEntries(sp.impls, cfg.bin); err != nil {
			return nil, err
		}
		if s.xs, err = positiveInts(sp.xs, name); err != nil {
			return nil, err
		}
		if err := s.check(); err != nil {
			return nil, err
		}
		cfg.sweeps = append(cfg.sweeps, s)
	}
	switch {
	case len(cfg.sweeps) == 0:
		return nil, errors.New("runner: no curves")
	case cfg.repeats < 1 || cfg.procs < 1:
		return nil, errors.New("runner: -repeats and -procs must be positive")
	case cfg.warmup < 0:
		return nil, errors.New("runner: -warmup must not be negative")
	}
	return cfg, nil
}

// check reports a sweep that cannot run.
func (s *sweepSpec) check() error {
	switch {
	case len(s.impls) == 0:
		return fmt.Errorf("runner: curve %q has no implementations", s.name)
	case s.c < 1 || s.calls < 1 || s.bytes < 0:
		return fmt.Errorf("runner: curve %q needs positive workers and calls", s.name)
	}
	for _, e := range s.impls {
		if s.name == report.SweepProviders && !e.im.Balanced {
			return fmt.Errorf("runner: %s cannot balance over providers (only %v)", e.name, balanced())
		}
	}
	if s.name == report.SweepFanIn && slices.Max(s.xs) > s.c {
		return fmt.Errorf("runner: the fan-in curve needs at least as many workers (%d) as connections", s.c)
	}
	return nil
}

// balanced returns the names of the balancing implementations.
func balanced() []string {
	var names []string
	for _, im := range impl.All() {
		if im.Balanced {
			names = append(names, im.Name)
		}
	}
	return names
}

// Curves runs "bench curves": the cost curves of issue 16 (message size,
// fan-in, providers), every point in fresh processes, implementations
// interleaved at each point; then curves.md on stdout and the files in the
// output directory. Progress goes to stderr.
func Curves(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseCurves(args)
	if err != nil {
		return err
	}
	var all []entry
	for _, s := range cfg.sweeps {
		all = append(all, s.impls...)
	}
	dir, remove, err := makeCerts(all)
	if err != nil {
		return err
	}
	defer remove()
	cfg.certs = dir
	f := &report.File{
		Machine: machine(),
		Started: time.Now().UTC(),
		Settings: report.Settings{Warmup: cfg.warmup, Repeats: cfg.repeats, Procs: cfg.procs, Quick: cfg.quick,
			YRPC: impl.Has(report.YRPC)},
	}
	var order []string
	for _, s := range cfg.sweeps {
		sw := report.Sweep{Name: s.name, X: s.xs, C: s.c, Calls: s.calls, CallBytes: s.bytes}
		for _, e := range s.impls {
			sw.Impls = append(sw.Impls, e.name)
			if !slices.Contains(order, e.name) {
				order = append(order, e.name)
				f.Settings.Impls = append(f.Settings.Impls, e.name)
				f.Settings.Versions = append(f.Settings.Versions, e.im.Label)
			}
		}
		f.Settings.Curves = append(f.Settings.Curves, sw)
	}
	start := time.Now()
	for rep := range cfg.repeats {
		for _, s := range cfg.sweeps {
			for _, x := range s.xs {
				for i := range s.impls {
					e := s.impls[(i+rep)%len(s.impls)]
					if !s.runs(e, x) {
						continue
					}
					if err := record(ctx, &cfg.measureConfig, f, e, s.point(x), rep+1, cfg.repeats, stderr); err != nil {
						return err
					}
				}
			}
		}
	}
	finish(f, start, order)
	return outputCurves(cfg.out, f, stdout)
}

// outputCurves prints curves.md and writes it, curves.json and a chart
// per curve to dir.
func outputCurves(dir string, f *report.File, stdout io.Writer) error {
	if err := report.WriteCurves(stdout, f); err != nil {
		return err
	}
	files := []outFile{
		{"curves.json", report.WriteJSON},
		{"curves.md", report.WriteCurves},
	}
	for _, sw := range f.Settings.Curves {
		files = append(files, outFile{sw.Name + ".svg", func(w io.Writer, f *report.File) error {
			return report.WriteCurveSVG(w, f, sw.Name)
		}})
	}
	if err := writeFiles(dir, f, files); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nwrote %s in %.0fs of measuring\n", filepath.Join(dir, "curves.{json,md} and one SVG per curve"), f.Seconds)
	return nil
}

// outFile is a file of the output directory and what writes it.
type outFile struct {
	name  string
	write func(io.Writer, *report.File) error
}

// writeFiles writes each file of files to dir, which it makes.
func writeFiles(dir string, f *report.File, files []outFile) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	for _, file := range files {
		path := filepath.Join(dir, file.name)
		fh, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("runner: %w", err)
		}
		err = file.write(fh, f)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("runner: writing %q: %w", path, err)
		}
	}
	return nil
}

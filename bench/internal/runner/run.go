package runner

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yrpc/yrpc/bench/internal/certs"
	"github.com/yrpc/yrpc/bench/internal/impl"
	"github.com/yrpc/yrpc/bench/internal/report"
)

// runConfig holds the flags of "bench run".
type runConfig struct {
	measureConfig
	impls   []entry
	conc    []int
	calls1  int
	calls   int
	repeats int
	out     string
	bin     string
	quick   bool
}

// measureConfig is what every measurement of a run shares.
type measureConfig struct {
	warmup  float64       // warm-up calls as a fraction of the counted ones
	procs   int           // GOMAXPROCS of each process
	timeout time.Duration // limit for one measurement
	certs   string        // the run's certificates, when an implementation runs over TLS
	// timeline is a directory for the processes' timelines (bench tail),
	// or "" for none.
	timeline string
	// idle is how long each measurement keeps both processes idle after
	// its counted calls, connected, to read what they burn doing nothing
	// (after idleSettle or d, the shorter); 0: not measured.
	idle time.Duration
}

func parseRun(args []string) (*runConfig, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	implList := fs.String("impls", strings.Join(impl.Names(), ","), "implementations to run, in this order; NAME@BINARY runs NAME from another bench binary (an A/B of two builds)")
	concList := fs.String("c", "1,64,256", "concurrency levels")
	calls1 := fs.Int("n1", 40000, "counted calls at c=1")
	calls := fs.Int("n", 150000, "counted calls at c>1")
	warmup := fs.Float64("warmup", 0.02, "warm-up calls as a fraction of the counted ones")
	repeats := fs.Int("repeats", 2, "repeats; every implementation runs once per repeat and c")
	procs := fs.Int("procs", 2, "GOMAXPROCS of each server and client process")
	out := fs.String("out", "results", "directory for results.json, results.md and chart.svg")
	bin := fs.String("bin", "", "bench binary to start the processes from (default: this one)")
	timeout := fs.Duration("timeout", 5*time.Minute, "limit for one measurement")
	quick := fs.Bool("quick", false, "smoke run: 1,000 calls at c=1, 3,000 otherwise, one repeat, output in OUT/quick")
	timelineDir := fs.String("timeline", "", "directory for a timeline of each measurement's processes (bench tail reads them): every call's start and latency, every collection's end")
	idle := fs.Duration("idle", 0, "after each measurement's calls, keep both processes idle and connected this long (after up to 1s to settle) and report the CPU each used, as a per cent of one core, and its wake-ups per second; 0: not measured")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	cfg := &runConfig{calls1: *calls1, calls: *calls, repeats: *repeats, out: *out, bin: *bin, quick: *quick,
		measureConfig: measureConfig{warmup: *warmup, procs: *procs, timeout: *timeout, timeline: *timelineDir, idle: *idle}}
	if cfg.quick {
		cfg.calls1, cfg.calls, cfg.repeats = 1000, 3000, 1
		// A smoke run does not overwrite the results of a full one.
		outSet := false
		fs.Visit(func(f *flag.Flag) { outSet = outSet || f.Name == "out" })
		if !outSet {
			cfg.out = filepath.Join(cfg.out, "quick")
		}
	}
	var err error
	if cfg.bin, err = binary(cfg.bin); err != nil {
		return nil, err
	}
	if cfg.impls, err = parseEntries(*implList, cfg.bin); err != nil {
		return nil, err
	}
	if cfg.conc, err = positiveInts(*concList, "concurrency"); err != nil {
		return nil, err
	}
	switch {
	case len(cfg.impls) == 0:
		return nil, errors.New("runner: no implementations")
	case cfg.calls1 < 1 || cfg.calls < 1 || cfg.repeats < 1 || cfg.procs < 1:
		return nil, errors.New("runner: -n1, -n, -repeats and -procs must be positive")
	case cfg.warmup < 0:
		return nil, errors.New("runner: -warmup must not be negative")
	case cfg.idle < 0:
		return nil, errors.New("runner: -idle must not be negative")
	}
	return cfg, nil
}

// entry is one implementation of a run, from one binary.
type entry struct {
	im   *impl.Impl
	name string // as reported: im.Name, or NAME@BINARY-BASENAME
	bin  string // the binary its processes start from
}

// binary returns bin, or this executable when bin is "".
func binary(bin string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("runner: finding the bench binary: %w", err)
	}
	return exe, nil
}

// parseEntries reads a comma-separated list of parseEntry specs.
func parseEntries(list, bin string) ([]entry, error) {
	var es []entry
	for _, spec := range strings.Split(list, ",") {
		if spec = strings.TrimSpace(spec); spec == "" {
			continue
		}
		e, err := parseEntry(spec, bin)
		if err != nil {
			return nil, err
		}
		es = append(es, e)
	}
	return es, nil
}

// positiveInts reads a comma-separated list of positive integers; what
// names them in the error.
func positiveInts(list, what string) ([]int, error) {
	var vs []int
	for _, s := range strings.Split(list, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("runner: bad %s %q", what, s)
		}
		vs = append(vs, v)
	}
	return vs, nil
}

// makeCerts makes the run's certificates in a temporary directory when
// one of es runs over TLS, and returns it ("" otherwise) and a func that
// removes it.
func makeCerts(es []entry) (dir string, remove func(), err error) {
	if !slices.ContainsFunc(es, func(e entry) bool { return e.im.TLS }) {
		return "", func() {}, nil
	}
	dir, err = os.MkdirTemp("", "bench-certs-")
	if err != nil {
		return "", nil, fmt.Errorf("runner: %w", err)
	}
	if err := certs.Generate(dir); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// parseEntry reads "NAME" (from bin) or "NAME@BINARY". The other binary
// must know NAME; this one is only asked for its label.
func parseEntry(spec, bin string) (entry, error) {
	name, other, ab := strings.Cut(spec, "@")
	im, err := impl.Lookup(name)
	if err != nil {
		return entry{}, err
	}
	if !ab {
		return entry{im: im, name: name, bin: bin}, nil
	}
	if _, err := os.Stat(other); err != nil {
		return entry{}, fmt.Errorf("runner: %s: %w", spec, err)
	}
	alt := *im
	alt.Name = name + "@" + filepath.Base(other)
	alt.Label = alt.Name
	return entry{im: &alt, name: alt.Name, bin: other}, nil
}

// Run runs "bench run": every measurement in fresh processes, then the
// table on stdout and the files in the output directory. Progress goes to
// stderr.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseRun(args)
	if err != nil {
		return err
	}
	if cfg.timeline != "" {
		if err := os.MkdirAll(cfg.timeline, 0o755); err != nil {
			return err
		}
	}
	dir, remove, err := makeCerts(cfg.impls)
	if err != nil {
		return err
	}
	defer remove()
	cfg.certs = dir
	f := &report.File{
		Machine: machine(),
		Started: time.Now().UTC(),
		Settings: report.Settings{
			Conc: cfg.conc, Calls1: cfg.calls1, Calls: cfg.calls, Warmup: cfg.warmup,
			Repeats: cfg.repeats, Procs: cfg.procs, Quick: cfg.quick, YRPC: impl.Has(report.YRPC),
			IdleSeconds: cfg.idle.Seconds(),
		},
	}
	var order []string
	for _, e := range cfg.impls {
		order = append(order, e.name)
		f.Settings.Impls = append(f.Settings.Impls, e.name)
		f.Settings.Versions = append(f.Settings.Versions, e.im.Label)
	}
	start := time.Now()
	for rep := range cfg.repeats {
		for _, c := range cfg.conc {
			n := cfg.calls
			if c == 1 {
				n = cfg.calls1
			}
			// Rotate the order every repeat so no implementation always
			// runs first or last.
			for i := range cfg.impls {
				e := cfg.impls[(i+rep)%len(cfg.impls)]
				// A feed row counts Scale times the calls (impl.FeedScale).
				pt := point{c: c, n: n * max(e.im.Scale, 1)}
				if err := record(ctx, &cfg.measureConfig, f, e, pt, rep+1, cfg.repeats, stderr); err != nil {
					return err
				}
			}
		}
	}
	finish(f, start, order)
	return output(cfg.out, f, stdout)
}

// output prints the tables and comparisons and writes the files.
func output(dir string, f *report.File, stdout io.Writer) error {
	if err := report.WriteTable(stdout, f); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	for _, l := range report.Compare(f.Summary) {
		fmt.Fprintln(stdout, l)
	}
	fmt.Fprintf(stdout, "\nmarkdown:\n\n")
	if err := report.WriteMarkdown(stdout, f); err != nil {
		return err
	}
	if err := writeFiles(dir, f, []outFile{
		{"results.json", report.WriteJSON},
		{"results.md", report.WriteMarkdown},
		{"chart.svg", report.WriteSVG},
	}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nwrote %s, %s and %s in %.0fs of measuring\n",
		filepath.Join(dir, "results.json"), filepath.Join(dir, "results.md"), filepath.Join(dir, "chart.svg"), f.Seconds)
	return nil
}

// machine describes this machine from /proc and the runtime.
func machine() report.Machine {
	m := report.Machine{
		CPU:       runtime.GOARCH,
		Cores:     runtime.NumCPU(),
		GoVersion: runtime.Version(),
		Kernel:    "unknown",
		OSArch:    runtime.GOOS + "/" + runtime.GOARCH,
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.LoadStart = loadAvg()
	return m
}

// loadAvg returns the 1, 5 and 15 minute load averages, or "".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(b)); len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return ""
}

// Report runs "bench report": render the tables, results.md and chart.svg
// again from a results.json (for instance after a change to the report),
// or curves.md and the charts from a curves.json.
func Report(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	in := fs.String("in", "results/results.json", "results file to read (results.json, or curves.json of bench curves)")
	out := fs.String("out", "results", "directory to write the files to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b, err := os.ReadFile(*in)
	if err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	var f report.File
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("runner: reading %q: %w", *in, err)
	}
	if len(f.Settings.Curves) > 0 {
		return outputCurves(*out, &f, stdout)
	}
	return output(*out, &f, stdout)
}

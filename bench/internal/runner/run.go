package runner

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
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
	impls   []entry
	conc    []int
	calls1  int
	calls   int
	warmup  float64
	repeats int
	procs   int
	out     string
	bin     string
	timeout time.Duration
	quick   bool
	certs   string // the run's certificates, when an implementation runs over TLS
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
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	cfg := &runConfig{calls1: *calls1, calls: *calls, warmup: *warmup, repeats: *repeats,
		procs: *procs, out: *out, bin: *bin, timeout: *timeout, quick: *quick}
	if cfg.quick {
		cfg.calls1, cfg.calls, cfg.repeats = 1000, 3000, 1
		// A smoke run does not overwrite the results of a full one.
		outSet := false
		fs.Visit(func(f *flag.Flag) { outSet = outSet || f.Name == "out" })
		if !outSet {
			cfg.out = filepath.Join(cfg.out, "quick")
		}
	}
	if cfg.bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("runner: finding the bench binary: %w", err)
		}
		cfg.bin = exe
	}
	for _, spec := range strings.Split(*implList, ",") {
		if spec = strings.TrimSpace(spec); spec == "" {
			continue
		}
		e, err := parseEntry(spec, cfg.bin)
		if err != nil {
			return nil, err
		}
		cfg.impls = append(cfg.impls, e)
	}
	for _, s := range strings.Split(*concList, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || c < 1 {
			return nil, fmt.Errorf("runner: bad concurrency %q", s)
		}
		cfg.conc = append(cfg.conc, c)
	}
	switch {
	case len(cfg.impls) == 0:
		return nil, errors.New("runner: no implementations")
	case cfg.calls1 < 1 || cfg.calls < 1 || cfg.repeats < 1 || cfg.procs < 1:
		return nil, errors.New("runner: -n1, -n, -repeats and -procs must be positive")
	case cfg.warmup < 0:
		return nil, errors.New("runner: -warmup must not be negative")
	}
	return cfg, nil
}

// entry is one implementation of a run, from one binary.
type entry struct {
	im   *impl.Impl
	name string // as reported: im.Name, or NAME@BINARY-BASENAME
	bin  string // the binary its processes start from
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
	if slices.ContainsFunc(cfg.impls, func(e entry) bool { return e.im.TLS }) {
		dir, err := os.MkdirTemp("", "bench-certs-")
		if err != nil {
			return fmt.Errorf("runner: %w", err)
		}
		defer os.RemoveAll(dir)
		if err := certs.Generate(dir); err != nil {
			return err
		}
		cfg.certs = dir
	}
	f := &report.File{
		Machine: machine(),
		Started: time.Now().UTC(),
		Settings: report.Settings{
			Conc: cfg.conc, Calls1: cfg.calls1, Calls: cfg.calls, Warmup: cfg.warmup,
			Repeats: cfg.repeats, Procs: cfg.procs, Quick: cfg.quick, YRPC: impl.Has(report.YRPC),
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
				r := measure(ctx, cfg, e, c, n*max(e.im.Scale, 1), rep+1)
				f.Results = append(f.Results, r)
				fmt.Fprintf(stderr, "repeat %d/%d c=%-3d %-13s %9s calls/s  p50 %8.1fµs  p99 %9.1fµs  allocs cli %5.1f srv %5.1f  CPU µs cli %5.1f srv %5.1f  errors %d %s\n",
					rep+1, cfg.repeats, c, e.name, report.Thousands(r.CallsPerSec), r.P50, r.P99,
					r.ClientAllocs, r.ServerAllocs, r.ClientCPU, r.ServerCPU, r.Errors, r.FirstError)
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
		}
	}
	f.Seconds = time.Since(start).Seconds()
	f.Machine.LoadEnd = loadAvg()
	f.Summary = report.Summarize(f.Results, order)
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
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	files := []struct {
		name  string
		write func(io.Writer, *report.File) error
	}{
		{"results.json", report.WriteJSON},
		{"results.md", report.WriteMarkdown},
		{"chart.svg", report.WriteSVG},
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
	fmt.Fprintf(stdout, "\nwrote %s, %s and %s in %.0fs of measuring\n",
		filepath.Join(dir, "results.json"), filepath.Join(dir, "results.md"), filepath.Join(dir, "chart.svg"), f.Seconds)
	return nil
}

// measure runs one implementation at concurrency c in a fresh server and
// client process. A failure to measure counts every call as an error.
func measure(ctx context.Context, cfg *runConfig, e entry, c, n, repeat int) report.Result {
	r := report.Result{Impl: e.name, Label: e.im.Label, Ref: e.im.Ref, TLS: e.im.TLS, C: c, Repeat: repeat, Calls: n}
	if err := measureInto(ctx, cfg, e, c, n, &r); err != nil {
		r.Errors = n
		r.FirstError = err.Error()
	}
	return r
}

func measureInto(ctx context.Context, cfg *runConfig, e entry, c, n int, r *report.Result) error {
	im := e.im
	name := strings.SplitN(im.Name, "@", 2)[0] // what the processes know it as
	ctx, cancel := context.WithTimeoutCause(ctx, cfg.timeout, errors.New("runner: measurement timed out"))
	defer cancel()
	env := append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(cfg.procs))

	var tlsArgs []string
	if im.TLS {
		tlsArgs = []string{"-certs", cfg.certs}
	}
	srv, err := startProc(ctx, e.bin, env, append([]string{"server", "-impl", name}, tlsArgs...)...)
	if err != nil {
		return err
	}
	defer srv.stop(ctx)
	addr, err := expect(ctx, srv.out, "server", "addr")
	if err != nil {
		return err
	}
	warm := int(math.Ceil(float64(n) * cfg.warmup))
	cli, err := startProc(ctx, e.bin, env, append([]string{"client", "-impl", name, "-addr", addr,
		"-c", strconv.Itoa(c), "-n", strconv.Itoa(n), "-warmup", strconv.Itoa(warm)}, tlsArgs...)...)
	if err != nil {
		return err
	}
	defer cli.stop(ctx)
	if _, err := expect(ctx, cli.out, "client", "ready"); err != nil {
		return err
	}
	m0, t0, err := srv.mem(ctx)
	if err != nil {
		return err
	}
	scpu0, ccpu0 := srv.cpu(), cli.cpu()
	if err := say0(cli.in, "go"); err != nil {
		return err
	}
	line, err := expect(ctx, cli.out, "client", "result")
	if err != nil {
		return err
	}
	scpu1, ccpu1 := srv.cpu(), cli.cpu()
	m1, t1, err := srv.mem(ctx)
	if err != nil {
		return err
	}
	var cr clientResult
	if err := json.Unmarshal([]byte(line), &cr); err != nil {
		return fmt.Errorf("runner: bad result %q: %w", line, err)
	}
	calls := float64(cr.Calls)
	r.Seconds = cr.Seconds
	if cr.Seconds > 0 {
		r.CallsPerSec = calls / cr.Seconds
	}
	r.P50, r.P99, r.P999, r.Mean, r.Max = cr.P50, cr.P99, cr.P999, cr.Mean, cr.Max
	r.ClientAllocs = float64(cr.Mallocs) / calls
	r.ClientBytes = float64(cr.TotalAlloc) / calls
	r.ServerAllocs = float64(m1-m0) / calls
	r.ServerBytes = float64(t1-t0) / calls
	if scpu0 >= 0 && scpu1 >= 0 && ccpu0 >= 0 && ccpu1 >= 0 {
		r.ClientCPU = float64(ccpu1-ccpu0) / float64(time.Microsecond) / calls
		r.ServerCPU = float64(scpu1-scpu0) / float64(time.Microsecond) / calls
	}
	r.Errors = cr.Errors
	r.FirstError = cr.FirstError
	if err := cli.stop(ctx); err != nil {
		return fmt.Errorf("runner: client: %w", err)
	}
	if err := srv.stop(ctx); err != nil {
		return fmt.Errorf("runner: server: %w", err)
	}
	return nil
}

// say0 writes a bare command line to a child's stdin.
func say0(w io.Writer, cmd string) error {
	_, err := io.WriteString(w, cmd+"\n")
	return err
}

// proc is a child bench process speaking the line protocol.
type proc struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     <-chan string
	stopped bool
	err     error
}

func startProc(ctx context.Context, bin string, env []string, args ...string) (*proc, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 10 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("runner: starting %s: %w", args[0], err)
	}
	return &proc{cmd: cmd, in: in, out: lines(out, os.Stderr)}, nil
}

// mem asks a server for its allocation counters.
func (p *proc) mem(ctx context.Context) (mallocs, total uint64, err error) {
	if err := say0(p.in, "mem"); err != nil {
		return 0, 0, err
	}
	line, err := expect(ctx, p.out, "server", "mem")
	if err != nil {
		return 0, 0, err
	}
	return parseMem(line)
}

// stop closes the child's stdin (which ends it), reads its output to the
// end and waits for it. It is safe to call more than once.
func (p *proc) stop(ctx context.Context) error {
	if p.stopped {
		return p.err
	}
	p.stopped = true
	_ = say0(p.in, "quit")
	_ = p.in.Close()
	for done := false; !done; {
		select {
		case _, ok := <-p.out:
			done = !ok
		case <-ctx.Done():
			_ = p.cmd.Process.Kill()
			done = true
		}
	}
	p.err = p.cmd.Wait()
	return p.err
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
// again from a results.json (for instance after a change to the report).
func Report(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	in := fs.String("in", "results/results.json", "results file to read")
	out := fs.String("out", "results", "directory to write results.json, results.md and chart.svg to")
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
	return output(*out, &f, stdout)
}

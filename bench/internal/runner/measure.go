package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yrpc/yrpc/bench/internal/report"
)

// point is what one measurement runs: c workers in the client process
// making n counted calls with requests of size bytes (0: the workload's
// 581), over conns client connections (0: one), against listeners servers
// in the server process (0: one); sweep names the cost curve it belongs
// to ("" in the side-by-side run).
type point struct {
	sweep                        string
	c, n, size, conns, listeners int
}

// measure runs one implementation at one point in a fresh server and
// client process. A failure to measure counts every call as an error.
func measure(ctx context.Context, cfg *measureConfig, e entry, pt point, repeat int) report.Result {
	r := report.Result{Impl: e.name, Label: e.im.Label, Ref: e.im.Ref, TLS: e.im.TLS, C: pt.c, Repeat: repeat, Calls: pt.n,
		Sweep: pt.sweep, Size: pt.size, Conns: pt.conns, Providers: pt.listeners}
	if err := measureInto(ctx, cfg, e, pt, &r); err != nil {
		r.Errors = pt.n
		r.FirstError = err.Error()
	}
	return r
}

// record measures e at pt, appends the result to f and prints it on
// stderr; it returns ctx's error once ctx has ended.
func record(ctx context.Context, cfg *measureConfig, f *report.File, e entry, pt point, rep, repeats int, stderr io.Writer) error {
	r := measure(ctx, cfg, e, pt, rep)
	f.Results = append(f.Results, r)
	progress(stderr, rep, repeats, e.name, r)
	return ctx.Err()
}

// finish closes a run's file: its duration from start, the load at the
// end and the summary.
func finish(f *report.File, start time.Time, order []string) {
	f.Seconds = time.Since(start).Seconds()
	f.Machine.LoadEnd = loadAvg()
	f.Summary = report.Summarize(f.Results, order)
}

// progress prints one measurement on stderr.
func progress(w io.Writer, rep, repeats int, name string, r report.Result) {
	at := fmt.Sprintf("c=%-3d", r.C)
	if r.Sweep != "" {
		at = fmt.Sprintf("%s=%-7s", r.Sweep, report.FormatX(r.Sweep, r.X()))
	}
	fmt.Fprintf(w, "repeat %d/%d %s %-13s %9s calls/s  p50 %8.1fµs  p99 %9.1fµs  allocs cli %5.1f srv %5.1f  CPU µs cli %5.1f srv %5.1f  srv RSS %.0f MiB  errors %d %s\n",
		rep, repeats, at, name, report.Thousands(r.CallsPerSec), r.P50, r.P99,
		r.ClientAllocs, r.ServerAllocs, r.ClientCPU, r.ServerCPU, r.ServerRSS, r.Errors, r.FirstError)
}

func measureInto(ctx context.Context, cfg *measureConfig, e entry, pt point, r *report.Result) error {
	im := e.im
	name := strings.SplitN(im.Name, "@", 2)[0] // what the processes know it as
	ctx, cancel := context.WithTimeoutCause(ctx, cfg.timeout, errors.New("runner: measurement timed out"))
	defer cancel()
	env := append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(cfg.procs))

	var tlsArgs []string
	if im.TLS {
		tlsArgs = []string{"-certs", cfg.certs}
	}
	srvArgs := []string{"server", "-impl", name, "-size", strconv.Itoa(pt.size), "-listeners", strconv.Itoa(max(pt.listeners, 1))}
	var srvTimeline, cliTimeline []string
	if cfg.timeline != "" {
		stem := filepath.Join(cfg.timeline, timelineStem(e.name, pt.c, r.Repeat))
		srvTimeline = []string{"-timeline", stem + ".server"}
		cliTimeline = []string{"-timeline", stem + ".client"}
	}
	srv, err := startProc(ctx, e.bin, env, slices.Concat(srvArgs, tlsArgs, srvTimeline)...)
	if err != nil {
		return err
	}
	defer srv.stop(ctx)
	addr, err := expect(ctx, srv.out, "server", "addr")
	if err != nil {
		return err
	}
	warm := int(math.Ceil(float64(pt.n) * cfg.warmup))
	cli, err := startProc(ctx, e.bin, env, append([]string{"client", "-impl", name, "-addr", addr,
		"-c", strconv.Itoa(pt.c), "-n", strconv.Itoa(pt.n), "-warmup", strconv.Itoa(warm),
		"-size", strconv.Itoa(pt.size), "-conns", strconv.Itoa(max(pt.conns, 1))}, slices.Concat(tlsArgs, cliTimeline)...)...)
	if err != nil {
		return err
	}
	defer cli.stop(ctx)
	if _, err := expect(ctx, cli.out, "client", "ready"); err != nil {
		return err
	}
	m0, err := srv.mem(ctx)
	if err != nil {
		return err
	}
	scpu0, ccpu0 := srv.cpu(), cli.cpu()
	sops0, cops0 := srv.ops(), cli.ops()
	if err := say0(cli.in, "go"); err != nil {
		return err
	}
	line, err := expect(ctx, cli.out, "client", "result")
	if err != nil {
		return err
	}
	scpu1, ccpu1 := srv.cpu(), cli.cpu()
	sops1, cops1 := srv.ops(), cli.ops()
	r.ServerRSS, r.ServerPeakRSS = srv.rss()
	m1, err := srv.mem(ctx)
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
	r.ServerAllocs = float64(m1.mallocs-m0.mallocs) / calls
	r.ServerBytes = float64(m1.total-m0.total) / calls
	r.ServerConns = max(m1.conns, 0)
	if scpu0 >= 0 && scpu1 >= 0 && ccpu0 >= 0 && ccpu1 >= 0 {
		r.ClientCPU = float64(ccpu1-ccpu0) / float64(time.Microsecond) / calls
		r.ServerCPU = float64(scpu1-scpu0) / float64(time.Microsecond) / calls
	}
	r.ClientWakeups, r.ClientSyscalls = cops0.perCall(cops1, calls)
	r.ServerWakeups, r.ServerSyscalls = sops0.perCall(sops1, calls)
	r.Errors = cr.Errors
	r.FirstError = cr.FirstError
	if cfg.idle > 0 {
		if err := measureIdle(ctx, cfg.idle, srv, cli, r); err != nil {
			return err
		}
	}
	if err := cli.stop(ctx); err != nil {
		return fmt.Errorf("runner: client: %w", err)
	}
	if err := srv.stop(ctx); err != nil {
		return fmt.Errorf("runner: server: %w", err)
	}
	return nil
}

// idleSettle is how long measureIdle lets the processes settle after
// their counted calls before it reads their CPU time (no longer than the
// idle window it measures): the last answers' garbage is collected and
// the timers that a connection arms while busy (the client's idle read
// watch, the server's stall watchdog: a few milliseconds each) have run
// out.
const idleSettle = time.Second

// measureIdle keeps the server and the client, which keeps its
// connections open until it is stopped, idle for d after idleSettle, and
// records the CPU each used meanwhile, as a per cent of one core, and how
// often its threads woke, per second (from schedstat: nanoseconds, not
// the clock ticks of the CPU per call). Left zero where /proc does not
// tell.
func measureIdle(ctx context.Context, d time.Duration, srv, cli *proc, r *report.Result) error {
	if err := sleepCtx(ctx, min(idleSettle, d)); err != nil {
		return err
	}
	sc0, sn0, sok0 := srv.sched()
	cc0, cn0, cok0 := cli.sched()
	if err := sleepCtx(ctx, d); err != nil {
		return err
	}
	sc1, sn1, sok1 := srv.sched()
	cc1, cn1, cok1 := cli.sched()
	if !sok0 || !sok1 || !cok0 || !cok1 {
		return nil
	}
	pct := func(t time.Duration) float64 { return 100 * float64(t) / float64(d) }
	perSec := func(n int64) float64 { return float64(n) / d.Seconds() }
	r.ServerIdleCPU, r.ClientIdleCPU = pct(sc1-sc0), pct(cc1-cc0)
	r.ServerIdleWakeups, r.ClientIdleWakeups = perSec(sn1-sn0), perSec(cn1-cn0)
	return nil
}

// sleepCtx waits d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
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

// mem asks a server for its allocation counters and connections.
func (p *proc) mem(ctx context.Context) (memLine, error) {
	if err := say0(p.in, "mem"); err != nil {
		return memLine{}, err
	}
	line, err := expect(ctx, p.out, "server", "mem")
	if err != nil {
		return memLine{}, err
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

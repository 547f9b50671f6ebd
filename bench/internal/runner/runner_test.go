package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yrpc/yrpc/bench/internal/impl"
	"github.com/yrpc/yrpc/bench/internal/procfs"
	"github.com/yrpc/yrpc/bench/internal/report"
)

// childEnv makes the test binary act as the bench binary: "bench run"
// starts it with the environment variable set and a subcommand.
const childEnv = "BENCH_RUNNER_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		ctx := context.Background()
		var err error
		switch os.Args[1] {
		case "server":
			err = Server(ctx, os.Args[2:], os.Stdin, os.Stdout)
		case "client":
			err = Client(ctx, os.Args[2:], os.Stdin, os.Stdout)
		}
		if err != nil {
			io.WriteString(os.Stderr, err.Error()+"\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestParseRun(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr bool
		check   func(*runConfig) bool
	}{
		{nil, false, func(c *runConfig) bool {
			return c.calls1 == 40000 && c.calls == 150000 && c.repeats == 2 && len(c.conc) == 3 && c.procs == 2
		}},
		{[]string{"-quick"}, false, func(c *runConfig) bool {
			return c.calls1 == 1000 && c.calls == 3000 && c.repeats == 1 && c.out == filepath.Join("results", "quick")
		}},
		{[]string{"-quick", "-out", "x"}, false, func(c *runConfig) bool { return c.out == "x" }},
		{[]string{"-impls", "grpc, netrpc", "-c", "8"}, false, func(c *runConfig) bool {
			return len(c.impls) == 2 && c.impls[1].name == "netrpc" && c.impls[1].bin == c.bin && c.conc[0] == 8
		}},
		{[]string{"-impls", "netrpc,netrpc@/bin/sh"}, false, func(c *runConfig) bool {
			return len(c.impls) == 2 && c.impls[1].name == "netrpc@sh" && c.impls[1].bin == "/bin/sh" && c.impls[1].im.Name == "netrpc@sh"
		}},
		{[]string{"-impls", "netrpc@/no/such/binary"}, true, nil},
		{[]string{"-impls", "nope"}, true, nil},
		{[]string{"-impls", ""}, true, nil},
		{[]string{"-c", "0"}, true, nil},
		{[]string{"-c", "x"}, true, nil},
		{[]string{"-n", "0"}, true, nil},
		{[]string{"-warmup", "-1"}, true, nil},
		{[]string{"-idle", "10s"}, false, func(c *runConfig) bool { return c.idle == 10*time.Second }},
		{[]string{"-idle", "-1s"}, true, nil},
	}
	for _, tt := range tests {
		cfg, err := parseRun(tt.args)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseRun(%q) error = %v, want error %v", tt.args, err, tt.wantErr)
			continue
		}
		if err == nil && !tt.check(cfg) {
			t.Errorf("parseRun(%q) = %+v", tt.args, cfg)
		}
	}
}

func TestProtocolLines(t *testing.T) {
	in := "2026/11/29 noise from a library\n@bench addr 127.0.0.1:1\n@bench mem 10 2000\n"
	var echoed strings.Builder
	ch := lines(strings.NewReader(in), &echoed)
	ctx := context.Background()
	if got, err := expect(ctx, ch, "server", "addr"); err != nil || got != "127.0.0.1:1" {
		t.Fatalf("addr = %q, %v", got, err)
	}
	if _, err := expect(ctx, ch, "server", "ready"); err == nil {
		t.Fatal("expect accepted the wrong verb")
	}
	if _, err := expect(ctx, ch, "server", "mem"); err == nil {
		t.Fatal("expect read past the end of input")
	}
	if !strings.Contains(echoed.String(), "noise") {
		t.Errorf("other lines not echoed: %q", echoed.String())
	}
}

func TestParseMem(t *testing.T) {
	tests := []struct {
		in      string
		want    memLine
		wantErr bool
	}{
		{"10 2000 3", memLine{10, 2000, 3}, false},
		{"10 2000", memLine{10, 2000, -1}, false}, // an older bench binary
		{"ten", memLine{}, true},
		{"10 2000 x", memLine{}, true},
		{"10 x 3", memLine{}, true},
		{"1 2 3 4", memLine{}, true},
	}
	for _, tt := range tests {
		got, err := parseMem(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseMem(%q) = %+v, %v; want %+v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// serve runs "bench server -impl name" in this process over pipes until
// ctx ends or its stdin is closed; it returns the server's address, its
// stdin, its output lines and its result.
func serve(ctx context.Context, t *testing.T, name string) (addr string, in io.WriteCloser, out <-chan string, served <-chan error) {
	t.Helper()
	sIn, sInW := io.Pipe()
	sOutR, sOut := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Server(ctx, []string{"-impl", name}, sIn, sOut)
		sOut.Close()
	}()
	out = lines(sOutR, io.Discard)
	addr, err := expect(ctx, out, "server", "addr")
	if err != nil {
		t.Fatal(err)
	}
	return addr, sInW, out, done
}

// TestServerClient runs both subcommands in this process over pipes.
func TestServerClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr, sInW, out, served := serve(ctx, t, "tcp-pingpong")
	io.WriteString(sInW, "mem\n")
	if _, err := expect(ctx, out, "server", "mem"); err != nil {
		t.Fatal(err)
	}

	var cliOut strings.Builder
	err := Client(ctx, []string{"-impl", "tcp-pingpong", "-addr", addr, "-c", "3", "-n", "30", "-warmup", "3", "-wait=false"},
		strings.NewReader(""), &cliOut)
	if err != nil {
		t.Fatal(err)
	}
	sInW.Close()
	if err := <-served; err != nil {
		t.Fatalf("server: %v", err)
	}
	line, ok := strings.CutPrefix(strings.TrimSpace(cliOut.String()), prefix+"result ")
	if !ok {
		t.Fatalf("client said %q", cliOut.String())
	}
	var res clientResult
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		t.Fatal(err)
	}
	if res.Calls != 30 || res.Errors != 0 || res.P50 <= 0 || res.P99 < res.P50 {
		t.Errorf("result = %+v", res)
	}
}

// TestClientStaysUntilQuit checks that a client run by the runner (-wait)
// keeps its connection after its result until it is told to quit, so that
// "bench run -idle" measures a connected idle client: it still reads its
// stdin after the result.
func TestClientStaysUntilQuit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr, sInW, _, served := serve(ctx, t, "netrpc")
	cIn, cInW := io.Pipe()
	cOutR, cOut := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Client(ctx, []string{"-impl", "netrpc", "-addr", addr, "-c", "2", "-n", "20"}, cIn, cOut)
		cOut.Close()
	}()
	out := lines(cOutR, io.Discard)
	say := func(line string) {
		t.Helper()
		wrote := make(chan error, 1)
		go func() { _, err := io.WriteString(cInW, line+"\n"); wrote <- err }()
		select {
		case err := <-wrote:
			if err != nil {
				t.Fatal(err)
			}
		case <-ctx.Done():
			t.Fatalf("the client did not read %q", line)
		}
	}
	if _, err := expect(ctx, out, "client", "ready"); err != nil {
		t.Fatal(err)
	}
	say("go")
	if _, err := expect(ctx, out, "client", "result"); err != nil {
		t.Fatal(err)
	}
	say("mem") // not quit: read, and the client goes on waiting
	say("quit")
	if err := <-done; err != nil {
		t.Fatalf("client: %v", err)
	}
	sInW.Close()
	if err := <-served; err != nil {
		t.Fatalf("server: %v", err)
	}
}

// TestRun runs "bench run" end to end with this test binary as the server
// and client processes, a TLS implementation among them (with the
// certificates the run makes).
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Setenv(childEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var stdout, stderr strings.Builder
	args := []string{"-bin", exe, "-impls", "tcp-pingpong,netrpc,grpc-tls", "-c", "1,4", "-n1", "40", "-n", "80",
		"-repeats", "2", "-out", dir, "-timeout", "1m", "-idle", "1ms"}
	if err := Run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f report.File
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Results) != 12 || len(f.Summary) != 6 {
		t.Fatalf("%d results, %d summary rows; want 12 and 6", len(f.Results), len(f.Summary))
	}
	_, _, ioErr := procfs.IO(os.Getpid())
	for _, r := range f.Results {
		if r.Errors != 0 || r.CallsPerSec <= 0 || r.ServerAllocs < 0 || r.TLS != (r.Impl == "grpc-tls") {
			t.Errorf("result %+v", r)
		}
		// At c = 1 no call can share a write or a read with the next
		// one, which is not made yet: both processes read and write at
		// least once per call.
		least := 0.0
		if r.C == 1 {
			least = 2
		}
		if ioErr == nil && (r.ClientWakeups <= 0 || r.ServerWakeups <= 0 || !(r.ClientSyscalls > 0 && r.ClientSyscalls >= least) || !(r.ServerSyscalls > 0 && r.ServerSyscalls >= least)) {
			t.Errorf("%s c=%d: wake-ups %v and %v, system calls %v and %v per call; want wake-ups above 0, system calls above 0 and at least %v",
				r.Impl, r.C, r.ClientWakeups, r.ServerWakeups, r.ClientSyscalls, r.ServerSyscalls, least)
		}
	}
	for _, name := range []string{"results.md", "chart.svg"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	sc := bufio.NewScanner(strings.NewReader(stdout.String()))
	found := false
	for sc.Scan() {
		found = found || strings.Contains(sc.Text(), "netrpc")
	}
	if !found {
		t.Errorf("table lacks netrpc:\n%s", stdout.String())
	}
	if f.Settings.IdleSeconds != 0.001 {
		t.Errorf("idle seconds = %v, want 0.001", f.Settings.IdleSeconds)
	}
	for _, want := range []string{"the -tls rows run over mutual TLS 1.3", "c=4: yrpc-tls not measured; best TLS peer grpc-tls", "cli idle CPU %", "cli wake-ups/call"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
}

func TestParseCurves(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr bool
		check   func(*curvesConfig) bool
	}{
		{[]string{"-sweeps", "size,fanin", "-size-impls", "netrpc", "-fanin-impls", "netrpc"}, false, func(c *curvesConfig) bool {
			s := c.sweeps[0]
			return len(c.sweeps) == 2 && s.name == report.SweepSize && len(s.xs) == 5 && s.c == 16 && c.repeats == 2 &&
				s.callsAt(64) == 100000 && s.callsAt(1<<20) == 1024 && s.callsAt(1<<30) == 1000 &&
				c.sweeps[1].point(16) == point{sweep: report.SweepFanIn, c: 256, n: 150000, conns: 16}
		}},
		{[]string{"-sweeps", "fanin", "-fanin-impls", "netrpc,drpc", "-quick"}, false, func(c *curvesConfig) bool {
			s := c.sweeps[0]
			return c.out == filepath.Join("results", "curves", "quick") && c.repeats == 1 && s.calls == 2000 &&
				s.runs(s.impls[0], 1) && !s.runs(s.impls[1], 16) && s.runs(s.impls[1], 256)
		}},
		{[]string{"-sweeps", "providers", "-providers-impls", "netrpc"}, true, nil}, // not balanced
		{[]string{"-sweeps", "fanin", "-fanin-impls", "netrpc", "-fanin", "8", "-fanin-c", "4"}, true, nil},
		{[]string{"-sweeps", "nope"}, true, nil},
		{[]string{"-sweeps", "size", "-size-impls", "netrpc", "-sizes", "0"}, true, nil},
		{[]string{"-sweeps", "size", "-size-impls", ""}, true, nil},
	}
	for _, tt := range tests {
		cfg, err := parseCurves(tt.args)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseCurves(%q) error = %v, want error %v", tt.args, err, tt.wantErr)
			continue
		}
		if err == nil && !tt.check(cfg) {
			t.Errorf("parseCurves(%q) = %+v", tt.args, cfg)
		}
	}
}

// TestCurves runs "bench curves" end to end with this test binary as the
// server and client processes: a size curve, a fan-in curve (the ping-pong
// only where it has a connection per worker) and, with yrpc, a providers
// curve.
func TestCurves(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Setenv(childEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sweeps, want := "size,fanin", 2*2+3
	if impl.Has("yrpc") {
		sweeps, want = sweeps+",providers", want+2
	}
	args := []string{"-bin", exe, "-sweeps", sweeps, "-size-impls", "netrpc,tcp-pingpong", "-sizes", "64,40960",
		"-size-n", "30", "-size-bytes", "1000000", "-fanin-impls", "netrpc,tcp-pingpong", "-fanin", "1,3", "-fanin-c", "3",
		"-fanin-n", "30", "-providers", "1,3", "-providers-c", "3", "-providers-n", "30", "-repeats", "1", "-out", dir, "-timeout", "1m"}
	var stdout, stderr strings.Builder
	if err := Curves(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("curves: %v\nstderr:\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "curves.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f report.File
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Results) != want || len(f.Summary) != want {
		t.Fatalf("%d results, %d summary rows; want %d", len(f.Results), len(f.Summary), want)
	}
	for _, r := range f.Results {
		if r.Errors != 0 || r.CallsPerSec <= 0 || r.ServerRSS <= 0 || r.ServerPeakRSS < r.ServerRSS || r.Sweep == "" {
			t.Errorf("result %+v", r)
		}
		if r.Sweep == report.SweepSize && r.Size == 40960 && (r.Calls != 30 || r.ServerBytes < 40960 && r.Impl == "netrpc") {
			t.Errorf("40 kB point: %d calls, %.0f server bytes per call", r.Calls, r.ServerBytes)
		}
		// Every client connection of a point is a connection the server
		// accepted: one per client (fan-in) or per provider, one per
		// worker for the ping-pong.
		conns := r.X()
		switch {
		case r.Impl == "tcp-pingpong":
			conns = r.C
		case r.Sweep == report.SweepSize:
			conns = 1
		}
		if r.ServerConns != conns {
			t.Errorf("%s %s=%d: the server accepted %d connections, want %d", r.Impl, r.Sweep, r.X(), r.ServerConns, conns)
		}
	}
	for _, name := range []string{"curves.md", "size.svg", "fanin.svg"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	for _, wantOut := range []string{"| netrpc | 40 KiB |", "| tcp-pingpong | 3 |", "growth per call"} {
		if !strings.Contains(stdout.String(), wantOut) {
			t.Errorf("output lacks %q:\n%s", wantOut, stdout.String())
		}
	}
	// "bench report" renders a curves.json again.
	var again strings.Builder
	if err := Report([]string{"-in", filepath.Join(dir, "curves.json"), "-out", t.TempDir()}, &again); err != nil ||
		!strings.Contains(again.String(), "### Fan-in") {
		t.Errorf("report of curves.json: %v\n%s", err, again.String())
	}
}

// TestTail runs bench tail on net/rpc: the client and server processes
// write their timelines, and tail.md has the measurement's row.
func TestTail(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Setenv(childEnv, "1")
	out, keep := t.TempDir(), t.TempDir()
	var stdout, stderr strings.Builder
	keep = filepath.Join(keep, "made") // Run makes it
	if err := Tail(context.Background(), []string{"-impls", "netrpc,tcp-pipeline", "-c", "4", "-repeats", "1", "-n", "300", "-out", out, "-timeline", keep}, &stdout, &stderr); err != nil {
		t.Fatalf("tail: %v\nstderr:\n%s", err, stderr.String())
	}
	for _, name := range []string{"netrpc-c4-r1.client", "netrpc-c4-r1.server"} {
		if _, err := os.Stat(filepath.Join(keep, name)); err != nil {
			t.Error(err)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "tail.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| netrpc | 4 | 300 |") || string(md) != stdout.String() {
		t.Errorf("tail.md lacks the row of netrpc at c=4, or differs from what was printed:\n%s", md)
	}
	if !strings.Contains(string(md), "a load that is not one call per request): tcp-pipeline-c4-r1.client") {
		t.Errorf("tail.md does not say that the pipeline has no timeline of each call:\n%s", md)
	}
}

func TestTimelineStem(t *testing.T) {
	if got, want := timelineStem("feed/yrpc@bench-b", 64, 2), "feed_yrpc_bench-b-c64-r2"; got != want {
		t.Errorf("timelineStem = %q, want %q", got, want)
	}
}

// TestTailRefusesOldTimelines: a -timeline directory that holds
// timelines already is refused before anything runs.
func TestTailRefusesOldTimelines(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "netrpc-c4-r1.client"), []byte("timeline client netrpc 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	err := Tail(context.Background(), []string{"-impls", "netrpc", "-timeline", dir, "-out", t.TempDir()}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "holds timelines already") {
		t.Fatalf("Tail over old timelines: %v", err)
	}
}

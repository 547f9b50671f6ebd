package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/yrpc/yrpc/bench/internal/certs"
	"github.com/yrpc/yrpc/bench/internal/harness"
	"github.com/yrpc/yrpc/bench/internal/impl"
	"github.com/yrpc/yrpc/bench/internal/timeline"
)

// clientResult is what a client process reports for its counted phase.
type clientResult struct {
	Calls      int     `json:"calls"`
	Seconds    float64 `json:"seconds"`
	P50        float64 `json:"p50_us"`
	P99        float64 `json:"p99_us"`
	P999       float64 `json:"p999_us"`
	Mean       float64 `json:"mean_us"`
	Max        float64 `json:"max_us"`
	Mallocs    uint64  `json:"mallocs"`
	TotalAlloc uint64  `json:"total_alloc"`
	Errors     int     `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
}

// Client runs "bench client": dial one implementation, warm up, then on
// "go" from stdin make the counted calls and print the result.
func Client(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	name := fs.String("impl", "", "implementation: "+strings.Join(impl.Names(), ", "))
	addr := fs.String("addr", "", "server address")
	c := fs.Int("c", 1, "concurrent workers sharing one client")
	n := fs.Int("n", 1000, "counted calls")
	warm := fs.Int("warmup", 0, "warm-up calls before the counted ones")
	wait := fs.Bool("wait", true, `wait for "go" on stdin before the counted calls`)
	certDir := fs.String("certs", "", "directory of the run's certificates, for TLS implementations (bench run makes it)")
	size := fs.Int("size", 0, "request size in bytes (0: the workload's 581)")
	conns := fs.Int("conns", 1, "clients (connections) to spread the workers over (the fan-in curve)")
	timelineFile := fs.String("timeline", "", "file to write each counted call's start and latency, and when this process's collections ended, to (bench tail)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	im, err := impl.Lookup(*name)
	if err != nil {
		return err
	}
	cfg, err := tlsConfig(im, *certDir, (*certs.Set).Client)
	if err != nil {
		return err
	}
	if *c < 1 || *n < 1 || *warm < 0 || *size < 0 || *conns < 1 || *conns > *c {
		return fmt.Errorf("runner: need c >= 1, n >= 1, warmup >= 0, size >= 0 and 1 <= conns <= c")
	}
	cl, err := dial(ctx, im, *addr, *conns, impl.Options{C: *c, Size: *size, TLS: cfg})
	if err != nil {
		return err
	}
	defer cl.Close()
	if *warm > 0 {
		if ph := harness.Run(ctx, cl, *c, *warm); ph.Errors > 0 {
			return fmt.Errorf("runner: %s warm-up: %d errors, first: %w", im.Name, ph.Errors, ph.FirstErr)
		}
	}
	// Start the counted phase without the warm-up's garbage, and collect
	// it before "ready": the runner reads this process's CPU time from
	// then on, which is to count the calls' work only.
	runtime.GC()
	sc := bufio.NewScanner(stdin)
	if *wait {
		if err := say(stdout, "ready"); err != nil {
			return err
		}
		if !sc.Scan() || strings.TrimSpace(sc.Text()) != "go" {
			return fmt.Errorf("runner: %s client: want %q on stdin", im.Name, "go")
		}
	}
	run := harness.Run
	if *timelineFile != "" {
		run = harness.RunTimeline
	}
	ph := run(ctx, cl, *c, *n)
	if *timelineFile != "" {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		f := &timeline.File{Role: "client", Impl: im.Name, C: *c, Starts: ph.Starts, Took: ph.Took, GCEnds: timeline.GCEnds(&m)}
		if err := timeline.Write(*timelineFile, f); err != nil {
			return fmt.Errorf("runner: %s client: %w", im.Name, err)
		}
	}
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	res := clientResult{
		Calls:      *n,
		Seconds:    ph.Elapsed.Seconds(),
		P50:        us(harness.Percentile(ph.Lat, 0.50)),
		P99:        us(harness.Percentile(ph.Lat, 0.99)),
		P999:       us(harness.Percentile(ph.Lat, 0.999)),
		Mean:       us(harness.Mean(ph.Lat)),
		Max:        us(harness.Percentile(ph.Lat, 1)),
		Mallocs:    ph.Mallocs,
		TotalAlloc: ph.TotalAlloc,
		Errors:     ph.Errors,
	}
	if ph.FirstErr != nil {
		res.FirstError = ph.FirstErr.Error()
	}
	js, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if err := say(stdout, "result %s", js); err != nil || !*wait {
		return err
	}
	// Stay connected, idle, until the runner says quit or closes stdin:
	// it may be measuring what an idle client costs (bench run -idle).
	for sc.Scan() && strings.TrimSpace(sc.Text()) != "quit" {
	}
	return sc.Err()
}

// dial connects conns clients of im to addr for o.C workers between them
// (harness.FanIn), or one client when conns is 1.
func dial(ctx context.Context, im *impl.Impl, addr string, conns int, o impl.Options) (harness.Client, error) {
	if conns == 1 {
		cl, err := im.Dial(ctx, addr, o)
		if err != nil {
			return nil, fmt.Errorf("runner: %s dial %s: %w", im.Name, addr, err)
		}
		return cl, nil
	}
	if im.ConnPerWorker && conns < o.C {
		return nil, fmt.Errorf("runner: %s opens a connection per worker: it cannot run %d workers on %d connections", im.Name, o.C, conns)
	}
	each := o
	each.C = (o.C + conns - 1) / conns
	fan := make(harness.FanIn, 0, conns)
	for range conns {
		cl, err := im.Dial(ctx, addr, each)
		if err != nil {
			fan.Close()
			return nil, fmt.Errorf("runner: %s dial %s: %w", im.Name, addr, err)
		}
		fan = append(fan, cl)
	}
	return fan, nil
}

// Command tour shows yrpc's service governance in about ten seconds: three
// providers and a consumer of the Store service (schema in ./schema,
// generated code in ./tourrpc) on the embedded in-memory registry, or on
// ZooKeeper with -registry zk://127.0.0.1:2181.
//
// Sections: consistent-hash placement; a provider killed under load
// (breaker opens, retries fail over, no caller sees an error); rate
// limiting; a forced mock switched on and off at run time; a draining
// provider leaving traffic; a live feed (a server stream) kept while the
// provider serving it is drained; a graceful shutdown under load. It ends
// with a summary table and exits 0 when every section met its expectation.
//
//	go run ./examples/tour
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/yrpc/yrpc/examples/tour/tourrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/metrics"
)

func main() {
	regURL := flag.String("registry", "mem://", "registry: mem:// (embedded) or zk://host:port[,host:port]")
	verbose := flag.Bool("v", false, "log the runtime's messages to stderr")
	flag.Parse()
	logger := slog.New(slog.DiscardHandler)
	if *verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t, err := newTour(ctx, *regURL, logger, os.Stdout)
	if err == nil {
		err = t.run(ctx)
		t.close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tour:", err)
		os.Exit(1)
	}
}

// tour holds the cluster: providers, a consumer and the registry.
type tour struct {
	out       io.Writer
	tty       bool
	reg       backend
	log       *slog.Logger
	providers []*provider
	cli       *rt.Client
	store     *tourrpc.StoreClient
	rec       *metrics.Recorder
	results   []result
}

// result is one line of the summary.
type result struct {
	section string
	calls   int64
	errors  int64
	ok      bool
	note    string
}

func newTour(ctx context.Context, regURL string, logger *slog.Logger, out io.Writer) (*tour, error) {
	reg, err := openBackend(ctx, regURL, logger)
	if err != nil {
		return nil, err
	}
	t := &tour{out: out, reg: reg, log: logger, rec: metrics.NewRecorder(metrics.RecorderOptions{})}
	if f, ok := out.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			t.tty = true
		}
	}
	t.printf("yrpc tour — registry %s\n", reg.name())
	for i := 1; i <= 3; i++ {
		p, err := startProvider(ctx, fmt.Sprintf("p%d", i), reg, logger)
		if err != nil {
			t.close()
			return nil, err
		}
		t.providers = append(t.providers, p)
		t.printf("  provider %s listening on %s\n", p.name, p.addr)
	}
	conn, err := reg.conn(ctx)
	if err != nil {
		t.close()
		return nil, err
	}
	t.cli, err = rt.NewClient(rt.WithRegistry(conn), rt.WithApp("tour"), rt.WithLogger(logger), rt.WithObserver(t.rec))
	if err != nil {
		t.close()
		return nil, err
	}
	t.store = tourrpc.NewStoreClient(t.cli)
	return t, nil
}

func (t *tour) close() {
	if t.cli != nil {
		t.cli.Close()
	}
	for _, p := range t.providers {
		p.kill()
		p.expire()
	}
	t.reg.close()
}

func (t *tour) printf(format string, args ...any) { fmt.Fprintf(t.out, format, args...) }

func (t *tour) section(title string) {
	t.printf("\n== %s\n", title)
}

func (t *tour) record(r result) {
	mark := "ok"
	if !r.ok {
		mark = "FAILED"
	}
	t.printf("  -> %s: %s\n", mark, r.note)
	t.results = append(t.results, r)
}

func (t *tour) run(ctx context.Context) error {
	steps := []func(context.Context) error{
		t.placement, t.killProvider, t.rateLimit, t.forcedMock, t.drain, t.liveFeed, t.gracefulShutdown,
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return t.summary()
}

func (t *tour) summary() error {
	t.section("Summary")
	t.printf("  %-28s %9s %13s  %s\n", "section", "calls", "caller errors", "result")
	failed := 0
	for _, r := range t.results {
		mark := "ok"
		if !r.ok {
			mark, failed = "FAILED", failed+1
		}
		t.printf("  %-28s %9d %13d  %s\n", r.section, r.calls, r.errors, mark)
	}
	if s, ok := t.rec.Snapshot().Call(metrics.Client, tourrpc.StoreServiceDesc.Name, "Get"); ok {
		var codes []string
		for code, n := range s.Codes {
			if code != "OK" {
				codes = append(codes, fmt.Sprintf("%s %d", code, n))
			}
		}
		sort.Strings(codes)
		t.printf("\n  Store.Get as the consumer's metrics saw it: %d calls, %d mocked, p50 %v, p99 %v (histogram estimates)\n",
			s.Count, s.Mocked["forced"], s.P50.Round(time.Microsecond), s.P99.Round(time.Microsecond))
		if len(codes) > 0 {
			t.printf("  refused or failed, by code: %s (ResourceExhausted: the rate limit of section 3; Canceled: calls in flight when a load phase stopped)\n", strings.Join(codes, ", "))
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d sections failed", failed, len(t.results))
	}
	t.printf("\nAll %d sections passed.\n", len(t.results))
	return nil
}

// progress prints the load's counters while it runs: one rewritten line
// on a terminal, a line a second otherwise.
func (t *tour) progress(ctx context.Context, l *load) func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		every := time.Second
		if t.tty {
			every = 100 * time.Millisecond
		}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				if t.tty {
					t.printf("\r%s\n", l.line())
				}
				return
			case <-tick.C:
				if t.tty {
					t.printf("\r%s", l.line())
				} else {
					t.printf("  %s\n", strings.TrimSpace(l.line()))
				}
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// waitFor polls cond every 10 ms until it holds or limit passes; it
// returns how long that took.
func waitFor(ctx context.Context, limit time.Duration, cond func() bool) (time.Duration, bool) {
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Since(start) > limit {
			return time.Since(start), false
		}
		select {
		case <-ctx.Done():
			return time.Since(start), false
		case <-tick.C:
		}
	}
	return time.Since(start), true
}

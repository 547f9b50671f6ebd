//go:build linux

package hostile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/examples/hello/hellorpc"
	"github.com/yrpc/yrpc/examples/users/userrpc"
	"github.com/yrpc/yrpc/rt"
)

const mib = 1 << 20

// heapLimit is the heap an attack may make the process use, unless the
// attack gives another figure.
const heapLimit = 64 * mib

// callTimeout bounds each call of the good client and of the fresh
// client: a call slower than this under attack counts as failed.
const callTimeout = 10 * time.Second

// Request names that make the greeter behave otherwise than greet.
const (
	nameBlock    = "block"    // runs until the test releases blocked calls
	nameWait     = "wait"     // runs until its call is canceled
	nameBigMD    = "bigmd"    // answers with 20 KiB of response metadata
	nameBigReply = "bigreply" // answers with a 5 MiB greeting
)

// holder holds the calls that ask for it (request names nameBlock and
// nameWait) and counts them.
type holder struct {
	running atomic.Int64 // calls held now
	peak    atomic.Int64 // most calls held at once
	release chan struct{}
	done    chan struct{} // closed when the test ends: nothing is held past it
	once    sync.Once
}

func newHolder() *holder {
	return &holder{release: make(chan struct{}), done: make(chan struct{})}
}

// hold holds a call named name, if it is nameBlock (until
// releaseBlocked) or nameWait (until the call is canceled).
func (h *holder) hold(ctx context.Context, name string) error {
	if name != nameBlock && name != nameWait {
		return nil
	}
	n := h.running.Add(1)
	defer h.running.Add(-1)
	for p := h.peak.Load(); n > p && !h.peak.CompareAndSwap(p, n); p = h.peak.Load() {
	}
	release := h.release
	if name == nameWait {
		release = nil
	}
	select {
	case <-release:
		return nil
	case <-ctx.Done():
		return rt.Errorf(rt.Canceled, "hostile: held call canceled")
	case <-h.done:
		return rt.Errorf(rt.Aborted, "hostile: held call still running when the test ended")
	}
}

// releaseBlocked lets the calls named nameBlock return.
func (h *holder) releaseBlocked() { h.once.Do(func() { close(h.release) }) }

// greeter is the attacked greeter.Greeter: it greets, after holding the
// calls that ask for it.
type greeter struct {
	greeterrpc.UnimplementedGreeterServer
	h *holder
}

func (g greeter) SayHello(ctx context.Context, req *greeterrpc.HelloRequest) (*greeterrpc.HelloReply, error) {
	if err := g.h.hold(ctx, req.Name); err != nil {
		return nil, err
	}
	switch req.Name {
	case nameBigMD:
		rt.SetResponseMetadata(ctx, "big", strings.Repeat("m", 20<<10))
	case nameBigReply:
		return &greeterrpc.HelloReply{Message: strings.Repeat("b", 5<<20)}, nil
	}
	return &greeterrpc.HelloReply{Message: "Hello, " + req.Name}, nil
}

// sink serves bench.Hello and users.Users' Echo methods, whose request
// decoders are under attack, and answers with empty messages, so that the
// answers cost the attackers nothing to read. EchoLists holds the calls
// whose first tag asks for it.
type sink struct {
	userrpc.UnimplementedUsersServer
	h *holder
}

func (sink) Say(context.Context, *hellorpc.BenchmarkMessage) (*hellorpc.BenchmarkMessage, error) {
	return new(hellorpc.BenchmarkMessage), nil
}
func (sink) Echo(context.Context, *userrpc.Scalars) (*userrpc.Scalars, error) {
	return new(userrpc.Scalars), nil
}
func (s sink) EchoLists(ctx context.Context, m *userrpc.Lists) (*userrpc.Lists, error) {
	if len(m.Tags) > 0 {
		if err := s.h.hold(ctx, m.Tags[0]); err != nil {
			return nil, err
		}
	}
	return new(userrpc.Lists), nil
}

// logCounter is a slog.Handler that counts records by message, so that
// tests can see what the server logged (refused connections, accept
// retries).
type logCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *logCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h *logCounter) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logCounter) WithGroup(string) slog.Handler            { return h }
func (h *logCounter) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	if h.n == nil {
		h.n = make(map[string]int)
	}
	h.n[r.Message]++
	h.mu.Unlock()
	return nil
}

func (h *logCounter) count(msg string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[msg]
}

// heapWatch samples the heap in use while an attack runs and keeps the
// peak.
type heapWatch struct {
	limit     uint64
	base      uint64 // heap in use after a GC, before the attack
	peak      atomic.Uint64
	peakStack atomic.Uint64
	stop      chan struct{}
	done      chan struct{}
}

func watchHeap(limit uint64) *heapWatch {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h := &heapWatch{limit: limit, base: ms.HeapInuse, stop: make(chan struct{}), done: make(chan struct{})}
	h.sample()
	go func() {
		defer close(h.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-tick.C:
				h.sample()
			}
		}
	}()
	return h
}

// sample reads the heap in use now and returns it.
func (h *heapWatch) sample() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	raise(&h.peak, ms.HeapInuse)
	raise(&h.peakStack, ms.StackInuse)
	return ms.HeapInuse
}

func raise(v *atomic.Uint64, x uint64) {
	for p := v.Load(); x > p && !v.CompareAndSwap(p, x); p = v.Load() {
	}
}

// over reports whether the heap went over the limit: the attack may stop
// early, it has failed.
func (h *heapWatch) over() bool { return h.peak.Load() > h.limit }

// live collects garbage and returns the heap that is still in use.
func (h *heapWatch) live() uint64 {
	runtime.GC()
	return h.sample()
}

func (h *heapWatch) close() {
	select {
	case <-h.stop:
	default:
		close(h.stop)
		<-h.done
	}
}

// target is one attacked server with its good client.
type target struct {
	t      *testing.T
	srv    *rt.Server
	addr   string
	held   *holder // of the calls of greeter and sink
	logs   *logCounter
	heap   *heapWatch
	good   *goodClient
	served chan error // Serve's result
	start  time.Time

	mu        sync.Mutex
	attackers []net.Conn // the connections dial opened
}

// newTarget starts a server configured by opts (after a counting logger)
// serving greeter.Greeter, bench.Hello and users.Users on 127.0.0.1, its
// good client, and a heap watch against limit bytes. Everything stops
// when the test ends, and the test fails if goroutines leak.
func newTarget(t *testing.T, limit uint64, opts ...rt.ServerOption) *target {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	tg := &target{t: t, held: newHolder(), logs: &logCounter{}, served: make(chan error, 1)}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tg.addr = lis.Addr().String()
	tg.srv = rt.NewServer(append([]rt.ServerOption{rt.WithLogger(slog.New(tg.logs))}, opts...)...)
	greeterrpc.RegisterGreeter(tg.srv, greeter{h: tg.held})
	hellorpc.RegisterHello(tg.srv, sink{h: tg.held})
	userrpc.RegisterUsers(tg.srv, sink{h: tg.held})
	go func() { tg.served <- tg.srv.Serve(context.Background(), lis) }()
	t.Cleanup(func() {
		close(tg.held.done)
		if err := tg.srv.Close(); err != nil {
			t.Errorf("close server: %v", err)
		}
		if err := <-tg.served; !errors.Is(err, rt.ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	t.Cleanup(tg.closeAttackers)
	tg.good = startGood(t, tg.addr)
	t.Cleanup(tg.good.close)
	tg.heap = watchHeap(limit)
	t.Cleanup(tg.heap.close)
	tg.start = time.Now()
	return tg
}

// check asserts what every attack must leave true, and logs the figures:
// Serve still runs, a fresh client is served, the good client saw no
// failure (and made calls), and the heap in use stayed under the limit.
func (tg *target) check() {
	t := tg.t
	t.Helper()
	select {
	case err := <-tg.served:
		tg.served <- err
		t.Errorf("server down: Serve returned %v during the attack", err)
	default:
	}
	// The attack may have been quicker than the good client's first call
	// (every 2 ms): its connections are still open, so a call now is
	// still one during the attack.
	select {
	case <-tg.good.called:
	case <-time.After(callTimeout):
	}
	ok, failed, firstErr := tg.good.finish()
	if err := callOnce(tg.addr); err != nil {
		t.Errorf("server not serving after the attack: a fresh client's call failed: %v", err)
	}
	tg.heap.close()
	h := tg.heap
	t.Logf("figures: heap peak %.1f MiB (before the attack %.1f MiB, limit %.0f MiB), stacks peak %.1f MiB; good client %d calls, %d failed; attack took %v",
		mibs(h.peak.Load()), mibs(h.base), mibs(h.limit), mibs(h.peakStack.Load()), ok, failed, time.Since(tg.start).Round(time.Millisecond))
	if failed > 0 {
		t.Errorf("good client: %d of %d calls failed during the attack; first: %v", failed, ok+failed, firstErr)
	}
	if ok == 0 {
		t.Errorf("good client made no successful call during the attack")
	}
	if h.over() {
		t.Errorf("heap in use reached %.1f MiB, over the limit of %.0f MiB", mibs(h.peak.Load()), mibs(h.limit))
	}
}

func mibs(n uint64) float64 { return float64(n) / mib }

// goodClient calls greeter.Greeter/SayHello from 127.0.0.1, from two
// goroutines, about every two milliseconds each, until finish.
type goodClient struct {
	cli    *rt.Client
	ok     atomic.Int64
	failed atomic.Int64
	mu     sync.Mutex
	first  error
	stop   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
	called chan struct{} // closed at the first successful call
	seen   sync.Once
}

func startGood(t *testing.T, addr string) *goodClient {
	t.Helper()
	cli, err := rt.NewClient(rt.WithAddrs(addr))
	if err != nil {
		t.Fatal(err)
	}
	g := &goodClient{cli: cli, stop: make(chan struct{}), called: make(chan struct{})}
	gc := greeterrpc.NewGreeterClient(cli)
	if err := greet(gc, "good"); err != nil { // connected before the attack
		cli.Close()
		t.Fatalf("good client, before the attack: %v", err)
	}
	for range 2 {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			tick := time.NewTicker(2 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-g.stop:
					return
				case <-tick.C:
				}
				if err := greet(gc, "good"); err != nil {
					g.failed.Add(1)
					g.mu.Lock()
					if g.first == nil {
						g.first = err
					}
					g.mu.Unlock()
					continue
				}
				g.ok.Add(1)
				g.seen.Do(func() { close(g.called) })
			}
		}()
	}
	return g
}

// finish stops the calls and returns their counts and the first error.
func (g *goodClient) finish() (ok, failed int64, first error) {
	g.once.Do(func() { close(g.stop) })
	g.wg.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ok.Load(), g.failed.Load(), g.first
}

func (g *goodClient) close() {
	g.finish()
	g.cli.Close()
}

// greet calls SayHello with name and checks the answer.
func greet(gc *greeterrpc.GreeterClient, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	resp, err := gc.SayHello(ctx, &greeterrpc.HelloRequest{Name: name})
	if err != nil {
		return err
	}
	if want := "Hello, " + name; resp.Message != want {
		return fmt.Errorf("hostile: answer %q, want %q", resp.Message, want)
	}
	return nil
}

// callOnce makes one call with a new client.
func callOnce(addr string, opts ...rt.ClientOption) error {
	cli, err := rt.NewClient(append([]rt.ClientOption{rt.WithAddrs(addr)}, opts...)...)
	if err != nil {
		return err
	}
	defer cli.Close()
	return greet(greeterrpc.NewGreeterClient(cli), "fresh")
}

// poll calls cond every few milliseconds until it holds or bound passes,
// and reports whether it held.
func poll(bound time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(bound)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}

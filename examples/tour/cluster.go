package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/examples/tour/tourrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/zkreg"
)

// backend is the registry the tour runs on. Each provider and the consumer
// get their own handle, as separate processes would.
type backend interface {
	name() string
	conn(ctx context.Context) (registry.Registry, error)
	governor() registry.Governor
	close()
}

func openBackend(ctx context.Context, url string, logger *slog.Logger) (backend, error) {
	switch {
	case url == "mem://" || url == "mem":
		return &memBackend{m: registry.NewMemory()}, nil
	case strings.HasPrefix(url, "zk://"):
		z := &zkBackend{servers: strings.Split(strings.TrimPrefix(url, "zk://"), ","), log: logger}
		gov, err := z.open(ctx)
		if err != nil {
			return nil, fmt.Errorf("connect to ZooKeeper at %s: %w", url, err)
		}
		z.gov = gov
		return z, nil
	}
	return nil, fmt.Errorf("unknown registry %q (want mem:// or zk://host:port)", url)
}

type memBackend struct{ m *registry.Memory }

func (b *memBackend) name() string { return "mem:// (embedded, in-process)" }
func (b *memBackend) conn(context.Context) (registry.Registry, error) {
	return b.m.Conn(), nil
}
func (b *memBackend) governor() registry.Governor { return b.m }
func (b *memBackend) close()                      { b.m.Close() }

type zkBackend struct {
	servers []string
	log     *slog.Logger
	gov     *zkreg.Registry
	mu      sync.Mutex
	handles []*zkreg.Registry
}

// zkRoot keeps the tour's nodes apart from real deployments.
const zkRoot = "/yrpc-tour"

func (b *zkBackend) name() string { return "zk://" + strings.Join(b.servers, ",") + zkRoot }

func (b *zkBackend) open(ctx context.Context) (*zkreg.Registry, error) {
	r, err := zkreg.New(ctx, zkreg.Options{Servers: b.servers, Root: zkRoot, SessionTimeout: 4 * time.Second, Logger: b.log})
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.handles = append(b.handles, r)
	b.mu.Unlock()
	return r, nil
}

func (b *zkBackend) conn(ctx context.Context) (registry.Registry, error) { return b.open(ctx) }
func (b *zkBackend) governor() registry.Governor                         { return b.gov }
func (b *zkBackend) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, h := range b.handles {
		h.Close()
	}
}

// provider is one Store server.
type provider struct {
	name, addr string
	srv        *rt.Server
	reg        registry.Registry
	lis        *crashListener
	done       chan error
	once       sync.Once
}

func startProvider(ctx context.Context, name string, b backend, logger *slog.Logger) (*provider, error) {
	reg, err := b.conn(ctx)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &provider{name: name, addr: l.Addr().String(), reg: reg, lis: &crashListener{Listener: l}, done: make(chan error, 1)}
	p.srv = rt.NewServer(rt.WithRegistry(reg), rt.WithApp("tour-store"), rt.WithLogger(logger.With("provider", name)),
		rt.WithDeregisterWait(200*time.Millisecond))
	tourrpc.RegisterStore(p.srv, &store{name: name})
	go func() { p.done <- p.srv.Serve(context.Background(), p.lis) }()
	return p, nil
}

// crash drops the provider off the network at once, as a killed process
// does: its registration stays until its session expires (expire).
func (p *provider) crash() { p.lis.crash() }

// expire stands for the registry session of a crashed provider expiring.
func (p *provider) expire() {
	p.once.Do(func() {
		p.srv.Close()
		<-p.done
		p.reg.Close()
	})
}

func (p *provider) kill() { p.crash() }

// crashListener tracks its connections so that crash can cut them all.
type crashListener struct {
	net.Listener
	mu      sync.Mutex
	conns   []net.Conn
	crashed bool
}

func (l *crashListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.crashed {
		c.Close()
		return nil, net.ErrClosed
	}
	l.conns = append(l.conns, c)
	return c, nil
}

func (l *crashListener) crash() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.crashed {
		return
	}
	l.crashed = true
	l.Listener.Close()
	for _, c := range l.conns {
		c.Close()
	}
}

// store implements tourrpc.StoreServer.
type store struct {
	tourrpc.UnimplementedStoreServer
	name string
}

func (s *store) Get(ctx context.Context, k *tourrpc.Key) (*tourrpc.Entry, error) {
	return &tourrpc.Entry{ID: k.ID, Value: fmt.Sprintf("value-%d", k.ID), ServedBy: s.name}, nil
}

func (s *store) Put(ctx context.Context, e *tourrpc.Entry) (*tourrpc.Entry, error) {
	e.ServedBy = s.name
	return e, nil
}

// Watch sends an update of the entry every 20 ms until the stream ends.
func (s *store) Watch(k *tourrpc.Key, stream rt.ServerStreamingServer[tourrpc.Entry]) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for n := 1; ; n++ {
		if err := stream.Send(&tourrpc.Entry{ID: k.ID, Value: fmt.Sprintf("update-%d", n), ServedBy: s.name}); err != nil {
			return err
		}
		select {
		case <-tick.C:
		case <-stream.Context().Done():
			return stream.Context().Err()
		}
	}
}

// load calls Store.Get from a few goroutines until stopped, counting what
// the callers see.
type load struct {
	ok, mocked, limited, errs atomic.Int64
	served                    sync.Map // provider name -> *atomic.Int64
	lastErr                   atomic.Value
	cancel                    context.CancelFunc
	wg                        sync.WaitGroup
	start                     time.Time
}

func startLoad(ctx context.Context, s *tourrpc.StoreClient, workers int) *load {
	ctx, cancel := context.WithCancel(ctx)
	l := &load{cancel: cancel, start: time.Now()}
	for w := range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(w), 42))
			for ctx.Err() == nil {
				var md rt.MD
				e, err := s.Get(ctx, &tourrpc.Key{ID: rnd.Int64N(1000) + 1}, rt.ResponseMetadata(&md))
				l.count(ctx, e, md, err)
			}
		}()
	}
	return l
}

func (l *load) count(ctx context.Context, e *tourrpc.Entry, md rt.MD, err error) {
	switch {
	case err == nil && md.Get(rt.MDMock) != "":
		l.mocked.Add(1)
	case err == nil:
		l.ok.Add(1)
		v, _ := l.served.LoadOrStore(e.ServedBy, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
	case ctx.Err() != nil && errors.Is(err, context.Canceled) || rt.CodeOf(err) == rt.Canceled:
		// the load was stopped mid-call
	case rt.CodeOf(err) == rt.ResourceExhausted:
		l.limited.Add(1)
	default:
		l.errs.Add(1)
		l.lastErr.Store(err.Error())
	}
}

func (l *load) stop() {
	l.cancel()
	l.wg.Wait()
}

func (l *load) calls() int64 { return l.ok.Load() + l.mocked.Load() + l.limited.Load() + l.errs.Load() }

func (l *load) servedBy(name string) int64 {
	if v, ok := l.served.Load(name); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

func (l *load) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %5.1fs  calls %7d  ok %7d", time.Since(l.start).Seconds(), l.calls(), l.ok.Load())
	for _, p := range []string{"p1", "p2", "p3"} {
		fmt.Fprintf(&b, "  %s %6d", p, l.servedBy(p))
	}
	if n := l.mocked.Load(); n > 0 {
		fmt.Fprintf(&b, "  mocked %d", n)
	}
	if n := l.limited.Load(); n > 0 {
		fmt.Fprintf(&b, "  rate-limited %d", n)
	}
	fmt.Fprintf(&b, "  errors %d ", l.errs.Load())
	return b.String()
}

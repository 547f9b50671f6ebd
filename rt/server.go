package rt

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/limiter"
	"github.com/yrpc/yrpc/rt/metrics"
	"github.com/yrpc/yrpc/rt/registry"
)

// ErrServerClosed is returned by Serve after Shutdown or Close.
var ErrServerClosed = &Error{Code: Unavailable, Message: "server closed"}

// Server serves generated services over yrpc connections. Register services
// with the generated Register functions, then call Serve. The zero value is
// not usable; use NewServer. Methods are safe for concurrent use.
type Server struct {
	o serverConfig

	mu        sync.Mutex
	services  []*serviceEntry // fixed once serving starts
	regErr    error           // a bad option or registration, returned by Serve
	serving   bool
	listeners map[net.Listener]struct{}
	conns     map[*serverConn]struct{}
	perIP     map[string]int // open connections by client IP
	endpoints []registry.Endpoint
	watches   []func()
	// withdrawn: Shutdown or Close deregistered the services; a
	// registration finishing later is undone at once (see announce).
	withdrawn bool
	closed    bool
	ticking   bool

	closing   atomic.Bool // refuse new calls with Unavailable
	goaway    atomic.Bool // GOAWAY sent: listeners closed
	inflight  atomic.Int64
	drained   chan struct{} // signalled when inflight drops to 0 while closing
	ready     chan struct{} // closed once Serve has registered the services
	connGone  chan struct{} // signalled when a connection is removed
	readyOnce sync.Once
	done      chan struct{} // closed by Close
	epoch     atomic.Int64  // heartbeat ticks, for idle detection
	made      time.Time     // when NewServer ran: the origin of serverCall.arrived
	wg        sync.WaitGroup
	workers   workerPool
	conc      *limiter.Concurrency // nil: no in-flight limit
	held      *heldBytes           // request bytes of calls in flight
	rec       *metrics.Recorder    // the default observer; nil with WithObserver
	token     string               // the registry token calls must carry; "" without WithRegistryToken
	grpc      *grpcServer          // gRPC and gRPC-Web (grpc_*.go); nil with WithGRPC(GRPCOff)
	health    health               // grpc.health.v1.Health (grpc_health.go)
	reflect   reflection           // grpc.reflection.v1 and v1alpha (grpc_reflect.go)
}

type serviceEntry struct {
	sd      *ServiceDesc
	impl    any
	key     registry.Key
	methods []methodEntry
	builtin bool                        // served to any group and version, never registered (Health)
	limit   atomic.Pointer[callLimiter] // nil: no limit
}

type methodEntry struct {
	info    CallInfo
	handler Handler
	allow   []string                     // principals allowed (AccessRules patterns); nil: anyone
	limit   *atomic.Pointer[callLimiter] // the service's (serviceEntry.limit)
	// streamHandler serves a stream method, under the stream interceptors.
	streamHandler StreamHandler
	// slowUntil is the time (unix nanos, server clock) until which the
	// method's calls run on workers, not on the reading goroutine (see
	// serverConn.watchdog); inlined and stalls count its calls served on
	// reading goroutines and those that stalled one, since the last
	// decision.
	slowUntil       atomic.Int64
	inlined, stalls atomic.Int64
	// reqs holds request messages of the method for reuse (see
	// WithRequestReuse); nil when they are not reused.
	reqs *sync.Pool
}

// quick reports whether the method's calls run on the reading goroutine
// now (see slowUntil). A method that was never slow, or whose slow period
// ended (slowUntil is then reset), costs no clock read.
func (me *methodEntry) quick(clock Clock) bool {
	until := me.slowUntil.Load()
	if until == 0 {
		return true
	}
	if clock.Now().UnixNano() < until {
		return false
	}
	me.slowUntil.CompareAndSwap(until, 0)
	return true
}

// newRequest returns an empty request message of the method: a reused
// one when there is one.
func (me *methodEntry) newRequest() Message {
	if me.reqs != nil {
		if m, ok := me.reqs.Get().(Message); ok {
			return m
		}
	}
	return me.info.Method.NewRequest()
}

// reuseRequest takes back a request from newRequest that nothing refers
// to any more, reset so that it keeps nothing of the call alive.
func (me *methodEntry) reuseRequest(m Message) {
	if me.reqs == nil {
		return
	}
	_ = m.Unmarshal(nil) // resets: see Message
	me.reqs.Put(m)
}

// stalled records that a call of the method stalled a read loop and
// reports whether the method should now run on workers: when stalls are
// not rare among its calls (a handler that blocks), as opposed to the odd
// call that the OS or the GC held up.
func (me *methodEntry) stalled() bool {
	st, n := me.stalls.Add(1), me.inlined.Load()
	switch {
	case st >= 3 && st*8 >= n:
		me.stalls.Store(0)
		me.inlined.Store(0)
		return true
	case n > 1024:
		// Rare stalls: start a new window.
		me.stalls.Store(1)
		me.inlined.Store(0)
	}
	return false
}

// NewServer returns a server configured by opts. An option whose value
// can only be a mistake (WithWeight out of range) makes Serve fail at once
// with an error naming the option and the value, before it accepts a
// connection or registers anything, as a registration error does.
func NewServer(opts ...ServerOption) *Server {
	s := &Server{
		o:         newServerConfig(opts),
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[*serverConn]struct{}),
		perIP:     make(map[string]int),
		drained:   make(chan struct{}, 1),
		ready:     make(chan struct{}),
		connGone:  make(chan struct{}, 1),
		done:      make(chan struct{}),
		made:      time.Now(),
	}
	s.regErr = s.o.check()
	s.rec = s.o.defaultRecorder()
	if s.o.registryToken {
		s.token = newRegistryToken()
	}
	s.workers.max = 4096
	s.held = newHeldBytes(s.o.limits.MaxTotalRequestBytes)
	if n := s.o.limits.MaxCalls; n > 0 {
		s.conc = limiter.NewConcurrency(n)
	}
	s.grpc = newGRPCServer(s)
	s.health.init(s)
	s.reflect.init(s)
	return s
}

// Ready is closed once Serve is accepting on its listener and has
// registered the server's services in the registry (at once without a
// registry). A program that starts a server and calls it — or tells others
// it is up — waits for it:
//
//	go srv.Serve(ctx, lis)
//	<-srv.Ready()
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Metrics returns a snapshot of the calls the server handled: the default
// Recorder's; empty when WithObserver replaced it.
func (s *Server) Metrics() metrics.Snapshot {
	if s.rec == nil {
		return metrics.Snapshot{}
	}
	return s.rec.Snapshot()
}

// Recorder returns the server's default metrics Recorder, nil when
// WithObserver replaced it; Recorder().Publish makes it an expvar.
func (s *Server) Recorder() *metrics.Recorder { return s.rec }

// RegisterService registers impl as the implementation of sd. Generated
// Register functions call it. Errors (registering after Serve, a duplicate
// service, a method ID that another service uses too, a hand-written
// descriptor without a MethodIndex that maps each method's ID to its
// index, or a method without its handler or NewRequest) are returned by
// Serve.
func (s *Server) RegisterService(sd *ServiceDesc, impl any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.register(sd, impl); err != nil && s.regErr == nil {
		s.regErr = err
	}
}

func (s *Server) register(sd *ServiceDesc, impl any) error {
	switch {
	case sd == nil:
		return fmt.Errorf("rt: register: nil service descriptor")
	case s.serving:
		return fmt.Errorf("rt: register %q: server already serving", sd.Name)
	case impl == nil:
		return fmt.Errorf("rt: register %q: nil implementation", sd.Name)
	case sd.MethodIndex == nil:
		return fmt.Errorf("rt: register %q: the descriptor has no MethodIndex (yrpcc generates it)", sd.Name)
	}
	for i := range sd.Methods {
		m := &sd.Methods[i]
		switch {
		case sd.MethodIndex(m.ID) != i:
			return fmt.Errorf("rt: register %q: its MethodIndex maps the ID %#x of method %q to %d, not %d", sd.Name, m.ID, m.Name, sd.MethodIndex(m.ID), i)
		case m.Stream == NotStream && m.Handle == nil, m.Stream != NotStream && m.HandleStream == nil:
			return fmt.Errorf("rt: register %q: method %q has no handler in its descriptor", sd.Name, m.Name)
		case m.Stream == NotStream && m.NewRequest == nil:
			return fmt.Errorf("rt: register %q: method %q has no NewRequest in its descriptor", sd.Name, m.Name)
		}
	}
	for _, se := range s.services {
		if se.sd.Name == sd.Name {
			return fmt.Errorf("rt: service %q registered twice", sd.Name)
		}
		for i := range sd.Methods {
			if se.sd.MethodIndex(sd.Methods[i].ID) >= 0 {
				return fmt.Errorf("rt: method %q of service %q has the ID %#x of a method of %q", sd.Methods[i].Name, sd.Name, sd.Methods[i].ID, se.sd.Name)
			}
		}
	}
	se := s.newServiceEntry(sd, impl)
	if p := sd.Policy.RateLimit; p.Rate > 0 {
		se.limit.Store(newCallLimiter(p.Rate, p.Burst, false))
	}
	s.services = append(s.services, se)
	return nil
}

// newServiceEntry prepares impl's methods as the implementation of sd.
func (s *Server) newServiceEntry(sd *ServiceDesc, impl any) *serviceEntry {
	group, version := sd.Group, sd.Version
	if s.o.group != "" || s.o.version != "" {
		group, version = s.o.group, s.o.version
	}
	se := &serviceEntry{sd: sd, impl: impl, key: registry.Key{Service: sd.Name, Group: group, Version: version}}
	se.methods = make([]methodEntry, len(sd.Methods))
	for i := range sd.Methods {
		me := &se.methods[i]
		me.info = CallInfo{Service: sd, Method: &sd.Methods[i], Index: i}
		me.allow = accessRule(sd, &sd.Methods[i], s.o.access)
		me.limit = &se.limit
		if hs := sd.Methods[i].HandleStream; hs != nil {
			me.streamHandler = chainStream(s.o.streamInterceptors, &me.info, func(ss ServerStreamer) error { return hs(impl, ss) })
			continue
		}
		if s.o.reuseRequests {
			me.reqs = new(sync.Pool)
		}
		handle := sd.Methods[i].Handle
		me.handler = chainServer(s.o.interceptors, &me.info, func(ctx context.Context, req Message) (Message, error) {
			return handle(impl, ctx, req)
		})
	}
	return se
}

// serviceNames lists the registered services, for errors.
func (s *Server) serviceNames() string {
	names := make([]string, len(s.services))
	for i, se := range s.services {
		names[i] = se.key.String()
	}
	return strings.Join(names, ", ")
}

// methodNames lists the service's method names for its registry payload.
func (se *serviceEntry) methodNames() []string {
	names := make([]string, len(se.sd.Methods))
	for i := range se.sd.Methods {
		names[i] = se.sd.Methods[i].Name
	}
	return names
}

// lookup finds the method with wire ID id.
func (s *Server) lookup(id uint32) (*serviceEntry, *methodEntry) {
	for _, se := range s.services {
		if i := se.sd.MethodIndex(id); i >= 0 && i < len(se.methods) {
			return se, &se.methods[i]
		}
	}
	if se, me := s.health.lookup(id); me != nil {
		return se, me
	}
	return s.reflect.lookup(id)
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Shutdown stops the server gracefully, in this order: deregister from the
// registry; wait WithDeregisterWait for consumers to notice; send GOAWAY on
// every connection and stop accepting; answer calls that still arrive with
// Unavailable ("server closing"), which clients retry on another instance;
// wait for in-flight calls until ctx is done; close. It returns ctx's error
// if calls were still running when ctx ended (they are then canceled).
func (s *Server) Shutdown(ctx context.Context) error {
	s.health.stopping()
	s.deregister(ctx)
	if d := s.o.deregisterWait; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	s.goaway.Store(true)
	s.closing.Store(true)
	s.mu.Lock()
	conns := s.closeListenersLocked()
	s.mu.Unlock()
	for _, c := range conns {
		c.sendGoAway()
	}
	if s.grpc != nil {
		s.grpc.goAway()
	}
	s.health.changed()
	var err error
	for s.inflight.Load() > 0 && err == nil {
		select {
		case <-s.drained:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if err == nil {
		s.closeWrites(ctx)
	}
	if cerr := s.Close(); err == nil && cerr != nil && !errors.Is(cerr, ErrServerClosed) {
		err = cerr
	}
	return err
}

// closeLinger bounds how long a drained connection stays open for its
// client to read the server's last frames and close it.
const closeLinger = time.Second

// closeWrites ends the drained connections gently: each sends its last
// frames and a FIN, and its reader drops what still comes until the client
// closes, so that the client reads the GoAway before the end of the
// connection. (Closing with requests unread makes the kernel answer with a
// reset, which can destroy the GoAway before the client reads it.) It waits
// for the clients to close, at most closeLinger or until ctx ends.
func (s *Server) closeWrites(ctx context.Context) {
	s.mu.Lock()
	conns := s.connsLocked()
	s.mu.Unlock()
	for _, c := range conns {
		c.closeWrite()
	}
	t := time.NewTimer(closeLinger)
	defer t.Stop()
	for {
		s.mu.Lock()
		n := len(s.conns)
		s.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-s.connGone:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// reregister updates the server's registry entries with notServing.
func (s *Server) reregister(notServing bool) {
	s.mu.Lock()
	for i := range s.endpoints {
		s.endpoints[i].NotServing = notServing
	}
	eps := slices.Clone(s.endpoints)
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), closeDeregisterTimeout)
	defer cancel()
	for _, e := range eps {
		if err := s.o.registry.Register(ctx, e); err != nil {
			s.o.logger.Warn("rt: updating the registry entry failed", "key", e.Key.String(), "addr", e.Addr, "err", err)
		}
	}
}

func (s *Server) deregister(ctx context.Context) {
	s.mu.Lock()
	s.withdrawn = true
	eps, watches := s.endpoints, s.watches
	s.endpoints, s.watches = nil, nil
	s.mu.Unlock()
	for _, stop := range watches {
		stop()
	}
	for _, e := range eps {
		// A closed registry removed the entry itself (Registry.Close).
		if err := s.o.registry.Deregister(ctx, e); err != nil && !errors.Is(err, registry.ErrClosed) {
			s.o.logger.Warn("rt: deregister failed", "key", e.Key.String(), "addr", e.Addr, "err", err)
		}
	}
}

// closeDeregisterTimeout bounds Close's wait for the registry.
const closeDeregisterTimeout = 5 * time.Second

// Close closes the server at once: listeners, connections (in-flight calls
// are canceled) and registrations. It waits for the server's goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	s.closing.Store(true)
	close(s.done)
	conns := s.closeListenersLocked()
	s.mu.Unlock()
	dctx, cancel := context.WithTimeout(context.Background(), closeDeregisterTimeout)
	s.deregister(dctx)
	cancel()
	for _, c := range conns {
		c.close(ErrServerClosed)
	}
	if s.grpc != nil {
		s.grpc.close()
	}
	s.health.changed()
	s.wg.Wait()
	s.workers.close()
	return nil
}

func (s *Server) removeConn(c *serverConn) {
	s.mu.Lock()
	if _, ok := s.conns[c]; ok {
		delete(s.conns, c)
		if s.perIP[c.ip]--; s.perIP[c.ip] <= 0 {
			delete(s.perIP, c.ip)
		}
	}
	s.mu.Unlock()
	select {
	case s.connGone <- struct{}{}:
	default:
	}
}

// callDone is called when a call leaves the server.
func (s *Server) callDone() {
	if s.conc != nil {
		s.conc.Release()
	}
	if s.inflight.Add(-1) == 0 && s.closing.Load() {
		select {
		case s.drained <- struct{}{}:
		default:
		}
	}
}

// ticker drives heartbeats and idle timeouts.
func (s *Server) ticker() {
	defer s.wg.Done()
	period := s.tickPeriod()
	if period <= 0 {
		<-s.done
		return
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			e := s.epoch.Add(1)
			s.mu.Lock()
			conns := s.connsLocked()
			s.mu.Unlock()
			for _, c := range conns {
				c.tick(e, period)
			}
		}
	}
}

func (s *Server) tickPeriod() time.Duration {
	p := time.Duration(0)
	if s.o.heartbeat > 0 {
		p = s.o.heartbeat
	}
	if s.o.idleTimeout > 0 && (p == 0 || s.o.idleTimeout/4 < p) {
		p = s.o.idleTimeout / 4
	}
	return p
}

// connsLocked returns the open connections; s.mu is held.
func (s *Server) connsLocked() []*serverConn {
	return slices.Collect(maps.Keys(s.conns))
}

// closeListenersLocked closes the listeners and returns the open
// connections; s.mu is held.
func (s *Server) closeListenersLocked() []*serverConn {
	for lis := range s.listeners {
		lis.Close()
	}
	return s.connsLocked()
}

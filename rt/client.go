package rt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/breaker"
	"github.com/yrpc/yrpc/rt/balance"
	"github.com/yrpc/yrpc/rt/metrics"
	"github.com/yrpc/yrpc/rt/registry"
)

// ErrClientClosed is returned by calls on a closed Client.
var ErrClientClosed = &Error{Code: Unavailable, Message: "client closed"}

// Client calls generated services. It finds providers in its registry,
// balances calls over them, keeps one multiplexed connection per provider
// (WithPoolSize for more) and guards calls with per-provider circuit
// breakers, retries within a budget and mocks. Make one with NewClient and
// share it: a Client is safe for concurrent use and serves every service.
type Client struct {
	o      options
	reg    registry.Registry
	ownReg bool
	invoke InvokeFunc
	id     string

	svcs atomic.Pointer[map[*ServiceDesc]*svcState]

	mu     sync.Mutex
	pools  map[string]*connPool
	closed bool
	done   chan struct{}
	wg     sync.WaitGroup
	calls  sync.Pool
	rec    *metrics.Recorder // the default observer; nil with WithObserver
}

// NewClient returns a client configured by opts. It needs WithRegistry or
// WithAddrs; it connects lazily, on the first call to each provider.
func NewClient(opts ...Option) (*Client, error) {
	c := &Client{o: defaultOptions(opts), pools: make(map[string]*connPool), done: make(chan struct{})}
	c.rec = c.o.defaultMetrics("yrpc.client")
	switch {
	case c.o.registry != nil && len(c.o.addrs) > 0:
		return nil, errors.New("rt: new client: WithRegistry and WithAddrs are exclusive")
	case c.o.registry != nil:
		c.reg = c.o.registry
	case len(c.o.addrs) > 0:
		c.reg, c.ownReg = registry.NewStatic(c.o.addrs...), true
	default:
		return nil, errors.New("rt: new client: no providers: use WithRegistry or WithAddrs")
	}
	if c.o.balancer != "" {
		if _, ok := balance.Lookup(c.o.balancer); !ok {
			return nil, fmt.Errorf("rt: new client: unknown balancer %q", c.o.balancer)
		}
	}
	host, _ := os.Hostname()
	c.id = host + ":" + strconv.Itoa(os.Getpid()) + ":" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	m := make(map[*ServiceDesc]*svcState)
	c.svcs.Store(&m)
	c.calls.New = func() any { return &callState{done: make(chan struct{}, 1), tried: make([]int, 0, 8)} }
	c.invoke = chainClient(c.o.clientInts, c.call)
	if c.o.heartbeat > 0 {
		c.wg.Add(1)
		go c.heartbeats()
	}
	return c, nil
}

// Metrics returns a snapshot of the client's calls and attempts: the
// default Recorder's; empty when WithObserver replaced it.
func (c *Client) Metrics() metrics.Snapshot {
	if c.rec == nil {
		return metrics.Snapshot{}
	}
	return c.rec.Snapshot()
}

// Invoke implements Invoker: generated stubs call it.
func (c *Client) Invoke(ctx context.Context, sd *ServiceDesc, m int, req, resp Message, opts ...CallOption) error {
	if m < 0 || m >= len(sd.Methods) {
		return Errorf(Internal, "invoke %s: method index %d out of range", sd.Name, m)
	}
	st, err := c.service(sd)
	if err != nil {
		return err
	}
	cs := c.calls.Get().(*callState)
	cs.opts = callOptions{}
	for _, f := range opts {
		f(&cs.opts)
	}
	info := st.info(m)
	if len(c.o.clientInts) == 0 {
		err = c.do(ctx, st, info, cs, req, resp)
	} else {
		err = c.invoke(context.WithValue(ctx, callRefKey{}, &callRef{st: st, cs: cs}), info, req, resp)
	}
	cs.resp, cs.respMD, cs.raw = nil, nil, nil
	c.calls.Put(cs)
	return err
}

// service returns the state of sd, creating it (and its registry watch) on
// first use.
func (c *Client) service(sd *ServiceDesc) (*svcState, error) {
	if st := (*c.svcs.Load())[sd]; st != nil {
		return st, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClientClosed
	}
	old := *c.svcs.Load()
	if st := old[sd]; st != nil {
		return st, nil
	}
	st, err := newSvcState(c, sd)
	if err != nil {
		return nil, err
	}
	m := make(map[*ServiceDesc]*svcState, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[sd] = st
	c.svcs.Store(&m)
	return st, nil
}

// pool returns the connection pool of addr.
func (c *Client) pool(addr string) *connPool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pools[addr]
	if p == nil {
		p = newConnPool(addr, &c.o)
		c.pools[addr] = p
	}
	return p
}

// Close stops watching the registry, deregisters the client's consumer
// entries and closes every connection; calls in flight fail with
// Unavailable. It waits for the client's goroutines.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.done)
	svcs := *c.svcs.Load()
	pools := c.pools
	c.pools = map[string]*connPool{}
	c.mu.Unlock()
	for _, st := range svcs {
		st.close()
	}
	for _, p := range pools {
		p.close(ErrClientClosed)
	}
	c.wg.Wait()
	if c.ownReg {
		return c.reg.Close()
	}
	return nil
}

func (c *Client) heartbeats() {
	defer c.wg.Done()
	t := time.NewTicker(c.o.heartbeat / 2)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case now := <-t.C:
			c.mu.Lock()
			pools := make([]*connPool, 0, len(c.pools))
			for _, p := range c.pools {
				pools = append(pools, p)
			}
			c.mu.Unlock()
			for _, p := range pools {
				p.each(func(cc *clientConn) { cc.heartbeat(now, c.o.heartbeat) })
			}
		}
	}
}

// svcState is what the client knows about one service: its providers (a
// view rebuilt on every registry change), their breakers and the retry
// budget.
type svcState struct {
	c          *Client
	sd         *ServiceDesc
	key        registry.Key
	keyName    string // key.String(), for errors
	infos      []CallInfo
	builder    balance.Builder
	budget     retryBudget
	ready      chan struct{} // closed with the first snapshot
	view       atomic.Pointer[svcView]
	stop       func()
	consumer   registry.Endpoint
	registered chan struct{} // closed when the consumer registration ended

	mu        sync.Mutex
	readyOnce sync.Once
	eps       map[string]*endpoint
	snap      registry.Snapshot
	closed    bool
}

func newSvcState(c *Client, sd *ServiceDesc) (*svcState, error) {
	key := registry.Key{Service: sd.Name, Group: sd.Group, Version: sd.Version}
	if c.o.group != "" || c.o.version != "" {
		key.Group, key.Version = c.o.group, c.o.version
	}
	name := sd.Policy.Balance
	if name == "" {
		name = c.o.balancer
	}
	if name == "" {
		name = "p2c"
	}
	b, ok := balance.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("rt: service %q: unknown balancer %q", sd.Name, name)
	}
	st := &svcState{c: c, sd: sd, key: key, keyName: key.String(), builder: b, ready: make(chan struct{}), eps: make(map[string]*endpoint)}
	st.budget.init(c.o.retryRatio, c.o.retryFloor)
	st.infos = make([]CallInfo, len(sd.Methods))
	for i := range sd.Methods {
		st.infos[i] = CallInfo{Service: sd, Method: &sd.Methods[i], Index: i}
	}
	stop, err := c.reg.Watch(key, st.update)
	if err != nil {
		return nil, fmt.Errorf("rt: watch %s: %w", key, err)
	}
	st.stop = stop
	st.consumer = registry.Endpoint{Key: key, Role: registry.Consumer, Addr: c.id, App: c.o.app, StartTime: c.o.clock.Now()}
	// Listed by `yrpcc ctl ls`; calls do not wait for it.
	st.registered = make(chan struct{})
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(st.registered)
		ctx, cancel := context.WithTimeout(context.Background(), closeDeregisterTimeout)
		defer cancel()
		if err := c.reg.Register(ctx, st.consumer); err != nil {
			c.o.logger.Warn("rt: register consumer failed", "key", key.String(), "err", err)
		}
	}()
	return st, nil
}

func (st *svcState) info(m int) *CallInfo { return &st.infos[m] }

func (st *svcState) close() {
	st.stop()
	st.mu.Lock()
	st.closed = true
	st.mu.Unlock()
	<-st.registered
	ctx, cancel := context.WithTimeout(context.Background(), closeDeregisterTimeout)
	defer cancel()
	if err := st.c.reg.Deregister(ctx, st.consumer); err != nil {
		st.c.o.logger.Warn("rt: deregister consumer failed", "key", st.key.String(), "err", err)
	}
}

// update installs a registry snapshot.
func (st *svcState) update(snap registry.Snapshot) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return
	}
	st.snap = snap
	st.rebuild(st.c.o.clock.Now())
	st.readyOnce.Do(func() { close(st.ready) })
}

// rebuild makes a new view from the last snapshot. Called with mu held.
func (st *svcState) rebuild(now time.Time) {
	snap := st.snap
	seen := make(map[string]bool, len(snap.Providers))
	v := &svcView{}
	for _, p := range snap.Providers {
		seen[p.Addr] = true
		ic := snap.Config.Instances[p.Addr]
		if ic.Draining {
			v.draining++
			if st.c.o.debug {
				st.c.o.logger.Debug("rt: provider excluded: draining", "key", st.keyName, "addr", p.Addr)
			}
			continue
		}
		ep := st.eps[p.Addr]
		if ep == nil {
			ep = &endpoint{addr: p.Addr, pool: st.c.pool(p.Addr), br: newInstBreaker(st.sd.Policy.Breaker, st.key, p.Addr, st.c.o.logger)}
			st.eps[p.Addr] = ep
		}
		ep.weight = p.Weight
		if ic.Weight > 0 {
			ep.weight = ic.Weight
		}
		if ep.weight <= 0 {
			ep.weight = 100
		}
		ep.start, ep.tags = p.StartTime, p.Tags
		v.eps = append(v.eps, ep)
	}
	for addr := range st.eps {
		if !seen[addr] {
			delete(st.eps, addr)
		}
	}
	sort.Slice(v.eps, func(i, j int) bool { return v.eps[i].addr < v.eps[j].addr })
	v.build(st.builder, now)
	v.mocks = buildMocks(st.sd, snap.Config, st.c.o.logger)
	st.view.Store(v)
}

// current returns the view to pick from, rebuilding it when its picker has
// expired (warm-up weights change with time).
func (st *svcState) current(now time.Time) *svcView {
	v := st.view.Load()
	if v != nil && !v.expires.IsZero() && now.After(v.expires) {
		st.mu.Lock()
		if cur := st.view.Load(); cur == v && !st.closed {
			st.rebuild(now)
		}
		st.mu.Unlock()
		v = st.view.Load()
	}
	return v
}

// endpoint is one provider of one service as the client sees it.
type endpoint struct {
	addr   string
	weight int
	start  time.Time
	tags   map[string]string
	active atomic.Int64
	br     *breaker.Breaker
	// lastLost is the last connection whose loss was counted by br.
	lastLost atomic.Pointer[clientConn]
	pool     *connPool
}

// svcView is an immutable picture of a service's routable providers.
type svcView struct {
	eps      []*endpoint
	picker   balance.Picker
	expires  time.Time
	mocks    []mockRule // by method index; Action/Mode zero: none
	draining int
	builder  balance.Builder
	tagged   sync.Map // "key=value" -> *svcView
}

func (v *svcView) build(b balance.Builder, now time.Time) {
	v.builder = b
	nodes := make([]balance.Node, len(v.eps))
	for i, ep := range v.eps {
		nodes[i] = balance.Node{Addr: ep.addr, Weight: ep.weight, StartTime: ep.start, Active: &ep.active}
	}
	v.picker = b.Build(nodes, now)
	if e, ok := v.picker.(balance.Expirer); ok {
		v.expires = e.Expires()
	}
}

// withTag returns the view of the providers tagged key=value, or v itself
// when none is.
func (v *svcView) withTag(key, value string, now time.Time) *svcView {
	k := key + "=" + value
	if t, ok := v.tagged.Load(k); ok {
		return t.(*svcView)
	}
	t := &svcView{mocks: v.mocks, draining: v.draining}
	for _, ep := range v.eps {
		if ep.tags[key] == value {
			t.eps = append(t.eps, ep)
		}
	}
	if len(t.eps) == 0 {
		t = v
	} else {
		t.build(v.builder, now)
	}
	got, _ := v.tagged.LoadOrStore(k, t)
	return got.(*svcView)
}

// ProviderStatus is what a client knows about one provider of a service.
type ProviderStatus struct {
	Addr     string
	Weight   int    // effective weight (config override included)
	Draining bool   // excluded by governance config
	Breaker  string // "closed", "open" or "half-open"; "" for draining providers
	Active   int64  // calls in flight from this client
}

// Providers returns the providers of sd that the client knows, sorted by
// address, for dashboards, debugging and tests. It does not wait for the
// registry: before the first call to sd it returns nil.
func (c *Client) Providers(sd *ServiceDesc) []ProviderStatus {
	st := (*c.svcs.Load())[sd]
	if st == nil {
		return nil
	}
	now := c.o.clock.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make([]ProviderStatus, 0, len(st.snap.Providers))
	for _, p := range st.snap.Providers {
		ps := ProviderStatus{Addr: p.Addr, Weight: p.Weight, Draining: st.snap.Config.Instances[p.Addr].Draining}
		if ep := st.eps[p.Addr]; ep != nil && !ps.Draining {
			ps.Weight, ps.Active, ps.Breaker = ep.weight, ep.active.Load(), ep.br.State(now).String()
		}
		out = append(out, ps)
	}
	return out
}

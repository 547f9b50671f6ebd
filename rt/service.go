package rt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/breaker"
	"github.com/yrpc/yrpc/limiter"
	"github.com/yrpc/yrpc/rt/balance"
	"github.com/yrpc/yrpc/rt/internal/conn"
	"github.com/yrpc/yrpc/rt/registry"
)

// svcState is what the client knows about one service: its providers (a
// view rebuilt on every registry change), their breakers and the retry
// budget.
type svcState struct {
	c          *Client
	sd         *ServiceDesc
	key        registry.Key
	keyName    string // key.String(), for errors
	keyMD      MD     // the group and version calls name, when not the default
	infos      []CallInfo
	limits     []*limiter.Bucket // by method index; nil: no client rate limit
	builder    balance.Builder
	budget     retryBudget
	ready      chan struct{}   // closed with the first snapshot
	found      chan struct{}   // closed with the first snapshot that lists a provider
	regDone    <-chan struct{} // closed when the registry closed; nil: it does not say (registry.CloseNotifier)
	watched    time.Time       // when the watch started (wall clock)
	view       atomic.Pointer[svcView]
	stop       func()
	consumer   registry.Endpoint
	registered chan struct{} // closed when the consumer registration ended
	unwatched  bool          // the registry was closed before the watch: no watch, no consumer entry

	mu        sync.Mutex
	readyOnce sync.Once
	foundOnce sync.Once
	eps       map[string]*endpoint
	snap      registry.Snapshot
	closed    bool
}

func newSvcState(c *Client, sd *ServiceDesc) (*svcState, error) {
	key := registry.Key{Service: sd.Name, Group: sd.Group, Version: sd.Version}
	if c.o.group != "" || c.o.version != "" {
		key.Group, key.Version = c.o.group, c.o.version
	}
	b, err := serviceBalancer(sd, c.o.balancer)
	if err != nil {
		return nil, err
	}
	st := &svcState{c: c, sd: sd, key: key, keyName: key.String(), builder: b, ready: make(chan struct{}), found: make(chan struct{}),
		watched: time.Now(), eps: make(map[string]*endpoint)}
	if key.Group != "" {
		st.keyMD = append(st.keyMD, MDGroup, key.Group)
	}
	if key.Version != "" {
		st.keyMD = append(st.keyMD, MDVersion, key.Version)
	}
	st.budget.init(c.o.retryRatio, c.o.retryFloor)
	st.infos = make([]CallInfo, len(sd.Methods))
	st.limits = make([]*limiter.Bucket, len(sd.Methods))
	for i := range sd.Methods {
		m := &sd.Methods[i]
		st.infos[i] = CallInfo{Service: sd, Method: m, Index: i}
		rl, ok := c.o.methodLimits[m.FullName]
		if !ok {
			rl = m.Policy.ClientRateLimit
		}
		if rl.Rate > 0 {
			st.limits[i] = limiter.NewBucket(rl.Rate, max(rl.Burst, 1))
		}
	}
	for name := range c.o.methodLimits {
		if svc, _, _ := strings.Cut(name, "/"); svc == sd.Name && !slices.ContainsFunc(sd.Methods, func(m MethodDesc) bool { return m.FullName == name }) {
			c.o.logger.Warn("rt: WithMethodRateLimit names no method of the service: ignored", "method", name, "service", sd.Name)
		}
	}
	if cn, ok := c.reg.(registry.CloseNotifier); ok {
		st.regDone = cn.Done()
	}
	stop, err := c.reg.Watch(key, st.update)
	if errors.Is(err, registry.ErrClosed) {
		// Closed before the service's first call: its calls fail at once
		// (discover), as those that wait when the registry closes.
		done := make(chan struct{})
		close(done)
		st.regDone, st.stop, st.unwatched = done, func() {}, true
		return st, nil
	}
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

// serviceBalancer is the balancer of sd: the client's (WithBalancer), else
// the schema's, else p2c.
func serviceBalancer(sd *ServiceDesc, client balance.Builder) (balance.Builder, error) {
	if client != nil {
		return client, nil
	}
	name := sd.Policy.Balance
	if name == "" {
		name = balance.NameP2C
	}
	b, ok := balance.New(name, balance.Options{})
	if !ok {
		return nil, fmt.Errorf("rt: service %q: unknown balancer %q", sd.Name, name)
	}
	return b, nil
}

func (st *svcState) info(m int) *CallInfo { return &st.infos[m] }

func (st *svcState) close() {
	st.stop()
	st.mu.Lock()
	st.closed = true
	st.mu.Unlock()
	if st.unwatched {
		return
	}
	<-st.registered
	ctx, cancel := context.WithTimeout(context.Background(), closeDeregisterTimeout)
	defer cancel()
	// A closed registry removed the entry itself (Registry.Close).
	if err := st.c.reg.Deregister(ctx, st.consumer); err != nil && !errors.Is(err, registry.ErrClosed) {
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
	if len(snap.Providers) > 0 {
		st.foundOnce.Do(func() { close(st.found) })
	}
}

// rebuild makes a new view from the last snapshot. Called with mu held.
func (st *svcState) rebuild(now time.Time) {
	snap := st.snap
	o := &st.c.o
	seen := make(map[string]bool, len(snap.Providers))
	v := &svcView{}
	for _, p := range snap.Providers {
		seen[p.Addr] = true
		ic := snap.Config.Instances[p.Addr]
		if ic.Draining || p.NotServing {
			v.draining++
			if o.debug {
				o.logger.Debug("rt: provider excluded: draining", "key", st.keyName, "addr", p.Addr)
			}
			continue
		}
		ep := st.eps[p.Addr]
		if target := st.c.target(p); ep == nil || ep.target != target {
			ep = &endpoint{addr: p.Addr, target: target, tr: st.c.transport(target), br: newInstBreaker(st.sd.Policy.Breaker, st.key, p.Addr, o.logger), start: p.StartTime}
			st.eps[p.Addr] = ep
		} else if !ep.start.Equal(p.StartTime) {
			o.logger.Info("rt: provider registered again with a new start time: its breaker starts over", "key", st.keyName, "addr", p.Addr)
			ep.restarted(p.StartTime)
		}
		ep.weight = p.Weight
		if ic.Weight > 0 {
			ep.weight = ic.Weight
		}
		if ep.weight <= 0 {
			ep.weight = balance.DefaultWeight
		}
		ep.setMeta(p)
		v.eps = append(v.eps, ep)
		v.nodes = append(v.nodes, balance.Node{Addr: ep.addr, Weight: ep.weight, StartTime: p.StartTime, Active: &ep.active})
		v.tags = append(v.tags, p.Tags)
	}
	for addr := range st.eps {
		if !seen[addr] {
			delete(st.eps, addr)
		}
	}
	sort.Sort(byAddr{v})
	v.build(st.builder, now)
	v.mocks = buildMocks(st.sd, snap.Config, o.logger)
	st.view.Store(v)
}

// current returns the view to pick from, rebuilding it when its picker has
// expired (warm-up weights change with time); nil before the registry's
// first answer.
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

// discover returns the view of a call made while the service has no
// provider yet: it waits, within ctx, for the registry to list one, for
// at most the client's discovery wait from the start of the service's
// watch (WithDiscoveryWait). After that, and once providers have been
// listed, it does not wait: a service that has none fails its calls at
// once. Nor does it wait once the registry has closed (before listing a
// provider): the call fails at once, saying so.
func (st *svcState) discover(ctx context.Context, m *MethodDesc) (*svcView, error) {
	if !isClosed(st.found) {
		if wait := time.Until(st.watched.Add(st.c.o.discoveryWait)); wait > 0 {
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-st.found:
			case <-st.regDone:
			case <-t.C:
			case <-ctx.Done():
				return nil, ctxError(ctx.Err(), m.FullName)
			case <-st.c.done:
				return nil, ErrClientClosed
			}
		}
		// Providers listed just before the close still serve the call.
		if !isClosed(st.found) && isClosed(st.regDone) {
			return nil, st.registryClosed(m)
		}
	}
	if v := st.current(st.c.o.clock.Now()); v != nil {
		return v, nil
	}
	return nil, Errorf(Unavailable, "%s: no providers known for %s yet: the registry has not answered in %v", m.FullName, st.keyName, st.c.o.discoveryWait)
}

// registryClosed is the error of a call to the service that found no
// providers before the registry closed.
func (st *svcState) registryClosed(m *MethodDesc) error {
	return &Error{Code: Unavailable, Cause: registry.ErrClosed,
		Message: fmt.Sprintf("%s: no providers known for %s: the registry was closed", m.FullName, st.keyName)}
}

// endpoint is one provider of one service as the client sees it.
type endpoint struct {
	addr   string
	weight int                          // the effective weight, for Providers; set and read with svcState.mu held
	meta   atomic.Pointer[endpointMeta] // read by calls, set by rebuild
	active atomic.Int64
	br     *breaker.Breaker
	// lastLost is the last connection whose loss was counted by br.
	lastLost atomic.Pointer[conn.Conn]
	// target is how the client reaches it (Client.target), tr the
	// transport of target.
	target string
	tr     transport
	// start is the start time of its registration; set and read with
	// svcState.mu held.
	start time.Time
}

// restarted starts over with a provider that registered again at the same
// address with start time start: a new process, such as the only provider
// restarting while the registry kept listing it (a crashed process's entry
// outlives it until its session expires; zkreg keeps the last provider
// for its EmptyGrace). What the old process did says nothing about the new
// one: the breaker forgets it, and the connection pool ends the redial
// backoff that refused connections started, so that calls reach the new
// process at once instead of after the breaker's open period. Called with
// svcState.mu held.
func (ep *endpoint) restarted(start time.Time) {
	ep.start = start
	ep.br.Reset()
	ep.tr.redialNow()
}

// endpointMeta is what calls need from a provider's registry payload.
type endpointMeta struct {
	tls   bool // the provider accepts only TLS
	token MD   // its registry token's metadata pair; nil when it has none
}

// setMeta installs the call-relevant parts of the provider's payload p,
// when they changed.
func (ep *endpoint) setMeta(p registry.Endpoint) {
	m := &endpointMeta{tls: p.TLS}
	if p.Token != "" {
		m.token = MD{MDToken, p.Token}
	}
	if old := ep.meta.Load(); old == nil || old.tls != m.tls || !slices.Equal(old.token, m.token) {
		ep.meta.Store(m)
	}
}

// svcView is an immutable picture of a service's routable providers.
// What the balancer and the tag router read of each provider (weight,
// start time, tags) is copied into nodes and tags when the view is made:
// the registry's next update changes the endpoints while calls still pick
// from this view.
type svcView struct {
	eps      []*endpoint
	nodes    []balance.Node      // nodes[i] is eps[i] as the balancer sees it
	tags     []map[string]string // tags[i] is eps[i]'s tags
	picker   balance.Picker
	expires  time.Time
	mocks    []mockRule // by method index; Action/Mode zero: none
	draining int
	builder  balance.Builder
	tagged   sync.Map // tagKey -> *svcView, for tags some provider has
}

// byAddr sorts a view's providers by address.
type byAddr struct{ v *svcView }

func (s byAddr) Len() int           { return len(s.v.eps) }
func (s byAddr) Less(i, j int) bool { return s.v.eps[i].addr < s.v.eps[j].addr }
func (s byAddr) Swap(i, j int) {
	v := s.v
	v.eps[i], v.eps[j] = v.eps[j], v.eps[i]
	v.nodes[i], v.nodes[j] = v.nodes[j], v.nodes[i]
	v.tags[i], v.tags[j] = v.tags[j], v.tags[i]
}

func (v *svcView) build(b balance.Builder, now time.Time) {
	v.builder = b
	v.picker = b.Build(v.nodes, now)
	if e, ok := v.picker.(balance.Expirer); ok {
		v.expires = e.Expires()
	}
}

// withTag returns the view of the providers tagged key=value, or v itself
// when none is. Views of tags that some provider has are kept with v (so
// there are at most as many as the providers' distinct tags); a tag no
// provider has is not remembered, so callers passing many distinct values
// do not grow v.
func (v *svcView) withTag(key, value string, now time.Time) *svcView {
	k := tagKey{key, value}
	if t, ok := v.tagged.Load(k); ok {
		return t.(*svcView)
	}
	t := &svcView{mocks: v.mocks, draining: v.draining}
	for i, ep := range v.eps {
		if v.tags[i][key] == value {
			t.eps = append(t.eps, ep)
			t.nodes = append(t.nodes, v.nodes[i])
			t.tags = append(t.tags, v.tags[i])
		}
	}
	if len(t.eps) == 0 {
		return v
	}
	t.build(v.builder, now)
	got, _ := v.tagged.LoadOrStore(k, t)
	return got.(*svcView)
}

// tagKey is a tag routing's key and value, the key of svcView.tagged (a
// "key=value" string would confuse key "a=b" value "c" with key "a" value
// "b=c").
type tagKey struct{ key, value string }

// pick chooses a provider whose breaker admits a call of method; key
// names the service in errors and debug logs (nil log: no debug logging).
func (v *svcView) pick(pi *balance.Info, now time.Time, method, key string, log *slog.Logger) (*endpoint, int, breakerTicket, error) {
	open := 0
	for range len(v.eps) + 1 {
		i := v.picker.Pick(pi)
		if i < 0 {
			break
		}
		ep := v.eps[i]
		if t, ok := ep.br.Allow(now); ok {
			return ep, i, t, nil
		}
		open++
		pi.Tried = append(pi.Tried, i)
		if log != nil {
			log.Debug("rt: provider excluded: breaker open", "key", key, "addr", ep.addr)
		}
	}
	switch {
	case len(v.eps) == 0 && v.draining > 0:
		return nil, -1, breakerTicket{}, Errorf(Unavailable, "%s: no provider of %s: all %d draining", method, key, v.draining)
	case len(v.eps) == 0:
		return nil, -1, breakerTicket{}, Errorf(Unavailable, "%s: no provider of %s", method, key)
	case open > 0:
		return nil, -1, breakerTicket{}, Errorf(Unavailable, "%s: no provider of %s available: %d of %d with open breakers", method, key, open, len(v.eps))
	}
	return nil, -1, breakerTicket{}, Errorf(Unavailable, "%s: no provider of %s left to try", method, key)
}

// mock returns the mock in force for method i: the config's while it has
// not expired, else the schema's.
func (v *svcView) mock(i int, m *MethodDesc, now time.Time) MockPolicy {
	if i < len(v.mocks) {
		if r := &v.mocks[i]; r.set && (r.expires.IsZero() || now.Before(r.expires)) {
			p := r.policy
			if p.Action == MockReturnValue {
				val := r.value
				p.Value = func() Message {
					msg := m.NewResponse()
					if err := msg.Unmarshal(val); err != nil {
						return m.NewResponse()
					}
					return msg
				}
			}
			return p
		}
	}
	return m.Policy.Mock
}

// ProviderStatus is what a client knows about one provider of a service.
type ProviderStatus struct {
	Addr       string
	Weight     int    // effective weight (config override included)
	Draining   bool   // excluded by governance config
	NotServing bool   // excluded: the provider reports itself not serving (Server.SetServing)
	Breaker    string // "closed", "open" or "half-open"; "" for draining providers
	Active     int64  // calls in flight from this client
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
		ps := ProviderStatus{Addr: p.Addr, Weight: p.Weight, Draining: st.snap.Config.Instances[p.Addr].Draining, NotServing: p.NotServing}
		if ep := st.eps[p.Addr]; ep != nil && !ps.Draining && !ps.NotServing {
			ps.Weight, ps.Active, ps.Breaker = ep.weight, ep.active.Load(), ep.br.State(now).String()
		}
		out = append(out, ps)
	}
	return out
}

package prometheus

import (
	"fmt"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/yrpc/yrpc/breaker"
	"github.com/yrpc/yrpc/rt"
)

// ClientSource is what a Collector reads of a client; *rt.Client
// implements it.
type ClientSource interface{ Stats() rt.ClientStats }

// ServerSource is what a Collector reads of a server; *rt.Server
// implements it.
type ServerSource interface{ Stats() rt.ServerStats }

// RegistrySource is what a Collector reads of a registry;
// *zkreg.Registry implements it.
type RegistrySource interface{ Connected() bool }

// CollectorOptions configures a Collector. The zero value is valid and
// collects nothing; each source that is set adds its metrics (see the
// package doc). A source must be a nil interface, not a typed nil pointer,
// when absent.
type CollectorOptions struct {
	// Client adds the yrpc_client_* gauges; nil means none.
	Client ClientSource
	// Server adds the yrpc_server_* gauges; nil means none.
	Server ServerSource
	// Registry adds yrpc_registry_connected; nil means none.
	Registry RegistrySource
	// Namespace is the metric names' prefix; "" means "yrpc".
	Namespace string
	// ConstLabels are added to every metric, e.g. {"app": "users"}.
	ConstLabels prom.Labels
}

// Breaker states as the value of yrpc_client_provider_breaker_state:
// the higher, the less traffic the provider gets.
const (
	BreakerClosed   = 0
	BreakerHalfOpen = 1
	BreakerOpen     = 2
)

// breakerValue is the gauge's value of rt.ProviderStatus.Breaker; false
// for a state this package does not know.
func breakerValue(state string) (float64, bool) {
	// In the order of the Breaker* values.
	for v, s := range [...]breaker.State{breaker.Closed, breaker.HalfOpen, breaker.Open} {
		if s.String() == state {
			return float64(v), true
		}
	}
	return 0, false
}

// Provider states, the state label of yrpc_client_providers.
const (
	StateRoutable   = "routable"
	StateDraining   = "draining"
	StateNotServing = "not_serving"
)

// Collector is a prometheus.Collector of gauges read at scrape time from a
// client's, a server's and a registry's snapshots (see the package doc for
// their names and labels). Register it with a prometheus.Registerer.
//
// Create one with NewCollector; the zero value is not usable. A Collector
// holds no state of its own: it is safe for concurrent use, and each
// scrape costs one Stats call per source (the client's takes each of its
// services' locks in turn).
type Collector struct {
	o CollectorOptions

	breakerState, providerInFlight, providers *prom.Desc
	clientConns                               *prom.Desc
	serverConns, serverInFlight, serving      *prom.Desc
	registryConnected                         *prom.Desc
}

// NewCollector makes a Collector of the sources in o. It fails if a name
// or label is invalid, for example a const label named like a variable
// one ("service").
func NewCollector(o CollectorOptions) (*Collector, error) {
	ns := o.Namespace
	if ns == "" {
		ns = "yrpc"
	}
	desc := func(name, help string, labels ...string) *prom.Desc {
		return prom.NewDesc(prom.BuildFQName(ns, "", name), help, labels, o.ConstLabels)
	}
	c := &Collector{
		o: o,
		breakerState: desc("client_provider_breaker_state",
			"State of the client's circuit breaker of a routable provider: 0 closed, 1 half-open, 2 open.", "service", "instance"),
		providerInFlight: desc("client_provider_in_flight",
			"Calls in flight from the client to a routable provider.", "service", "instance"),
		providers: desc("client_providers",
			"Providers the client knows of a service, by state (routable, draining, not_serving).", "service", "state"),
		clientConns:       desc("client_connections", "Open connections from the client to providers."),
		serverConns:       desc("server_connections", "Open connections to the server."),
		serverInFlight:    desc("server_in_flight", "Calls and streams in flight on the server."),
		serving:           desc("server_serving", "1 if the server is serving (not shut down, drained or set not serving), else 0."),
		registryConnected: desc("registry_connected", "1 if the registry has a session (ZooKeeper: a live session), else 0."),
	}
	for _, d := range []*prom.Desc{c.breakerState, c.providerInFlight, c.providers, c.clientConns,
		c.serverConns, c.serverInFlight, c.serving, c.registryConnected} {
		if err := d.Err(); err != nil {
			return nil, fmt.Errorf("prometheus: yrpc collector: %w", err)
		}
	}
	return c, nil
}

// descs are the descriptions of the metrics of the configured sources.
func (c *Collector) descs() []*prom.Desc {
	var ds []*prom.Desc
	if c.o.Client != nil {
		ds = append(ds, c.breakerState, c.providerInFlight, c.providers, c.clientConns)
	}
	if c.o.Server != nil {
		ds = append(ds, c.serverConns, c.serverInFlight, c.serving)
	}
	if c.o.Registry != nil {
		ds = append(ds, c.registryConnected)
	}
	return ds
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prom.Desc) {
	for _, d := range c.descs() {
		ch <- d
	}
}

// Collect implements prometheus.Collector: it reads the sources' snapshots.
func (c *Collector) Collect(ch chan<- prom.Metric) {
	gauge := func(d *prom.Desc, v float64, labels ...string) {
		m, err := prom.NewConstMetric(d, prom.GaugeValue, v, labels...)
		if err != nil { // a label value that is not UTF-8: the scrape reports it
			m = prom.NewInvalidMetric(d, err)
		}
		ch <- m
	}
	if c.o.Client != nil {
		st := c.o.Client.Stats()
		for _, s := range mergeServices(st.Services) {
			for _, p := range s.providers {
				if p.breaker >= 0 {
					gauge(c.breakerState, p.breaker, s.name, p.addr)
				}
				gauge(c.providerInFlight, float64(p.active), s.name, p.addr)
			}
			for _, state := range []string{StateRoutable, StateDraining, StateNotServing} {
				gauge(c.providers, float64(s.counts[state]), s.name, state)
			}
		}
		gauge(c.clientConns, float64(st.Conns))
	}
	if c.o.Server != nil {
		st := c.o.Server.Stats()
		gauge(c.serverConns, float64(st.Conns))
		gauge(c.serverInFlight, float64(st.InFlight))
		gauge(c.serving, boolValue(st.Serving))
	}
	if c.o.Registry != nil {
		gauge(c.registryConnected, boolValue(c.o.Registry.Connected()))
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// service is what the gauges say of one service name.
type service struct {
	name      string
	providers []*provider // routable ones, in the order first seen
	byAddr    map[string]*provider
	counts    map[string]int     // distinct addresses by state
	seen      map[[2]string]bool // {state, addr} counted
}

// provider is what the gauges say of one routable provider of a service.
type provider struct {
	addr    string
	breaker float64 // a Breaker* value; -1: unknown, not reported
	active  int64
}

// mergeServices groups a client's services by name. A client that calls
// one service under several groups or versions (registry keys) sees each
// key's providers, with breakers of their own; under one service label
// their calls in flight add up, the breaker state is the worst, and each
// state counts distinct addresses. A routable provider whose breaker state
// this package does not know (none today) has no breaker series.
func mergeServices(ss []rt.ServiceStats) []*service {
	var out []*service
	byName := make(map[string]*service, len(ss))
	for _, st := range ss {
		s := byName[st.Name]
		if s == nil {
			s = &service{name: st.Name, byAddr: make(map[string]*provider), counts: make(map[string]int), seen: make(map[[2]string]bool)}
			byName[st.Name] = s
			out = append(out, s)
		}
		for _, p := range st.Providers {
			state := providerState(p)
			if k := [2]string{state, p.Addr}; !s.seen[k] {
				s.seen[k] = true
				s.counts[state]++
			}
			if state != StateRoutable {
				continue
			}
			b, ok := breakerValue(p.Breaker)
			if !ok {
				b = -1
			}
			if q := s.byAddr[p.Addr]; q != nil {
				q.breaker, q.active = max(q.breaker, b), q.active+p.Active
				continue
			}
			q := &provider{addr: p.Addr, breaker: b, active: p.Active}
			s.byAddr[p.Addr] = q
			s.providers = append(s.providers, q)
		}
	}
	return out
}

// providerState is p's state label; an operator's drain wins over the
// provider's own not-serving report.
func providerState(p rt.ProviderStatus) string {
	switch {
	case p.Draining:
		return StateDraining
	case p.NotServing:
		return StateNotServing
	}
	return StateRoutable
}

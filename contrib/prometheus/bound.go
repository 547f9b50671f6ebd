package prometheus

import (
	"time"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/yrpc/yrpc/rt/metrics"
)

// DefaultInstanceTTL is how long an instance's series outlive its last
// event when Options.InstanceTTL is zero: well above a scrape interval
// and the usual rate() window, so an idle but live provider's series
// stay, while those of departed providers go within minutes.
const DefaultInstanceTTL = 10 * time.Minute

// OverflowInstance is the instance label of the events of new instance
// series beyond Options.MaxSeries.
const OverflowInstance = "overflow"

// instanceBounds are an Observer's limits on instance series.
type instanceBounds struct {
	ttl time.Duration // <= 0: never idle
	max int           // < 0: no limit
	now func() time.Time
}

func newInstanceBounds(o Options) instanceBounds {
	b := instanceBounds{ttl: o.InstanceTTL, max: o.MaxSeries, now: o.Now}
	if b.ttl == 0 {
		b.ttl = DefaultInstanceTTL
	}
	if b.max == 0 {
		b.max = metrics.DefaultMaxSeries
	}
	if b.now == nil {
		b.now = time.Now
	}
	return b
}

// instKey names an instance series.
type instKey struct {
	side                      metrics.Side
	service, method, instance string
}

// instSeries is what an Observer knows of an instance series; guarded by
// the Observer's mu.
type instSeries struct {
	keys   []cacheKey // its entries in the cache
	seen   uint64     // their events at the last sweep (1 when added: its first)
	active time.Time  // the last sweep that found new events, or when it was added
}

// instance returns the cache key to record k's event under (k, or its
// overflow key beyond MaxSeries), that key's instance series (added if
// new), and whether the key is cached already. o.mu is held.
func (o *Observer) instance(k cacheKey) (cacheKey, *instSeries, bool) {
	ik := instKey{side: k.side, service: k.service, method: k.method, instance: k.instance}
	if s := o.inst[ik]; s != nil {
		return k, s, false // a new code or mock kind of a known series
	}
	if b := o.bounds; b.max >= 0 && o.counted >= b.max {
		o.sweep(b.now())
		if o.counted >= b.max {
			k.instance, ik.instance = OverflowInstance, OverflowInstance
			if o.cache[k] != nil {
				return k, nil, true
			}
			if s := o.inst[ik]; s != nil {
				return k, s, false
			}
		}
	}
	s := &instSeries{seen: 1, active: o.bounds.now()} // the event adding it is counted next
	o.inst[ik] = s
	if ik.instance != OverflowInstance {
		o.counted++
	}
	return k, s, false
}

// sweep deletes the series of instances without an event for the TTL.
// An instance's last event is known to the time of the sweep that saw
// its count change, and sweeps are at most one every quarter TTL, so its
// series go at the first sweep (a scrape, a new series) from one TTL
// after its last event plus the time between two sweeps. An event
// recorded on children as they are deleted is lost. o.mu is held.
func (o *Observer) sweep(now time.Time) {
	ttl := o.bounds.ttl
	if ttl < 0 || now.Sub(o.swept) < ttl/4 {
		return
	}
	o.swept = now
	for ik, s := range o.inst {
		var n uint64
		for _, k := range s.keys {
			n += o.cache[k].n.Load()
		}
		if n != s.seen {
			s.seen, s.active = n, now
			continue
		}
		if now.Sub(s.active) < ttl {
			continue
		}
		side := ik.side.String()
		for _, k := range s.keys {
			count, latency := o.calls, o.callDur
			if k.attempt {
				count, latency = o.attempts, o.attemptDur
			}
			count.DeleteLabelValues(side, k.service, k.method, k.instance, k.code)
			latency.DeleteLabelValues(side, k.service, k.method, k.instance)
			if k.mocked != "" {
				o.mocked.DeleteLabelValues(side, k.service, k.method, k.instance, k.mocked)
			}
			delete(o.cache, k)
		}
		delete(o.inst, ik)
		if ik.instance != OverflowInstance {
			o.counted--
		}
	}
}

// observerCollector collects an Observer's metrics, sweeping idle
// instances first.
type observerCollector struct{ o *Observer }

func (c observerCollector) collectors() []prom.Collector {
	o := c.o
	return []prom.Collector{o.calls, o.attempts, o.mocked, o.callDur, o.attemptDur}
}

// Describe implements prometheus.Collector.
func (c observerCollector) Describe(ch chan<- *prom.Desc) {
	for _, m := range c.collectors() {
		m.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (c observerCollector) Collect(ch chan<- prom.Metric) {
	o := c.o
	if o.bounds.ttl > 0 {
		o.mu.Lock()
		o.sweep(o.bounds.now())
		o.mu.Unlock()
	}
	for _, m := range c.collectors() {
		m.Collect(ch)
	}
}

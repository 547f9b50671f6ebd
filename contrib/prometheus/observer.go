package prometheus

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/yrpc/yrpc/rt/metrics"
)

// Options configures an Observer. The zero value means the defaults.
type Options struct {
	// Namespace is the metric names' prefix; "" means "yrpc".
	Namespace string
	// Buckets are the duration histograms' upper bounds; empty means
	// metrics.DefaultBuckets() (50µs to 10s), the expvar Recorder's, which
	// suit RPCs better than client_golang's DefBuckets (5ms to 10s).
	Buckets []time.Duration
	// ConstLabels are added to every metric, e.g. {"app": "users"}.
	ConstLabels prom.Labels
	// InstanceTTL is how long the series of a provider instance (the
	// attempt metrics labelled with its address) outlive its last event:
	// those of an instance without an event for InstanceTTL are deleted,
	// so that a client whose providers come and go (autoscaling, restarts
	// on new ports) does not keep the series of departed ones. Zero means
	// DefaultInstanceTTL; negative keeps them for the Observer's life.
	InstanceTTL time.Duration
	// MaxSeries bounds the instance series: one per (side, service,
	// method, instance) with an instance label, as metrics.RecorderOptions
	// counts them. Events of a new one beyond it are counted under the
	// instance label OverflowInstance instead, so totals stay right. Zero
	// means metrics.DefaultMaxSeries; negative means no limit. Whole calls
	// (an empty instance) are not bounded: their labels come from the
	// registered services and the fixed set of codes.
	MaxSeries int
	// Now tells the time for InstanceTTL; nil means time.Now. Tests set it.
	Now func() time.Time
}

// Observer is a metrics.Observer that updates Prometheus metrics (see the
// package doc for their names and labels).
//
// Create one with NewObserver; the zero value is not usable. An Observer is
// safe for concurrent use. It caches the labelled counters and histograms of
// every (side, service, method, instance, code, mock kind) it has seen, so
// that Observe on a seen combination takes only a read lock and does not
// allocate. The series of provider instances are bounded
// (Options.MaxSeries) and deleted once idle (Options.InstanceTTL): at a
// scrape, or when an instance series is added.
type Observer struct {
	calls, attempts     *prom.CounterVec
	mocked              *prom.CounterVec
	callDur, attemptDur *prom.HistogramVec
	bounds              instanceBounds

	mu      sync.RWMutex // guards the fields below
	cache   map[cacheKey]*children
	inst    map[instKey]*instSeries // the series with an instance label
	counted int                     // those of inst that count toward MaxSeries (not the overflow ones)
	swept   time.Time               // the last sweep
}

// cacheKey names the metrics one event updates.
type cacheKey struct {
	side                      metrics.Side
	attempt                   bool
	service, method, instance string
	code, mocked              string
}

// children are the labelled metrics one event updates.
type children struct {
	count   prom.Counter  // in calls or attempts
	latency prom.Observer // in callDur or attemptDur
	mocked  prom.Counter  // nil when the event was not mocked
	// inst is the instance series the children belong to (nil for an
	// empty instance), and n counts their events for its sweeps.
	inst *instSeries
	n    atomic.Uint64
}

// NewObserver creates the Observer's metrics and registers them with reg
// (nil means prometheus.DefaultRegisterer). It fails, registering nothing,
// if reg refuses one of them, for example because another Observer with the
// same Namespace and ConstLabels is registered with it.
func NewObserver(reg prom.Registerer, opts Options) (*Observer, error) {
	if reg == nil {
		reg = prom.DefaultRegisterer
	}
	ns := opts.Namespace
	if ns == "" {
		ns = "yrpc"
	}
	buckets := seconds(opts.Buckets)
	series := []string{"side", "service", "method", "instance"}
	counter := func(name, help string, extra string) *prom.CounterVec {
		return prom.NewCounterVec(prom.CounterOpts{Namespace: ns, Name: name, Help: help, ConstLabels: opts.ConstLabels},
			append(slices.Clip(series), extra))
	}
	histogram := func(name, help string) *prom.HistogramVec {
		return prom.NewHistogramVec(prom.HistogramOpts{Namespace: ns, Name: name, Help: help, ConstLabels: opts.ConstLabels,
			Buckets: buckets}, series)
	}
	o := &Observer{
		calls:      counter("calls_total", "Finished yrpc calls (client: after retries, fallbacks and mocks) by status code.", "code"),
		attempts:   counter("attempts_total", "Finished yrpc client attempts by provider instance and status code.", "code"),
		mocked:     counter("mocked_total", "yrpc calls answered by a mock, by kind (forced, fallback).", "kind"),
		callDur:    histogram("call_duration_seconds", "Latency of finished yrpc calls."),
		attemptDur: histogram("attempt_duration_seconds", "Latency of finished yrpc client attempts by provider instance."),
		bounds:     newInstanceBounds(opts),
		cache:      make(map[cacheKey]*children),
		inst:       make(map[instKey]*instSeries),
	}
	// One collector for the five, so that a scrape sweeps idle instances
	// first, and registering is all or nothing.
	if err := reg.Register(observerCollector{o}); err != nil {
		if are := (prom.AlreadyRegisteredError{}); errors.As(err, &are) {
			return nil, fmt.Errorf("prometheus: yrpc metrics with namespace %q are already registered: %w", ns, err)
		}
		return nil, fmt.Errorf("prometheus: register yrpc metrics: %w", err)
	}
	return o, nil
}

// seconds converts histogram bounds to client_golang's seconds, sorted and
// deduplicated, dropping non-positive ones.
func seconds(b []time.Duration) []float64 {
	b = slices.DeleteFunc(slices.Clone(b), func(d time.Duration) bool { return d <= 0 })
	if len(b) == 0 {
		b = metrics.DefaultBuckets()
	}
	slices.Sort(b)
	out := make([]float64, 0, len(b))
	for _, d := range slices.Compact(b) {
		out = append(out, d.Seconds())
	}
	return out
}

// Observe updates the metrics for e. It implements metrics.Observer.
func (o *Observer) Observe(e metrics.Event) {
	k := cacheKey{side: e.Side, attempt: e.Attempt > 0, service: e.Service, method: e.Method,
		instance: e.Instance, code: e.Code, mocked: e.Mocked}
	o.mu.RLock()
	c := o.cache[k]
	o.mu.RUnlock()
	if c == nil {
		c = o.add(k)
	}
	c.count.Inc()
	c.latency.Observe(max(e.Latency, 0).Seconds())
	if c.mocked != nil {
		c.mocked.Inc()
	}
	if c.inst != nil {
		c.n.Add(1)
	}
}

// add looks up and caches the labelled metrics of k.
func (o *Observer) add(k cacheKey) *children {
	o.mu.Lock()
	defer o.mu.Unlock()
	if c := o.cache[k]; c != nil {
		return c
	}
	var inst *instSeries
	if k.instance != "" {
		var cached bool
		if k, inst, cached = o.instance(k); cached {
			return o.cache[k]
		}
	}
	side := k.side.String()
	count, latency := o.calls, o.callDur
	if k.attempt {
		count, latency = o.attempts, o.attemptDur
	}
	c := &children{
		count:   count.WithLabelValues(side, k.service, k.method, k.instance, k.code),
		latency: latency.WithLabelValues(side, k.service, k.method, k.instance),
	}
	if k.mocked != "" {
		c.mocked = o.mocked.WithLabelValues(side, k.service, k.method, k.instance, k.mocked)
	}
	if inst != nil {
		c.inst = inst
		inst.keys = append(inst.keys, k)
	}
	o.cache[k] = c
	return c
}

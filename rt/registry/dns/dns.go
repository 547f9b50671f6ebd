package dns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yrpc/yrpc/rt/registry"
)

// Defaults of Options.
const (
	DefaultPeriod        = 30 * time.Second
	DefaultLookupTimeout = 5 * time.Second
)

// Resolver looks names up. *net.Resolver implements it (net.DefaultResolver
// is the default); tests supply their own. Implementations must be safe for
// concurrent use.
type Resolver interface {
	LookupHost(ctx context.Context, host string) (addrs []string, err error)
	LookupSRV(ctx context.Context, service, proto, name string) (cname string, addrs []*net.SRV, err error)
}

// Ticker delivers the times at which a watch resolves its name again.
type Ticker interface {
	// Chan returns the channel the ticks arrive on.
	Chan() <-chan time.Time
	// Stop ends the ticks; the registry calls it once, when the watch ends.
	Stop()
}

// Options configures a Registry. The zero value is not valid on its own:
// set Port, or SRV. Other zero fields mean the defaults.
type Options struct {
	// Resolver answers the lookups; nil means net.DefaultResolver.
	Resolver Resolver
	// Name maps a Key to the DNS name to resolve; nil means DefaultName. A
	// Name that returns "" makes Watch of that Key fail.
	Name func(registry.Key) string
	// Port is the providers' port when the name's A and AAAA records are
	// looked up (SRV false). It must be in 1..65535 then.
	Port int
	// SRV looks up the name's SRV records instead: each record gives a
	// provider's host (the record's target) and port, and its weight.
	SRV bool
	// SRVService, with SRV, looks up "_SRVService._tcp.<name>" (a
	// Kubernetes service's named port); "" looks up the name as it is.
	SRVService string
	// Period is the time between two lookups of a watched name; zero means
	// DefaultPeriod.
	Period time.Duration
	// LookupTimeout bounds one lookup; zero means DefaultLookupTimeout.
	LookupTimeout time.Duration
	// NewTicker makes a watch's ticker; nil means a time.Ticker.
	NewTicker func(d time.Duration) Ticker
	// Logger receives failed lookups (warnings); nil means slog.Default().
	Logger *slog.Logger
}

// Registry discovers providers through DNS: a watched Key's providers are
// the addresses its name resolves to. See the package doc.
//
// Make one with New; the zero value is not usable. Methods are safe for
// concurrent use.
type Registry struct {
	o   Options
	log *slog.Logger

	done chan struct{} // closed by Close once the watches stopped (Done)

	mu      sync.Mutex
	closed  bool
	watches map[*watch]struct{}
}

var (
	_ registry.Registry      = (*Registry)(nil)
	_ registry.CloseNotifier = (*Registry)(nil)
)

// New returns a Registry configured by o, or an error when o has neither a
// valid Port nor SRV.
func New(o Options) (*Registry, error) {
	if !o.SRV && (o.Port < 1 || o.Port > 65535) {
		return nil, fmt.Errorf("dns: port %d out of range 1..65535 (set Options.Port, or SRV to take ports from SRV records)", o.Port)
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.Name == nil {
		o.Name = DefaultName
	}
	if o.Period <= 0 {
		o.Period = DefaultPeriod
	}
	if o.LookupTimeout <= 0 {
		o.LookupTimeout = DefaultLookupTimeout
	}
	if o.NewTicker == nil {
		o.NewTicker = func(d time.Duration) Ticker { return timeTicker{time.NewTicker(d)} }
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Registry{o: o, log: log, done: make(chan struct{}), watches: make(map[*watch]struct{})}, nil
}

type timeTicker struct{ *time.Ticker }

func (t timeTicker) Chan() <-chan time.Time { return t.C }

// DefaultName maps a Key to one DNS label, the Label of its service, group
// and version joined by "-" (empty parts left out): "shop.Catalog" becomes
// "shop-catalog", and group "eu" with version "1.2" "shop-catalog-eu-1-2".
// A name of one label is completed by the resolver's search domains, so in
// Kubernetes it names the headless Service of that name in the client's own
// namespace.
func DefaultName(k registry.Key) string {
	parts := make([]string, 0, 3)
	for _, s := range []string{k.Service, k.Group, k.Version} {
		if l := Label(s); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "-")
}

// Label turns s into a DNS label as Kubernetes names Services: lower case,
// every character other than a-z and 0-9 replaced by "-", no "-" at either
// end. It does not shorten labels longer than DNS's 63 bytes.
func Label(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), "-")
}

// Register checks e and does nothing else: with DNS discovery the platform
// publishes providers (Kubernetes adds a ready pod's address to its
// headless Service's records), so a server has nothing to announce. It
// succeeds so that one Registry can serve a process that both calls and
// serves. After Close it returns registry.ErrClosed.
func (r *Registry) Register(ctx context.Context, e registry.Endpoint) error {
	if err := r.check(); err != nil {
		return err
	}
	return e.Validate()
}

// Deregister does nothing, as Register; after Close it returns
// registry.ErrClosed.
func (r *Registry) Deregister(ctx context.Context, e registry.Endpoint) error { return r.check() }

func (r *Registry) check() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return registry.ErrClosed
	}
	return nil
}

// Watch resolves key's name at once and then every Period, and calls fn
// with the providers found, sorted by Addr, as the Registry interface says.
// The first lookup is always delivered, even when it fails or finds
// nothing (an empty snapshot). After that, fn is called only when the set
// of providers changes, and a lookup that fails or finds nothing never
// replaces a non-empty snapshot: the last good answer stays. Snapshots have
// no governance Config. Each Watch resolves on its own.
func (r *Registry) Watch(key registry.Key, fn func(registry.Snapshot)) (stop func(), err error) {
	if key.Service == "" {
		return nil, errors.New("dns: watch: key has no service")
	}
	name := r.o.Name(key)
	if name == "" {
		return nil, fmt.Errorf("dns: watch %s: Options.Name gave an empty DNS name", key)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, registry.ErrClosed
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &watch{r: r, key: key, name: name, feed: registry.NewFeed(fn), cancel: cancel, done: make(chan struct{})}
	r.watches[w] = struct{}{}
	go w.run(ctx)
	return func() {
		r.mu.Lock()
		delete(r.watches, w)
		r.mu.Unlock()
		w.stop()
	}, nil
}

// Done implements registry.CloseNotifier: the channel is closed by Close,
// once the registry's watches have stopped.
func (r *Registry) Done() <-chan struct{} { return r.done }

// Close stops every watch, then closes Done. Later calls of Register,
// Deregister and Watch return registry.ErrClosed.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	ws := r.watches
	r.watches = nil
	r.mu.Unlock()
	for w := range ws {
		w.stop()
	}
	close(r.done)
	return nil
}

// lookup resolves name and returns its providers under key, sorted by
// Addr, without duplicates.
func (r *Registry) lookup(ctx context.Context, key registry.Key, name string) ([]registry.Endpoint, error) {
	ctx, cancel := context.WithTimeout(ctx, r.o.LookupTimeout)
	defer cancel()
	if r.o.SRV {
		proto := ""
		if r.o.SRVService != "" {
			proto = "tcp"
		}
		_, srvs, err := r.o.Resolver.LookupSRV(ctx, r.o.SRVService, proto, name)
		if len(srvs) == 0 {
			return nil, err
		}
		// Go's resolver drops records with bad names and reports them
		// along with the good ones: use those.
		return fromSRV(key, srvs), nil
	}
	hosts, err := r.o.Resolver.LookupHost(ctx, name)
	if err != nil {
		return nil, err
	}
	port := strconv.Itoa(r.o.Port)
	ps := make([]registry.Endpoint, 0, len(hosts))
	for _, h := range hosts {
		ps = append(ps, registry.Endpoint{Key: key, Role: registry.Provider, Addr: net.JoinHostPort(h, port)})
	}
	return dedup(ps), nil
}

// fromSRV turns the SRV records of the lowest priority into providers
// (records of higher priorities are backups, which yrpc's balancers do not
// know; they are left out). Weights follow RFC 2782: when every record has
// weight 0 they share traffic equally (Endpoint.Weight 0, the default);
// otherwise a provider's Weight is its record's, at least 1.
func fromSRV(key registry.Key, srvs []*net.SRV) []registry.Endpoint {
	best, weighted := -1, false
	for _, s := range srvs {
		if s.Target == "" || s.Target == "." {
			continue // "." means no service at this name
		}
		if best < 0 || int(s.Priority) < best {
			best = int(s.Priority)
		}
		weighted = weighted || s.Weight > 0
	}
	var ps []registry.Endpoint
	for _, s := range srvs {
		if s.Target == "" || s.Target == "." || int(s.Priority) != best {
			continue
		}
		e := registry.Endpoint{Key: key, Role: registry.Provider,
			Addr: net.JoinHostPort(strings.TrimSuffix(s.Target, "."), strconv.Itoa(int(s.Port)))}
		if weighted {
			e.Weight = max(int(s.Weight), 1)
		}
		ps = append(ps, e)
	}
	return dedup(ps)
}

// dedup sorts ps by Addr and keeps one endpoint per Addr, the one with the
// highest weight.
func dedup(ps []registry.Endpoint) []registry.Endpoint {
	registry.SortEndpoints(ps)
	out := ps[:0]
	for _, p := range ps {
		if n := len(out); n > 0 && out[n-1].Addr == p.Addr {
			out[n-1].Weight = max(out[n-1].Weight, p.Weight)
			continue
		}
		out = append(out, p)
	}
	return out
}

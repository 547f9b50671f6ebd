package zkreg

import (
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/yrpc/yrpc/rt/registry"
)

// Watch calls fn with the providers and config of key, serially from a
// goroutine of its own, until stop. All watches of one key share one
// listing of ZooKeeper. fn gets the first snapshot after the first
// successful listing; while ZooKeeper is unreachable fn is not called and
// the last snapshot stays valid.
//
// go-zk v1.0.4 cannot remove a ZooKeeper watch: after the last stop of a
// key, its watches stay registered in the client until they fire (once,
// harmlessly).
func (r *Registry) Watch(key registry.Key, fn func(registry.Snapshot)) (stop func(), err error) {
	if key.Service == "" {
		return nil, errors.New("zkreg: watch: key has no service")
	}
	if err := r.paths.checkKey(key); err != nil {
		return nil, fmt.Errorf("zkreg: watch: %w", err)
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, registry.ErrClosed
	}
	w := r.watches[key]
	if w == nil {
		w = newKeyWatch(r, key)
		r.watches[key] = w
	}
	f := registry.NewFeed(fn)
	w.add(f)
	r.mu.Unlock()

	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			last := w.remove(f)
			if last && r.watches[key] == w {
				delete(r.watches, key)
			}
			r.mu.Unlock()
			f.Stop()
			if last {
				w.stop()
			}
		})
	}, nil
}

// keyWatch lists one key whenever ZooKeeper says something changed and
// publishes snapshots to its feeds.
//
// Each ZooKeeper watch it sets is "armed" until it fires; while armed, the
// cached result of that read is known to be current, so a re-list reads
// only what changed and never stacks duplicate watches in go-zk. A watch
// counts only on the connection that set it: after the registry replaced
// its connection, everything is read again through the new one.
type keyWatch struct {
	r    *Registry
	key  registry.Key
	kick chan struct{} // capacity 1
	quit chan struct{}
	wg   sync.WaitGroup // loop and watch forwarders

	mu       sync.Mutex
	feeds    map[*registry.Feed]struct{}
	last     registry.Snapshot
	haveLast bool
	armed    map[string]armed // by watch id: "c:"/"d:" + path
	gen      uint64

	// Owned by the loop goroutine.
	names      []string             // children of the providers node
	children   map[string]childData // by child name
	config     registry.Config
	configRaw  []byte
	lastSum    uint64    // fingerprint of the last published state
	emptySince time.Time // when ZooKeeper first confirmed no providers
	seed       maphash.Seed
}

// armed is a ZooKeeper watch set on conn, in arm generation gen.
type armed struct {
	conn *zk.Conn
	gen  uint64
}

type childData struct {
	raw []byte
	e   registry.Endpoint
	ok  bool // payload valid
}

func newKeyWatch(r *Registry, key registry.Key) *keyWatch {
	w := &keyWatch{
		r: r, key: key,
		kick:     make(chan struct{}, 1),
		quit:     make(chan struct{}),
		feeds:    make(map[*registry.Feed]struct{}),
		armed:    make(map[string]armed),
		children: make(map[string]childData),
		seed:     maphash.MakeSeed(),
	}
	w.wg.Add(1)
	go w.loop()
	w.poke()
	return w
}

func (w *keyWatch) add(f *registry.Feed) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.feeds[f] = struct{}{}
	if w.haveLast {
		f.Publish(w.last)
	}
}

// remove drops f and reports whether no feed is left.
func (w *keyWatch) remove(f *registry.Feed) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.feeds, f)
	return len(w.feeds) == 0
}

func (w *keyWatch) stop() {
	select {
	case <-w.quit:
	default:
		close(w.quit)
	}
	w.wg.Wait()
	w.mu.Lock()
	feeds := w.feeds
	w.feeds = nil
	w.mu.Unlock()
	for f := range feeds {
		f.Stop()
	}
}

func (w *keyWatch) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *keyWatch) loop() {
	defer w.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	backoff := 50 * time.Millisecond
	for {
		select {
		case <-w.quit:
			return
		case <-w.kick:
		case <-timer.C:
		}
		if w.r.conn().State() != zk.StateHasSession {
			continue // the session loop pokes us after reconnecting
		}
		// One listing per wake-up: a burst of events (each poking kick, which
		// holds at most one) costs one re-list.
		s, sum, err := w.list()
		if w.r.hookList != nil {
			w.r.hookList(w.key, len(s.Providers), err)
		}
		if err != nil {
			// A failed listing never touches the cache.
			w.r.log.Warn("zkreg: listing failed; keeping the last providers", "key", w.key.String(), "err", err, "retry", backoff)
			timer.Reset(backoff)
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 50 * time.Millisecond
		if wait := w.holdEmpty(&s, time.Now()); wait > 0 {
			timer.Reset(wait)
		}
		w.publish(s, sum)
	}
}

// holdEmpty applies the empty-listing rule to a successful listing s: when
// ZooKeeper confirms no providers but the last snapshot had some, the last
// providers are kept until the list has stayed empty for EmptyGrace, and
// holdEmpty returns how long to wait before looking again.
func (w *keyWatch) holdEmpty(s *registry.Snapshot, now time.Time) time.Duration {
	w.mu.Lock()
	lastProviders := w.last.Providers
	w.mu.Unlock()
	if len(s.Providers) > 0 || len(lastProviders) == 0 || w.r.emptyGrace < 0 {
		w.emptySince = time.Time{}
		return 0
	}
	if w.emptySince.IsZero() {
		w.emptySince = now
		w.r.log.Info("zkreg: no providers listed; keeping the last ones for the grace period", "key", w.key.String(), "grace", w.r.emptyGrace)
	}
	if left := w.emptySince.Add(w.r.emptyGrace).Sub(now); left > 0 {
		s.Providers = lastProviders
		return left
	}
	return 0
}

func (w *keyWatch) publish(s registry.Snapshot, sum uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.haveLast && sum == w.lastSum && len(s.Providers) == len(w.last.Providers) {
		return // nothing changed: no flap, no duplicate callbacks
	}
	w.last, w.haveLast, w.lastSum = s, true, sum
	for f := range w.feeds {
		f.Publish(s)
	}
}

// list reads what changed since the last listing and returns the snapshot
// and a fingerprint of its content.
func (w *keyWatch) list() (registry.Snapshot, uint64, error) {
	c := w.r.conn()
	ps := w.r.paths
	dir := ps.providers(w.key)
	if !w.isArmed(c, "c:"+dir) {
		names, _, ch, err := c.ChildrenW(dir)
		if errors.Is(err, zk.ErrNoNode) {
			var ok bool
			ok, _, ch, err = c.ExistsW(dir)
			if err == nil && ok {
				return registry.Snapshot{}, 0, errors.New("providers node appeared while listing")
			}
			names = nil
		}
		if err != nil {
			return registry.Snapshot{}, 0, fmt.Errorf("list %q: %w", dir, err)
		}
		w.arm(c, "c:"+dir, ch)
		w.names = names
	}
	present := make(map[string]bool, len(w.names))
	for _, name := range w.names {
		present[name] = true
		path := dir + "/" + name
		if w.isArmed(c, "d:"+path) {
			continue
		}
		data, _, ch, err := c.GetW(path)
		if errors.Is(err, zk.ErrNoNode) {
			delete(w.children, name) // gone; the children watch has fired
			continue
		}
		if errors.Is(err, zk.ErrNoAuth) {
			// A node we may not read is a bad node, not a failed listing.
			w.r.log.Warn("zkreg: skipping a provider node we may not read", "path", path, "reason", err)
			w.children[name] = childData{}
			continue
		}
		if err != nil {
			return registry.Snapshot{}, 0, fmt.Errorf("read %q: %w", path, err)
		}
		w.arm(c, "d:"+path, ch)
		cd := childData{raw: data}
		cd.e, err = decodeEndpoint(w.key, registry.Provider, name, data)
		if err != nil {
			w.r.log.Warn("zkreg: skipping a provider with a bad payload", "path", path, "reason", err)
		} else {
			cd.ok = true
		}
		w.children[name] = cd
	}
	for name := range w.children {
		if !present[name] {
			delete(w.children, name)
		}
	}

	cfgPath := ps.config(w.key)
	if !w.isArmed(c, "d:"+cfgPath) {
		data, _, ch, err := c.GetW(cfgPath)
		if errors.Is(err, zk.ErrNoNode) {
			var ok bool
			ok, _, ch, err = c.ExistsW(cfgPath)
			if err == nil && ok {
				return registry.Snapshot{}, 0, errors.New("config node appeared while listing")
			}
			data = nil
		}
		if err != nil {
			return registry.Snapshot{}, 0, fmt.Errorf("read %q: %w", cfgPath, err)
		}
		w.arm(c, "d:"+cfgPath, ch)
		if cfg, err := decodeConfig(data); err != nil {
			w.r.log.Warn("zkreg: ignoring a bad config; keeping the last good one", "path", cfgPath, "reason", err)
		} else {
			w.config, w.configRaw = cfg, data
		}
	}

	s := registry.Snapshot{Key: w.key, Config: w.config.Clone()}
	var h maphash.Hash
	h.SetSeed(w.seed)
	h.Write(w.configRaw)
	names := make([]string, 0, len(w.children))
	for name, cd := range w.children {
		if cd.ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		cd := w.children[name]
		s.Providers = append(s.Providers, cd.e)
		h.WriteByte(0)
		h.WriteString(name)
		h.WriteByte(0)
		h.Write(cd.raw)
	}
	registry.SortEndpoints(s.Providers)
	return s, h.Sum64(), nil
}

func (w *keyWatch) isArmed(conn *zk.Conn, id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.armed[id].conn == conn
}

// arm records that the ZooKeeper watch id is set on conn and starts a
// forwarder that disarms it and pokes the loop when it fires (a change, a
// deletion, or go-zk giving up watches on session expiry or close).
func (w *keyWatch) arm(conn *zk.Conn, id string, ch <-chan zk.Event) {
	if ch == nil {
		return
	}
	w.mu.Lock()
	w.gen++
	gen := w.gen
	w.armed[id] = armed{conn: conn, gen: gen}
	w.mu.Unlock()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		select {
		case <-w.quit:
			return
		case <-ch:
		}
		w.mu.Lock()
		if w.armed[id].gen == gen {
			delete(w.armed, id)
		}
		w.mu.Unlock()
		w.poke()
	}()
}

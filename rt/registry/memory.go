package registry

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Memory is an in-process registry: a store of endpoints and configs that
// lives as long as the process, for examples, unit tests and the tour.
//
// Memory implements Registry and Governor directly, and Conn hands out
// separate handles on the same store, one per simulated process, the way
// each process holds its own ZooKeeper session: closing one handle removes
// only what it registered and stops only its watches.
//
// Make one with NewMemory; the zero value is not usable. Methods are safe for
// concurrent use. Watch callbacks run on a goroutine per watch (see Feed).
type Memory struct {
	mu     sync.Mutex
	closed bool
	keys   map[Key]*memKey
	conns  map[*MemoryConn]struct{}
	root   *MemoryConn
}

// MemoryConn is one handle on a Memory (see Memory.Conn). It implements
// Registry and Governor. Safe for concurrent use; the zero value is not
// usable.
type MemoryConn struct {
	m      *Memory
	done   chan struct{}     // closed once closed is set and the feeds stopped
	closed bool              // guarded by m.mu
	feeds  map[*Feed]*memKey // guarded by m.mu
}

type memKey struct {
	key       Key
	endpoints map[endpointID]memEntry
	config    Config
	version   int64 // config version, for compare-and-set
	feeds     map[*Feed]struct{}
}

type endpointID struct {
	role Role
	addr string
}

type memEntry struct {
	e     Endpoint
	owner *MemoryConn
}

var (
	_ Registry      = (*Memory)(nil)
	_ Governor      = (*Memory)(nil)
	_ CloseNotifier = (*Memory)(nil)
	_ Registry      = (*MemoryConn)(nil)
	_ Governor      = (*MemoryConn)(nil)
	_ CloseNotifier = (*MemoryConn)(nil)
)

// NewMemory returns an empty in-process registry.
func NewMemory() *Memory {
	m := &Memory{keys: make(map[Key]*memKey), conns: make(map[*MemoryConn]struct{})}
	m.root = m.newConn()
	return m
}

// Conn returns a new handle on m. After m.Close, the handle's methods return
// ErrClosed (and its Done channel is closed).
func (m *Memory) Conn() *MemoryConn {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		c := &MemoryConn{m: m, done: make(chan struct{}), closed: true}
		close(c.done)
		return c
	}
	return m.newConn()
}

func (m *Memory) newConn() *MemoryConn {
	c := &MemoryConn{m: m, done: make(chan struct{}), feeds: make(map[*Feed]*memKey)}
	m.conns[c] = struct{}{}
	return c
}

// Register implements Registry.
func (m *Memory) Register(ctx context.Context, e Endpoint) error { return m.root.Register(ctx, e) }

// Deregister implements Registry.
func (m *Memory) Deregister(ctx context.Context, e Endpoint) error {
	return m.root.Deregister(ctx, e)
}

// Watch implements Registry.
func (m *Memory) Watch(key Key, fn func(Snapshot)) (func(), error) { return m.root.Watch(key, fn) }

// Config implements Governor.
func (m *Memory) Config(ctx context.Context, key Key) (Config, error) {
	return m.root.Config(ctx, key)
}

// UpdateConfig implements Governor.
func (m *Memory) UpdateConfig(ctx context.Context, key Key, fn func(*Config) error) error {
	return m.root.UpdateConfig(ctx, key, fn)
}

// Done implements CloseNotifier: it is closed by m.Close.
func (m *Memory) Done() <-chan struct{} { return m.root.done }

// Close removes every endpoint and config, stops every watch of every
// handle, and makes later calls return ErrClosed. It closes the Done
// channel of m and of every handle once their watches have stopped.
func (m *Memory) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	var feeds []*Feed
	conns := make([]*MemoryConn, 0, len(m.conns))
	for c := range m.conns { // the open handles: a closed one has left m.conns
		c.closed = true
		conns = append(conns, c)
		for f := range c.feeds {
			feeds = append(feeds, f)
		}
		clear(c.feeds)
	}
	clear(m.conns)
	clear(m.keys)
	m.mu.Unlock()
	for _, f := range feeds {
		f.Stop()
	}
	for _, c := range conns {
		close(c.done)
	}
	return nil
}

// Register implements Registry.
func (c *MemoryConn) Register(ctx context.Context, e Endpoint) error {
	if err := e.Validate(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("registry: register %q: %w", e.Addr, err)
	}
	if e.Tags != nil { // the store keeps its own copy
		tags := make(map[string]string, len(e.Tags))
		for k, v := range e.Tags {
			tags[k] = v
		}
		e.Tags = tags
	}
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	k := m.keyLocked(e.Key)
	k.endpoints[endpointID{e.Role, e.Addr}] = memEntry{e: e, owner: c}
	if e.Role == Provider {
		k.publishLocked()
	}
	return nil
}

// Deregister implements Registry.
func (c *MemoryConn) Deregister(ctx context.Context, e Endpoint) error {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	k := m.keys[e.Key]
	if k == nil {
		return nil
	}
	id := endpointID{e.Role, e.Addr}
	if _, ok := k.endpoints[id]; !ok {
		return nil
	}
	delete(k.endpoints, id)
	if e.Role == Provider {
		k.publishLocked()
	}
	return nil
}

// Watch implements Registry. The first snapshot is delivered at once, even
// when key has no providers.
func (c *MemoryConn) Watch(key Key, fn func(Snapshot)) (stop func(), err error) {
	if key.Service == "" {
		return nil, fmt.Errorf("registry: watch: key has no service")
	}
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	k := m.keyLocked(key)
	f := NewFeed(fn)
	k.feeds[f] = struct{}{}
	c.feeds[f] = k
	f.Publish(k.snapshotLocked())
	return func() {
		m.mu.Lock()
		if k := c.feeds[f]; k != nil {
			delete(k.feeds, f)
			delete(c.feeds, f)
		}
		m.mu.Unlock()
		f.Stop()
	}, nil
}

// Config implements Governor.
func (c *MemoryConn) Config(ctx context.Context, key Key) (Config, error) {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.closed {
		return Config{}, ErrClosed
	}
	if k := m.keys[key]; k != nil {
		return k.config.Clone(), nil
	}
	return Config{}, nil
}

// UpdateConfig implements Governor. fn runs without any lock held, on a
// copy; the result is stored only if no other writer stored a config in
// between (else fn runs again on the newer config). A result that fails
// Config.Check is not stored: the error names the key, the field and the
// value.
func (c *MemoryConn) UpdateConfig(ctx context.Context, key Key, fn func(*Config) error) error {
	if key.Service == "" {
		return fmt.Errorf("registry: update config: key has no service")
	}
	m := c.m
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("registry: update config of %s: %w", key, err)
		}
		m.mu.Lock()
		if c.closed {
			m.mu.Unlock()
			return ErrClosed
		}
		k := m.keyLocked(key)
		cfg, version := k.config.Clone(), k.version
		m.mu.Unlock()

		if err := fn(&cfg); err != nil {
			return err
		}
		if err := cfg.Check(); err != nil {
			return fmt.Errorf("registry: update config of %s: %w", key, err)
		}

		m.mu.Lock()
		if c.closed {
			m.mu.Unlock()
			return ErrClosed
		}
		k = m.keyLocked(key)
		if k.version != version {
			m.mu.Unlock()
			continue // a concurrent writer won; apply fn to its result
		}
		k.config = cfg.Clone()
		k.version++
		k.publishLocked()
		m.mu.Unlock()
		return nil
	}
}

// Done implements CloseNotifier: it is closed by c.Close, or by the Close
// of c's Memory.
func (c *MemoryConn) Done() <-chan struct{} { return c.done }

// Close deregisters what was registered through c, stops c's watches and
// then closes c's Done channel.
func (c *MemoryConn) Close() error {
	m := c.m
	m.mu.Lock()
	if c.closed {
		m.mu.Unlock()
		return nil
	}
	c.closed = true
	delete(m.conns, c)
	for _, k := range m.keys {
		changed := false
		for id, ent := range k.endpoints {
			if ent.owner == c {
				delete(k.endpoints, id)
				changed = changed || id.role == Provider
			}
		}
		if changed {
			k.publishLocked()
		}
	}
	feeds := make([]*Feed, 0, len(c.feeds))
	for f, k := range c.feeds {
		delete(k.feeds, f)
		feeds = append(feeds, f)
	}
	clear(c.feeds)
	m.mu.Unlock()
	for _, f := range feeds {
		f.Stop()
	}
	close(c.done)
	return nil
}

func (m *Memory) keyLocked(key Key) *memKey {
	k := m.keys[key]
	if k == nil {
		k = &memKey{key: key, endpoints: make(map[endpointID]memEntry), feeds: make(map[*Feed]struct{})}
		m.keys[key] = k
	}
	return k
}

func (k *memKey) snapshotLocked() Snapshot {
	s := Snapshot{Key: k.key, Config: k.config.Clone()}
	for id, ent := range k.endpoints {
		if id.role == Provider {
			s.Providers = append(s.Providers, ent.e)
		}
	}
	SortEndpoints(s.Providers)
	return s
}

func (k *memKey) publishLocked() {
	if len(k.feeds) == 0 {
		return
	}
	s := k.snapshotLocked()
	for f := range k.feeds {
		f.Publish(s)
	}
}

// SortEndpoints sorts es by Addr (then Role), the order of
// Snapshot.Providers.
func SortEndpoints(es []Endpoint) {
	slices.SortFunc(es, func(a, b Endpoint) int {
		if c := strings.Compare(a.Addr, b.Addr); c != 0 {
			return c
		}
		return strings.Compare(string(a.Role), string(b.Role))
	})
}

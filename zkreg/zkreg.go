package zkreg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/yrpc/yrpc/rt/registry"
)

// Defaults of Options.
const (
	DefaultRoot           = "/yrpc"
	DefaultSessionTimeout = 10 * time.Second
)

// Options configure a Registry. The zero value (plus Servers) means the
// documented defaults.
type Options struct {
	// Servers are the ZooKeeper servers, "host:port". Required.
	Servers []string
	// Root is the path under which everything lives; default "/yrpc".
	Root string
	// SessionTimeout is the ZooKeeper session timeout the client asks for
	// (the server clamps it to its own bounds); default 10s. A connection
	// that has had no session for 1.5 times as long is replaced by a new
	// one (see the package doc).
	SessionTimeout time.Duration
	// EmptyGrace is how long a watcher keeps its last providers after
	// ZooKeeper confirmed an empty provider list, in case they are only
	// re-registering (after a session expiry, or a ZooKeeper restarted
	// empty). Default: SessionTimeout. Negative: publish empty lists at once.
	EmptyGrace time.Duration
	// Logger receives the registry's and go-zookeeper's messages; default:
	// discard.
	Logger *slog.Logger
	// Dial connects to a server; default net.DialTimeout. The registry
	// bounds the connect handshake on the connections it returns.
	Dial func(network, address string, timeout time.Duration) (net.Conn, error)

	// Test hooks; nil in production.
	hookSession func(state zk.State, sessionID int64) // session loop, per wake-up
	hookList    func(key registry.Key, n int, err error)
}

// Registry is a registry.Registry and registry.Governor on ZooKeeper. See
// the package doc for the znode layout and the failure rules.
//
// Make one with New; the zero value is not usable. Methods are safe for
// concurrent use. Close releases everything.
type Registry struct {
	cur        atomic.Pointer[zk.Conn] // the current connection; see conn
	servers    []string
	timeout    time.Duration // session timeout asked for
	dial       func(network, address string, timeout time.Duration) (net.Conn, error)
	paths      paths
	log        *slog.Logger
	emptyGrace time.Duration

	sessionKick chan struct{} // capacity 1, poked by every session event
	connects    atomic.Uint64 // count of StateHasSession events seen
	events      atomic.Uint64 // count of session events seen
	quit        chan struct{}
	wg          sync.WaitGroup // session loop, event drains, guards

	regMu      sync.Mutex                   // serializes writes of our endpoint nodes
	registered map[string]registry.Endpoint // by node path; guarded by regMu
	orphans    map[string]struct{}          // deregistered, delete failed; guarded by regMu

	healMu sync.Mutex
	heal   map[string]struct{} // node paths whose guard fired

	mu      sync.Mutex
	closed  bool
	watches map[registry.Key]*keyWatch

	// Test hooks; nil in production.
	hookSession func(state zk.State, sessionID int64) // session loop, per wake-up
	hookList    func(key registry.Key, n int, err error)
}

var (
	_ registry.Registry = (*Registry)(nil)
	_ registry.Governor = (*Registry)(nil)
)

// New connects to ZooKeeper and waits for a session until ctx is done.
func New(ctx context.Context, opts Options) (*Registry, error) {
	if len(opts.Servers) == 0 {
		return nil, errors.New("zkreg: no servers")
	}
	p, err := newPaths(opts.Root)
	if err != nil {
		return nil, err
	}
	timeout := opts.SessionTimeout
	if timeout <= 0 {
		timeout = DefaultSessionTimeout
	}
	grace := opts.EmptyGrace
	if grace == 0 {
		grace = timeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Registry{
		servers:     slices.Clone(opts.Servers),
		timeout:     timeout,
		dial:        opts.Dial,
		paths:       p,
		log:         log,
		emptyGrace:  grace,
		sessionKick: make(chan struct{}, 1),
		quit:        make(chan struct{}),
		registered:  make(map[string]registry.Endpoint),
		orphans:     make(map[string]struct{}),
		heal:        make(map[string]struct{}),
		watches:     make(map[registry.Key]*keyWatch),
		hookSession: opts.hookSession,
		hookList:    opts.hookList,
	}
	if r.dial == nil {
		r.dial = net.DialTimeout
	}
	conn, err := r.connect()
	if err != nil {
		return nil, err
	}
	r.cur.Store(conn)
	r.wg.Add(1)
	go r.sessionLoop()

	if err := r.waitSession(ctx); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// conn returns the current connection. It changes only when the session
// loop replaces a connection stuck without a session (see reconnect), so
// code that makes several requests that belong together loads it once.
func (r *Registry) conn() *zk.Conn { return r.cur.Load() }

// connect opens a new connection (go-zk connects and reconnects in the
// background) and drains its event channel until it is closed.
func (r *Registry) connect() (*zk.Conn, error) {
	conn, events, err := zk.Connect(r.servers, r.timeout,
		zk.WithLogger(zkLogger{r.log}),
		zk.WithDialer(r.dialZK), // caps the connect handshake (dial.go)
		// go-zk drops session events when its channel (6 slots) is full, so
		// the registry never relies on it: the callback only pokes the
		// session loop, which reads the connection's current state. Any
		// number of events converges to the latest state.
		zk.WithEventCallback(r.onEvent),
	)
	if err != nil {
		return nil, fmt.Errorf("zkreg: connect: %w", err)
	}
	r.wg.Add(1)
	go func() { // drain, so go-zk's channel never fills; ends when conn does
		defer r.wg.Done()
		for range events {
		}
	}()
	return conn, nil
}

func (r *Registry) waitSession(ctx context.Context) error {
	tick := time.NewTicker(10 * time.Millisecond) // polls conn.State; bounded by ctx
	defer tick.Stop()
	for r.conn().State() != zk.StateHasSession {
		select {
		case <-ctx.Done():
			return fmt.Errorf("zkreg: no ZooKeeper session: %w", ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

// onEvent runs on go-zk's goroutines and must not block.
func (r *Registry) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	r.events.Add(1)
	if ev.State == zk.StateHasSession {
		r.connects.Add(1)
	}
	r.kickSession()
}

func (r *Registry) kickSession() {
	select {
	case r.sessionKick <- struct{}{}:
	default: // a wake-up is pending; the loop reads the latest state
	}
}

// SessionID returns the current ZooKeeper session id (0 when none).
func (r *Registry) SessionID() int64 { return r.conn().SessionID() }

// sessionLoop re-creates our nodes when the session changes, re-lists
// every watched key after every (re)connection, and replaces a connection
// that has had no session for too long.
func (r *Registry) sessionLoop() {
	defer r.wg.Done()
	var (
		synced      int64  // session whose nodes are known to be in place
		seenConnect uint64 // connects already handled
		backoff     = 100 * time.Millisecond
		retry       = stoppedTimer() // retries a failed restore or heal
		retrying    bool
		// The current connection has had no session since lostSince
		// (zero while it has one), with lostConnects sessions seen then.
		lostSince    time.Time
		lostConnects uint64
		stuck        = stoppedTimer() // fires when the connection is stuck
		stuckAfter   = r.timeout + r.timeout/2
	)
	defer retry.Stop()
	defer stuck.Stop()
	for {
		select {
		case <-r.quit:
			return
		case <-r.sessionKick:
		case <-retry.C:
			retrying = false
		case <-stuck.C:
		}
		conn := r.conn()
		state, sid := conn.State(), conn.SessionID()
		if r.hookSession != nil {
			r.hookSession(state, sid)
		}
		if state != zk.StateHasSession {
			// Disconnected or connecting: keep every cache and node as it is;
			// ZooKeeper keeps the session (and our ephemeral nodes) until it
			// times out, and a new session will be handled when it comes.
			// A connection that never had a session (sid 0) cannot be stuck.
			if sid == 0 {
				continue
			}
			now, connects := time.Now(), r.connects.Load()
			if lostSince.IsZero() || connects != lostConnects {
				lostSince, lostConnects = now, connects // (a session came and went)
				stuck.Reset(stuckAfter)
			} else if lost := now.Sub(lostSince); lost >= stuckAfter {
				if r.reconnect(conn, state, lost) {
					lostSince = time.Time{} // the new connection has sid 0
				} else {
					stuck.Reset(time.Second)
				}
			}
			continue
		}
		lostSince = time.Time{}
		stuck.Stop()
		// A new session first gets our nodes back, so that our own watchers
		// (re-listing next) find them.
		if sid != synced {
			if synced != 0 {
				r.log.Warn("zkreg: new ZooKeeper session; registering again", "old", fmt.Sprintf("%#x", synced), "new", fmt.Sprintf("%#x", sid))
			}
			if err := r.restoreAll(conn, sid); err != nil {
				r.log.Warn("zkreg: re-registering after a new session failed; retrying", "err", err, "in", backoff)
				retry.Reset(backoff)
				retrying = true
				backoff = min(2*backoff, 5*time.Second)
			} else {
				synced, backoff = sid, 100*time.Millisecond
			}
		}
		if c := r.connects.Load(); c != seenConnect {
			seenConnect = c
			r.relistAll()
			r.removeOrphans()
		}
		if sid == synced {
			if err := r.healAll(); err != nil && !retrying {
				r.log.Warn("zkreg: re-creating a deleted node failed; retrying", "err", err, "in", backoff)
				retry.Reset(backoff)
				retrying = true
				backoff = min(2*backoff, 5*time.Second)
			}
		}
	}
}

// reconnect replaces old, which has had no session for lost, by a new
// connection, which starts a new session. It reports false if it could not
// make one (go-zk resolves the server names in Connect).
//
// go-zk resumes a session only when the server answers that it expired.
// A server that lost its data (restarted with an empty data dir) never
// does: it refuses every client that has seen a later zxid than its own
// ("client must try another server"), and go-zk retries the same session
// and zxid for ever. After 1.5 session timeouts without a session, a live
// server has expired ours anyway, so a fresh connection loses nothing.
// (Apache Curator likewise treats a connection lost for the session
// timeout as an expired session.)
func (r *Registry) reconnect(old *zk.Conn, state zk.State, lost time.Duration) bool {
	conn, err := r.connect()
	if err != nil {
		r.log.Warn("zkreg: no ZooKeeper session for too long, and a new connection failed; retrying", "err", err)
		return false
	}
	r.mu.Lock()
	closed := r.closed
	if !closed {
		r.cur.Store(conn)
	}
	r.mu.Unlock()
	if closed {
		conn.Close()
		return true
	}
	r.log.Warn("zkreg: no ZooKeeper session for longer than the session timeout; starting a new session",
		"session", fmt.Sprintf("%#x", old.SessionID()), "state", state.String(), "for", lost.Round(time.Millisecond))
	// Its watches end (EventNotWatching), which pokes every watcher; the
	// new session then re-registers our nodes and re-lists every key.
	old.Close()
	return true
}

// stoppedTimer returns a timer that is not running.
func stoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

func (r *Registry) relistAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.watches {
		w.poke()
	}
}

// Close stops every watch and closes the ZooKeeper session, which removes
// every ephemeral node this registry created at once. Close waits for the
// registry's and go-zk's goroutines to end.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	ws := make([]*keyWatch, 0, len(r.watches))
	for _, w := range r.watches {
		ws = append(ws, w)
	}
	clear(r.watches)
	r.mu.Unlock()

	close(r.quit)
	// The session loop replaces the connection only while r.closed is
	// false (under r.mu), so this is the last one.
	r.conn().Close()
	for _, w := range ws {
		w.stop()
	}
	r.wg.Wait()
	return nil
}

func (r *Registry) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// zkLogger sends go-zk's log lines to slog at debug level.
type zkLogger struct{ l *slog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	z.l.Debug("zk: " + fmt.Sprintf(format, args...))
}

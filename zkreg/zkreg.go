package zkreg

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/yrpc/yrpc/internal/warnlog"
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
	// Servers are the ZooKeeper servers, "host:port" (a host alone means
	// port 2181). Required; none may be empty.
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
	// Logger receives the registry's messages (skipped payloads, lost
	// registrations, new sessions: Warn; go-zookeeper's lines: Debug).
	// Default: the warnings and errors, to slog.Default().
	Logger *slog.Logger
	// Dial connects to a server; default net.DialTimeout. The registry
	// bounds the connect handshake on the connections it returns.
	Dial func(network, address string, timeout time.Duration) (net.Conn, error)
	// TLS, if set, runs every connection over TLS with this config (for
	// ZooKeeper's secureClientPort; ZooKeeper 3.5 and later with the Netty
	// connection factory). An empty ServerName is set to the host of the
	// server's address. With ssl.clientAuth=need and ZooKeeper's
	// X509AuthenticationProvider on the server, a client certificate
	// (Certificates or GetClientCertificate) gives the registry the x509
	// identity of its subject DN, which Roles may name (X509ID). Default:
	// plaintext.
	TLS *tls.Config
	// Auth are the credentials the registry presents to ZooKeeper
	// (addauth) before it writes anything, and again after every
	// reconnection, session expiry and replaced connection. Only the
	// digest scheme is supported; the x509 identity comes from the client
	// certificate of TLS. Default: none (the world identity, plus the
	// certificate's x509 identity if any).
	Auth []Credential
	// ACL gives the ACL of every node the registry creates (see
	// ACLPolicy and DigestPolicy). Default nil: every node open to
	// everyone, fit only for development.
	ACL ACLPolicy
	// FailFast makes New give up as soon as every server has been tried
	// once without success (for command-line tools), instead of retrying
	// until its ctx is done.
	FailFast bool

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
	tls        *tls.Config  // nil: plaintext
	auth       []Credential // presented on every new connection
	acl        ACLPolicy    // nil: open

	authed          atomic.Pointer[zk.Conn] // the connection that presented the credentials (startAuth)
	roundFailed     chan struct{}           // closed when every server failed to connect once (hostRounds)
	roundFailedOnce sync.Once
	lastDialErr     atomic.Pointer[dialFailure] // the latest failed dial, for New's error
	hosts           atomic.Int32                // server addresses resolved, for handshakeLimit

	sessionKick chan struct{} // capacity 1, poked by every session event
	connects    atomic.Uint64 // count of StateHasSession events seen
	events      atomic.Uint64 // count of session events seen
	quit        chan struct{}
	done        chan struct{}  // closed by Close once the watches stopped (Done)
	wg          sync.WaitGroup // session loop, event drains, guards

	regMu      sync.Mutex                   // serializes writes of our endpoint nodes
	registered map[string]registry.Endpoint // by node path; guarded by regMu
	orphans    map[string]struct{}          // deregistered, delete failed; guarded by regMu

	healMu sync.Mutex
	heal   map[string]struct{} // node paths whose guard fired

	mu       sync.Mutex
	closed   bool
	watches  map[registry.Key]*keyWatch
	authStop chan struct{} // stops the current connection's startAuth

	// Test hooks; nil in production.
	hookSession func(state zk.State, sessionID int64) // session loop, per wake-up
	hookList    func(key registry.Key, n int, err error)
}

var (
	_ registry.Registry      = (*Registry)(nil)
	_ registry.Governor      = (*Registry)(nil)
	_ registry.CloseNotifier = (*Registry)(nil)
)

// New connects to ZooKeeper and waits for a session until ctx is done.
func New(ctx context.Context, opts Options) (*Registry, error) {
	if len(opts.Servers) == 0 {
		return nil, errors.New("zkreg: no servers")
	}
	for i, s := range opts.Servers {
		if strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("zkreg: Servers[%d] is empty: want host:port", i)
		}
		if strings.Contains(s, "/") { // "host:port/chroot", as other clients take it
			return nil, fmt.Errorf("zkreg: Servers[%d] %q has a path: want host:port (a chroot goes in Options.Root)", i, s)
		}
	}
	for _, c := range opts.Auth {
		if err := c.check(); err != nil {
			return nil, err
		}
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
		log = warnlog.Default()
	}
	r := &Registry{
		servers:     slices.Clone(opts.Servers),
		timeout:     timeout,
		dial:        opts.Dial,
		paths:       p,
		log:         log,
		emptyGrace:  grace,
		tls:         opts.TLS,
		auth:        slices.Clone(opts.Auth),
		acl:         opts.ACL,
		sessionKick: make(chan struct{}, 1),
		roundFailed: make(chan struct{}),
		quit:        make(chan struct{}),
		done:        make(chan struct{}),
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
	start := time.Now()
	conn, err := r.connect()
	if err != nil {
		return nil, err
	}
	r.cur.Store(conn)
	authDone := r.startAuth(conn)
	r.wg.Add(1)
	go r.sessionLoop()
	if err := r.waitSession(ctx, authDone, opts.FailFast); err != nil {
		tried := time.Since(start)
		r.Close() // go-zk's Close may wait a second for the server
		return nil, r.noSession(err, tried)
	}
	if r.acl != nil {
		r.checkRoot(conn)
	}
	return r, nil
}

// errFailFast ends New's wait under Options.FailFast.
var errFailFast = errors.New("every server was tried once (Options.FailFast)")

// noSession explains why New got no session: the servers, how long it
// tried, and the last connection error, which a bare "context deadline
// exceeded" would hide.
func (r *Registry) noSession(cause error, after time.Duration) error {
	servers := strings.Join(r.servers, ",")
	if f := r.lastDialErr.Load(); f != nil {
		return fmt.Errorf("zkreg: no ZooKeeper session with %s after %v: %w; last attempt: %s: %w",
			servers, after.Round(time.Millisecond), cause, f.addr, f.err)
	}
	return fmt.Errorf("zkreg: no ZooKeeper session with %s after %v: %w", servers, after.Round(time.Millisecond), cause)
}

// checkRoot warns when the root exists and anyone may write it: a tree
// created without an ACL policy stays open, whatever the policy says for
// the nodes created from now on.
func (r *Registry) checkRoot(conn *zk.Conn) {
	root := r.paths.rootPath()
	acl, _, err := conn.GetACL(root)
	if err != nil {
		return // missing (created with the policy's ACL on demand) or unreadable
	}
	if perms := worldWritable(acl); perms != 0 {
		r.log.Warn("zkreg: the root is open to everyone: nodes created before the ACL policy stay writable by anyone; lock them (zkCli setAcl -R) or start from a new root",
			"root", root, "world_perms", permString(perms))
	}
}

// permString writes ZooKeeper permissions the way zkCli does ("cdrwa").
func permString(p int32) string {
	var b strings.Builder
	for _, x := range []struct {
		bit int32
		c   byte
	}{{zk.PermCreate, 'c'}, {zk.PermDelete, 'd'}, {zk.PermRead, 'r'}, {zk.PermWrite, 'w'}, {zk.PermAdmin, 'a'}} {
		if p&x.bit != 0 {
			b.WriteByte(x.c)
		}
	}
	return b.String()
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
		zk.WithDialer(r.dialZK), // TLS; caps the connect handshake (dial.go)
		zk.WithHostProvider(&hostRounds{HostProvider: &zk.DNSHostProvider{}, r: r}),
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

// waitSession waits until the first connection has a session and has
// presented the credentials (authDone), until ctx is done, or under
// FailFast until every server failed once.
func (r *Registry) waitSession(ctx context.Context, authDone <-chan error, failFast bool) error {
	tick := time.NewTicker(10 * time.Millisecond) // polls conn.State; bounded by ctx
	defer tick.Stop()
	failed := r.roundFailed
	if !failFast {
		failed = nil // never ready
	}
	authed := false
	for !authed || r.conn().State() != zk.StateHasSession {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-failed:
			return errFailFast
		case err := <-authDone:
			if err != nil {
				return err
			}
			authed, authDone = true, nil
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

// SessionID returns the current ZooKeeper session id (0 when none, as
// after Close, which ends the session).
func (r *Registry) SessionID() int64 {
	if r.isClosed() {
		return 0 // go-zk keeps the id of the session it closed
	}
	return r.conn().SessionID()
}

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
		if !r.authedConn(conn) {
			continue // writes wait for the credentials; startAuth pokes us
		}
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
	r.startAuth(conn) // writes on conn wait for it
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

// Done implements registry.CloseNotifier: the channel is closed by Close,
// once the registry's watches have stopped.
func (r *Registry) Done() <-chan struct{} { return r.done }

// Close stops every watch and closes the ZooKeeper session, which removes
// every ephemeral node this registry created at once. Watchers keep their
// last snapshots; Done is closed once the watches have stopped. Close
// waits for the registry's and go-zk's goroutines to end.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	if r.authStop != nil {
		close(r.authStop)
		r.authStop = nil
	}
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
	close(r.done)
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

// Connected reports whether the registry has a ZooKeeper session right
// now (for health checks and gauges). While it has none, watchers keep
// their last snapshots and registrations are restored on reconnection.
func (r *Registry) Connected() bool {
	c := r.conn()
	return c != nil && c.State() == zk.StateHasSession
}

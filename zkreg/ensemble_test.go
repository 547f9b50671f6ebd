package zkreg

// Tests against the three-node ZooKeeper ensemble of scripts/zk.sh
// ($YRPC_ZK_ENSEMBLE): the conformance suite and registration, watches,
// config and session expiry with the registries on different servers, and
// the leader killed under a provider and a watcher.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yrpc/yrpc/internal/zktest"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/rt/registry/registrytest"
)

// leaderKillSession is the session timeout of TestEnsembleLeaderKilled. A
// session outlives the loss of the leader when the ensemble elects another
// and the client reconnects within it: about 1-2s on an idle machine and
// up to a few seconds under load (see the test's log line), so 10s
// (zkreg's default) leaves a wide margin.
const leaderKillSession = 10 * time.Second

// ensembleEnv is one test's root on the shared ensemble.
type ensembleEnv struct {
	t    *testing.T
	ens  *zktest.Ensemble
	root string
	next atomic.Int32 // round robin over the nodes for pinned registries
}

func newEnsembleEnv(t *testing.T, ens *zktest.Ensemble) *ensembleEnv {
	return &ensembleEnv{t: t, ens: ens, root: fmt.Sprintf("/yrpctest-ens-%08x", rand.Uint32())}
}

// open returns a registry on servers (default: every node) that is closed
// at cleanup.
func (e *ensembleEnv) open(t *testing.T, session time.Duration, servers ...string) *Registry {
	t.Helper()
	return e.openWith(t, Options{SessionTimeout: session}, servers...)
}

// openWith is open with more options; Servers and Root are set here.
func (e *ensembleEnv) openWith(t *testing.T, o Options, servers ...string) *Registry {
	t.Helper()
	if len(servers) == 0 {
		servers = e.ens.Servers()
	}
	o.Servers, o.Root = servers, e.root
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := New(ctx, o)
	if err != nil {
		t.Fatalf("New on %v: %v", servers, err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// pinned returns a registry connected to one node only, node 1 first and
// then the next in turn, so that consecutive registries talk to different
// servers.
func (e *ensembleEnv) pinned(t *testing.T) *Registry {
	t.Helper()
	s := e.ens.Servers()
	return e.open(t, testSession, s[int(e.next.Add(1)-1)%len(s)])
}

// TestEnsembleConformance runs the registry conformance suite with every
// registry connected to one node of the ensemble, in turn: what one
// registry writes, another reads through another server.
func TestEnsembleConformance(t *testing.T) {
	e := newEnsembleEnv(t, zktest.UseEnsemble(t))
	registrytest.Run(t, func(t *testing.T) registry.Registry { return e.pinned(t) })
}

// TestEnsembleAcrossNodes: providers on nodes 1 and 2, a governor on node 2
// and a watcher on node 3. The watcher sees both providers, a config
// change and a provider's departure.
func TestEnsembleAcrossNodes(t *testing.T) {
	e := newEnsembleEnv(t, zktest.UseEnsemble(t))
	p1, p2, w := e.pinned(t), e.pinned(t), e.pinned(t)
	k := registry.Key{Service: "pkg.Across"}
	mustRegister(t, p1, prov(k, "10.0.0.1:80"))
	mustRegister(t, p2, prov(k, "10.0.0.2:80"))
	h := watchHistory(t, w, k)
	h.WaitFor(t, "both providers", registrytest.HasAddrs("10.0.0.1:80", "10.0.0.2:80"))

	err := p2.UpdateConfig(context.Background(), k, func(c *registry.Config) error {
		c.RateLimit = &registry.RateLimit{Rate: 42, Burst: 1}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	h.WaitFor(t, "the config written through another node", func(s registry.Snapshot) bool {
		return s.Config.RateLimit != nil && s.Config.RateLimit.Rate == 42
	})
	p1.Close()
	h.WaitFor(t, "the closed provider gone", registrytest.HasAddrs("10.0.0.2:80"))
}

// TestEnsembleSessionExpiry expires a provider's session through another
// node than the one it is connected to: the provider gets a new session
// and registers again, and a watcher on a third node keeps the provider
// meanwhile (the empty listing is held for the grace period). The
// watcher's grace is a minute, not the default session timeout: how soon
// the provider is back depends on the machine's load (6s with 3s sessions
// under -race beside two busy loops), and what is tested is the hold.
func TestEnsembleSessionExpiry(t *testing.T) {
	e := newEnsembleEnv(t, zktest.UseEnsemble(t))
	s := e.ens.Servers()
	proxy := zktest.NewProxy(t, s[0])
	p := e.open(t, testSession, proxy.Addr())
	w := e.openWith(t, Options{SessionTimeout: testSession, EmptyGrace: time.Minute}, s[2])
	k := registry.Key{Service: "pkg.EnsembleExpiry"}
	mustRegister(t, p, prov(k, "10.0.0.1:80"))
	h := watchHistory(t, w, k)
	h.WaitFor(t, "the provider", registrytest.HasAddrs("10.0.0.1:80"))
	seen := len(h.lists()) - 1 // see TestEnsembleLeaderKilled

	old := p.SessionID()
	pw, ok := proxy.Password(old)
	if !ok {
		t.Fatalf("proxy did not see session %#x", old)
	}
	start := time.Now()
	if err := zktest.Expire(s[1], old, pw); err != nil {
		t.Fatal(err)
	}
	path := p.paths.endpoint(prov(k, "10.0.0.1:80"))
	waitFor(t, "the node back in a new session, seen on the watcher's node", func() bool {
		ok, st, err := w.conn().Exists(path)
		return err == nil && ok && st.EphemeralOwner != old && st.EphemeralOwner == p.SessionID()
	})
	t.Logf("node back %v after the session expired (session timeout %v)", time.Since(start).Round(time.Millisecond), testSession)
	for _, l := range h.lists()[seen:] {
		if !slices.Contains(l, "10.0.0.1:80") {
			t.Errorf("watcher lost the provider during the expiry: %v", h.lists())
			break
		}
	}
}

// TestEnsembleLeaderKilled kills the ensemble's leader (SIGKILL) under a
// provider and a watcher connected to every node. The rest of the
// ensemble elects a new leader, and both clients reconnect within their
// sessions (leaderKillSession), so no session expires: the provider's
// node is never deleted, the watcher's list never changes, and the
// registry works again as soon as a leader is elected.
//
// The probe that shows the registry works again is a third registry with
// no watches: go-zookeeper v1.0.4 has a data race between a response
// arriving and the watches it sets again after reconnecting
// (Conn.lastZxid, go-zookeeper/zk#35), which the race detector reports
// when a client with watches sends requests while it reconnects.
func TestEnsembleLeaderKilled(t *testing.T) {
	ens := zktest.TakeEnsemble(t)
	e := newEnsembleEnv(t, ens)
	leader, _, err := ens.WaitLeader(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	p, w, probe := e.open(t, leaderKillSession), e.open(t, leaderKillSession), e.open(t, leaderKillSession)
	k := registry.Key{Service: "pkg.LeaderKilled"}
	mustRegister(t, p, prov(k, "10.0.0.1:80"))
	h := watchHistory(t, w, k)
	h.WaitFor(t, "the provider", registrytest.HasAddrs("10.0.0.1:80"))
	// The watcher's first listing may come from a follower that has not
	// applied the registration yet (ZooKeeper reads are not synced); what
	// counts is what it sees from here on.
	seen := len(h.lists()) - 1
	psid, wsid := p.SessionID(), w.SessionID()

	killed := time.Now()
	ens.Kill(leader)
	next, elected, err := ens.WaitLeader(30 * time.Second)
	if err != nil {
		t.Fatalf("after killing leader %d: %v", leader.ID, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), registrytest.Timeout)
	defer cancel()
	waitFor(t, "a registration after the election", func() bool { return probe.Register(ctx, prov(k, "10.0.0.2:80")) == nil })
	h.WaitFor(t, "the registration after the election", registrytest.HasAddrs("10.0.0.1:80", "10.0.0.2:80"))
	back := time.Since(killed)
	t.Logf("leader %d killed: node %d leads %v later; registry usable again after %v (session timeout %v)",
		leader.ID, next.ID, elected.Round(time.Millisecond), back.Round(time.Millisecond), leaderKillSession)

	if got := p.SessionID(); got != psid {
		t.Errorf("provider session changed from %#x to %#x: its node was gone meanwhile", psid, got)
	}
	if got := w.SessionID(); got != wsid {
		t.Errorf("watcher session changed from %#x to %#x", wsid, got)
	}
	want := [][]string{{"10.0.0.1:80"}, {"10.0.0.1:80", "10.0.0.2:80"}}
	if got := h.lists()[seen:]; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("watcher saw %v once it had the provider, want exactly %v", got, want)
	}
}

// TestEnsembleFollowerReadsSynced: Config and List through a follower that
// lags behind the leader (paused while another registry writes through
// the leader) see every write completed before they were called.
func TestEnsembleFollowerReadsSynced(t *testing.T) {
	ens := zktest.TakeEnsemble(t)
	e := newEnsembleEnv(t, ens)
	leader, _, err := ens.WaitLeader(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var follower zktest.Node
	for _, n := range ens.Nodes() {
		if n.ID != leader.ID {
			follower = n
			break
		}
	}
	r, w := e.open(t, leaderKillSession, follower.Addr), e.open(t, leaderKillSession, leader.Addr)
	k := registry.Key{Service: "pkg.FollowerReads"}
	ctx := context.Background()
	// Up to 200 writes per round, a backlog the follower takes a while to
	// apply, within 1s: well inside syncLimit (2.5s), after which the
	// leader would drop the paused follower.
	const rounds, writes, pause = 5, 200, time.Second
	rate := 0
	for i := range rounds {
		ens.Pause(follower)
		addr := fmt.Sprintf("10.0.0.%d:80", i+1)
		mustRegister(t, w, prov(k, addr))
		for start, n := time.Now(), 0; n < writes && time.Since(start) < pause; n++ {
			err := w.UpdateConfig(ctx, k, func(c *registry.Config) error {
				if c.RateLimit == nil {
					c.RateLimit = &registry.RateLimit{Burst: 1}
				}
				c.RateLimit.Rate++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			rate++
		}
		ens.Resume(follower)
		// A read that fails (the follower lost its connections) is tried
		// again; whichever answers must be current.
		var cfg registry.Config
		waitFor(t, "Config through the follower", func() bool { cfg, err = r.Config(ctx, k); return err == nil })
		if cfg.RateLimit == nil || cfg.RateLimit.Rate != float64(rate) {
			t.Errorf("round %d: Config through the follower = %+v, want rate %d", i, cfg.RateLimit, rate)
		}
		var ls []Listing
		waitFor(t, "List through the follower", func() bool { ls, err = r.List(ctx); return err == nil })
		listed := false
		for _, l := range ls {
			for _, p := range l.Providers {
				listed = listed || l.Key == k && p.Addr == addr
			}
		}
		if !listed {
			t.Errorf("round %d: List through the follower lacks %s registered before it: %+v", i, addr, ls)
		}
	}
}

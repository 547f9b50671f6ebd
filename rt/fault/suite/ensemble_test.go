package suite

// Scenarios against the three-node ZooKeeper ensemble of scripts/zk.sh
// ($YRPC_ZK_ENSEMBLE).

import (
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/yrpc/yrpc/internal/zktest"
)

// TestKill9Ensemble is TestKill9 with providers and consumers on the
// ensemble: the killed providers' sessions expire through the quorum.
func TestKill9Ensemble(t *testing.T) { kill9(t, "kill9_ensemble", zktest.UseEnsemble(t).Addr()) }

// leaderKillSession is the ZooKeeper session timeout of providers and
// consumers in TestZooKeeperLeaderKill; see there.
const leaderKillSession = 8 * time.Second

// TestZooKeeperLeaderKill kills the ensemble's leader with SIGKILL under
// load. No registration is lost and no call fails.
//
// The guarantee and its bound: the two other nodes elect a new leader and
// every client reconnects to one of them with its session, so no session
// expires and no provider's node is deleted, provided that every client
// is back within its session timeout of the new leader starting (sessions
// do not expire without a leader, and a new leader gives each a full
// timeout), and within 1.5 timeouts of losing its connection (zkreg
// replaces a connection without a session after that). With two busy
// loops beside the suite (20 runs), the survivors served with a new
// leader 0.9-3.3s after the kill (reelected) and a listing through
// ZooKeeper worked again after 1.3-4.3s (zk_back), so the scenario's
// providers and consumers use 8s sessions (leaderKillSession). The test
// checks that every provider's node keeps its owner session, that the
// consumer never routes to fewer providers, and that no call fails. Calls
// do not depend on ZooKeeper at all (the consumer routes from its cache);
// they get restartCallTimeout, as in TestZooKeeperRestart, so that a
// freeze of the host is not counted as a failure.
func TestZooKeeperLeaderKill(t *testing.T) {
	ens := zktest.TakeEnsemble(t)
	c := newCluster(t, ens.Addr())
	c.session = leaderKillSession
	ps := c.startN(3)
	z := c.watchZnodes()
	k := c.newConsumer("")
	k.waitProviders(t, 20*time.Second, ps...)
	owners := c.znodeOwners(ens.Servers())
	before := owners.read(t)
	if len(before) != len(ps) {
		t.Fatalf("%d provider nodes before the kill, want %d: %v", len(before), len(ps), before)
	}
	leader, _, err := ens.WaitLeader(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	l := startLoad(k, loadOpts{timeout: restartCallTimeout})
	view := watchView(k)
	l.run(500 * time.Millisecond)

	killed := time.Now()
	ens.Kill(leader)
	next, elected, err := ens.WaitLeader(30 * time.Second)
	if err != nil {
		t.Fatalf("leader %d killed: %v", leader.ID, err)
	}
	if _, ok := waitFor(30*time.Second, func() bool { return z.hasAll(ps...) }); !ok {
		addrs, _ := z.list()
		t.Fatalf("30s after the leader was killed, registered providers are %v", addrs)
	}
	back := time.Since(killed)
	l.run(time.Second)
	l.stop()
	fewest := view.stop()

	if after := owners.read(t); !maps.Equal(after, before) {
		t.Errorf("provider nodes and their sessions changed: before %v, after %v", before, after)
	}
	if fewest < len(ps) {
		t.Errorf("the consumer routed to only %d providers meanwhile, want all %d", fewest, len(ps))
	}
	dups := c.checkPuts(l)
	l.check(t, true)
	figures(t, "zk_leader_kill", l, dups, fmt.Sprintf("leader=n%d new_leader=n%d", leader.ID, next.ID),
		"reelected="+ms(elected), "zk_back="+ms(back), fmt.Sprintf("fewest_providers=%d", fewest))
}

// viewWatch samples how many providers a consumer routes to.
type viewWatch struct {
	quit   chan struct{}
	wg     sync.WaitGroup
	fewest int
}

// watchView samples k's providers every millisecond until stop.
func watchView(k *consumer) *viewWatch {
	v := &viewWatch{quit: make(chan struct{}), fewest: len(k.addrs())}
	v.wg.Add(1)
	go func() {
		defer v.wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-v.quit:
				return
			case <-tick.C:
			}
			v.fewest = min(v.fewest, len(k.addrs()))
		}
	}()
	return v
}

// stop ends the sampling and returns the fewest providers seen.
func (v *viewWatch) stop() int {
	close(v.quit)
	v.wg.Wait()
	return v.fewest
}

// ownerReader reads the cluster's provider nodes straight from ZooKeeper
// with a plain client, following zkreg's documented layout.
type ownerReader struct {
	conn *zk.Conn
	dir  string // the Store's providers node
}

// znodeOwners connects a plain ZooKeeper client to servers for the test.
func (c *cluster) znodeOwners(servers []string) *ownerReader {
	c.t.Helper()
	conn, events, err := zk.Connect(servers, c.session, zk.WithLogInfo(false), zk.WithLogger(discardZKLog{}))
	if err != nil {
		c.t.Fatal(err)
	}
	drained := make(chan struct{})
	go func() {
		for range events {
		}
		close(drained)
	}()
	c.t.Cleanup(func() {
		conn.Close()
		<-drained
	})
	return &ownerReader{conn: conn, dir: strings.Join([]string{c.root, storeKey.Service, "_default", "_default", "providers"}, "/")}
}

// read returns the session owning each provider node, by node name,
// retrying (bounded) while ZooKeeper does not answer.
func (o *ownerReader) read(t *testing.T) map[string]int64 {
	t.Helper()
	var owners map[string]int64
	var lastErr error
	if _, ok := waitFor(20*time.Second, func() bool {
		owners, lastErr = o.tryRead()
		return lastErr == nil
	}); !ok {
		t.Fatalf("reading %s: %v", o.dir, lastErr)
	}
	return owners
}

func (o *ownerReader) tryRead() (map[string]int64, error) {
	if _, err := o.conn.Sync(o.dir); err != nil { // as current as the leader
		return nil, err
	}
	names, _, err := o.conn.Children(o.dir)
	if err != nil {
		return nil, err
	}
	owners := make(map[string]int64, len(names))
	for _, name := range names {
		ok, st, err := o.conn.Exists(o.dir + "/" + name)
		if err != nil {
			return nil, err
		}
		if ok {
			owners[name] = st.EphemeralOwner
		}
	}
	return owners, nil
}

// discardZKLog drops go-zookeeper's log lines.
type discardZKLog struct{}

func (discardZKLog) Printf(string, ...any) {}

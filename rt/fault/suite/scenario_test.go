package suite

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/yrpc/yrpc/internal/zktest"
	"github.com/yrpc/yrpc/zkreg/zkctl"
)

// TestKill9 kills providers with SIGKILL under load: first one of three,
// then another, leaving one.
func TestKill9(t *testing.T) { kill9(t, "kill9", zktest.Addr(t)) }

func kill9(t *testing.T, name, zk string) {
	c := newCluster(t, zk)
	ps := c.startN(3)
	z := c.watchZnodes()
	k := c.newConsumer("")
	k.waitProviders(t, 20*time.Second, ps...)
	l := startLoad(k, loadOpts{})
	l.run(time.Second)

	var extra []string
	for i, victim := range []*proc{ps[0], ps[1]} {
		killed := l.markNow()
		victim.kill()
		rec := l.recovered(t)
		gone := z.waitGone(t, victim.addr, killed)
		l.run(500 * time.Millisecond)
		extra = append(extra, fmt.Sprintf("recover%d=%s znode_gone%d=%s", i+1, ms(rec), i+1, ms(gone)))
	}
	l.run(time.Second)
	l.stop()
	dups := c.checkPuts(l)
	l.check(t, false)
	if n := l.servedBy(ps[2].name); n == 0 {
		t.Errorf("the last provider served no calls")
	}
	figures(t, name, l, dups, extra...)
}

// TestProviderStopped stops one provider of three with SIGSTOP for 5s
// under load, with the schema's call options (Get: 2s timeout, 3 tries
// and the default try deadlines): a try sent to the stopped provider
// costs that try, not the call, so no Get fails, while the provider
// still looks alive to the consumer (its connection open, its node in
// ZooKeeper until its 2s session expires). Puts are not retried once
// they may have run: they may fail with DeadlineExceeded, never run twice.
func TestProviderStopped(t *testing.T) {
	c := newCluster(t, zktest.Addr(t))
	ps := c.startN(3)
	k := c.newConsumer("")
	k.waitProviders(t, 20*time.Second, ps...)
	l := startLoad(k, loadOpts{})
	l.run(time.Second)

	victim := ps[1]
	failedBefore := k.obs.failed.Load()
	stopped := time.Now()
	if err := victim.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { victim.cmd.Process.Signal(syscall.SIGCONT) })
	l.run(5 * time.Second)
	if err := victim.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	stoppedFor := time.Since(stopped)
	failedTries := k.obs.failed.Load() - failedBefore
	l.run(time.Second)
	l.stop()
	dups := c.checkPuts(l)
	l.check(t, false)
	figures(t, "provider_stopped", l, dups, "stopped="+ms(stoppedFor), fmt.Sprintf("failed_tries=%d", failedTries))
	if failedTries == 0 {
		t.Errorf("no try failed while %s was stopped: no call was sent to it, and the test proved nothing", victim.name)
	}
}

// TestZooKeeperRestart stops the suite's own ZooKeeper under load for
// longer than the session timeout and starts it again with its data kept.
// The providers keep serving from the consumer's cache, and everybody's
// view converges.
//
// The guarantee is that no call fails because of the registry: with
// ZooKeeper down or restarting, every call still goes to a provider the
// consumer knows. A call can still miss a short deadline when the host
// freezes: on a loaded two-core machine the suite has seen the consumer
// and all three providers stop together for up to 0.9s around
// ZooKeeper's stop and start, and a call in flight then misses a 1s
// deadline whatever the registry does. (CI once saw 5 Gets and 2 Puts fail
// with DeadlineExceeded; reproduced with disk and CPU load beside the
// test, the failed calls had all waited on one live provider, none was
// refused or sent to a stale address, and the same load without a
// ZooKeeper restart failed none.) So the calls of this scenario get
// restartCallTimeout instead: a freeze shorter than that costs latency,
// not calls, and the figures report the test process's longest freeze
// (stall_max). Registry faults still fail calls: a consumer without
// providers answers Unavailable at once, and an attempt sent to an address
// nobody serves fails.
func TestZooKeeperRestart(t *testing.T) { zkRestart(t, false) }

// TestZooKeeperRestartWiped is TestZooKeeperRestart with an empty data dir,
// which expires every session. The restarted server refuses every client
// whose last seen zxid is above its own ("Refusing session request ... as
// it has seen zxid 0x25 our last zxid is 0x1 client must try another
// server"), which go-zookeeper retries for ever; zkreg replaces a
// connection without a session for 1.5 session timeouts, so providers
// register again. Calls keep succeeding meanwhile, from the cached
// providers.
func TestZooKeeperRestartWiped(t *testing.T) { zkRestart(t, true) }

// restartCallTimeout is the call timeout of the scenarios that stop or
// kill ZooKeeper servers (see TestZooKeeperRestart).
const restartCallTimeout = 10 * time.Second

func zkRestart(t *testing.T, wipe bool) {
	zk := zktest.StartServer(t)
	c := newCluster(t, zk.Addr())
	ps := c.startN(3)
	z := c.watchZnodes()
	k := c.newConsumer("")
	k.waitProviders(t, 20*time.Second, ps...)
	l := startLoad(k, loadOpts{timeout: restartCallTimeout})
	l.run(500 * time.Millisecond)

	name := map[bool]string{true: "zk_restart_wiped", false: "zk_restart_kept"}[wipe]
	down := time.Now()
	zk.Stop()
	l.run(providerSession + time.Second) // ZooKeeper down past the session timeout
	if wipe {
		zk.Wipe()
	}
	zk.Start()
	up := time.Now()
	if _, ok := waitFor(30*time.Second, func() bool { return z.hasAll(ps...) }); !ok {
		addrs, _ := z.list()
		t.Fatalf("%s: 30s after ZooKeeper came back, registered providers are %v, want all of %s, %s, %s (calls so far: %d, Get failures %d)",
			name, addrs, ps[0].addr, ps[1].addr, ps[2].addr, l.calls(), l.getFail.Load())
	}
	reregistered := time.Since(up)
	converged := reregistered + k.waitProviders(t, 30*time.Second, ps...)
	l.run(500 * time.Millisecond)
	l.stop()
	dups := c.checkPuts(l)
	l.check(t, true)
	figures(t, name, l, dups, "zk_down="+ms(up.Sub(down)), "all_registered_after_restart="+ms(reregistered), "consumer_converged="+ms(converged))
}

// TestGracefulRestart restarts providers with SIGTERM under load: each one
// deregisters, waits 300ms, sends GOAWAY, drains and exits, and is started
// again on the same address. No call fails.
func TestGracefulRestart(t *testing.T) {
	c := newCluster(t, zktest.Addr(t))
	ps := c.startN(3)
	k := c.newConsumer("")
	k.waitProviders(t, 20*time.Second, ps...)
	l := startLoad(k, loadOpts{})
	l.run(500 * time.Millisecond)

	var extra []string
	for _, i := range []int{1, 0} {
		old := ps[i]
		start := time.Now()
		if err := old.term(10 * time.Second); err != nil {
			t.Fatalf("provider %s: graceful shutdown: %v", old.name, err)
		}
		stopped := time.Since(start)
		ps[i] = c.start(old.name, provOpts{addr: old.addr})
		back := time.Since(start)
		seen := k.waitProviders(t, 20*time.Second, ps...)
		before := l.servedBy(old.name)
		if _, ok := waitFor(10*time.Second, func() bool { return l.servedBy(old.name) > before }); !ok {
			t.Fatalf("restarted provider %s got no calls within 10s", old.name)
		}
		extra = append(extra, old.name+"_shutdown="+ms(stopped), old.name+"_restarted="+ms(back), old.name+"_seen_again="+ms(back+seen))
		l.run(300 * time.Millisecond)
	}
	l.stop()
	dups := c.checkPuts(l)
	l.check(t, true)
	figures(t, "graceful_restart", l, dups, extra...)
}

// TestZooKeeperUnreachable cuts the consumer's ZooKeeper connection for
// longer than its session timeout: calls keep flowing to the cached
// providers, and after the cut the consumer gets a new session.
func TestZooKeeperUnreachable(t *testing.T) {
	zkAddr := zktest.Addr(t)
	c := newCluster(t, zkAddr)
	ps := c.startN(3)
	px := zktest.NewProxy(t, zkAddr)
	k := c.newConsumer(px.Addr())
	k.waitProviders(t, 20*time.Second, ps...)
	l := startLoad(k, loadOpts{})
	l.run(500 * time.Millisecond)

	sid := k.reg.SessionID()
	before := l.calls()
	cut := time.Now()
	px.Cut()
	l.run(providerSession + 1500*time.Millisecond)
	during := l.calls() - before
	px.Restore()
	cutFor := time.Since(cut)
	renewed, ok := waitFor(20*time.Second, func() bool { s := k.reg.SessionID(); return s != 0 && s != sid })
	if !ok {
		t.Errorf("the consumer kept session %#x after a cut of %v (session timeout %v)", sid, cutFor, providerSession)
	}
	k.waitProviders(t, 20*time.Second, ps...)
	l.run(300 * time.Millisecond)
	l.stop()
	dups := c.checkPuts(l)
	l.check(t, true)
	if during == 0 {
		t.Errorf("no calls completed while ZooKeeper was unreachable")
	}
	figures(t, "zk_unreachable", l, dups, "cut="+ms(cutFor), "calls_during_cut="+fmt.Sprint(during), "new_session_after="+ms(renewed))
}

// TestAllConsumersDropAStoppedProvider: three providers, two consumers
// under load; one provider is killed. Once its node is gone, neither
// consumer sends it a call.
func TestAllConsumersDropAStoppedProvider(t *testing.T) {
	c := newCluster(t, zktest.Addr(t))
	ps := c.startN(3)
	z := c.watchZnodes()
	ks := []*consumer{c.newConsumer(""), c.newConsumer("")}
	var loads []*load
	for i, k := range ks {
		k.waitProviders(t, 20*time.Second, ps...)
		loads = append(loads, startLoad(k, loadOpts{workers: 8, idBase: int64(i) << 40}))
	}
	loads[0].run(500 * time.Millisecond)
	victim := ps[2]
	killed := time.Now()
	victim.kill()
	gone := z.waitGone(t, victim.addr, killed)
	var dropped []string
	for i, k := range ks {
		d, ok := waitFor(10*time.Second, func() bool { return !slices.Contains(k.addrs(), victim.addr) })
		if !ok {
			t.Fatalf("consumer %d still lists %s 10s after its node went", i, victim.addr)
		}
		dropped = append(dropped, fmt.Sprintf("consumer%d_dropped=%s", i+1, ms(gone+d)))
	}
	// Attempts that were picked before the drop may still complete: give
	// them the call timeout's worth, then count.
	loads[0].run(200 * time.Millisecond)
	base := []int64{ks[0].obs.attempts(victim.addr), ks[1].obs.attempts(victim.addr)}
	loads[0].run(1500 * time.Millisecond)
	for _, l := range loads {
		l.stop()
	}
	for i, k := range ks {
		if n := k.obs.attempts(victim.addr) - base[i]; n > 0 {
			t.Errorf("consumer %d sent %d calls to %s after its node was gone", i+1, n, victim.addr)
		}
	}
	for i, l := range loads {
		dups := c.checkPuts(l)
		l.check(t, false)
		figures(t, fmt.Sprintf("consumers_drop_stopped/c%d", i+1), l, dups, dropped[i], "znode_gone="+ms(gone),
			fmt.Sprintf("attempts_to_victim_before_gone=%d", base[i]))
	}
}

// TestDrainWithCtl drains a provider with `yrpcc ctl drain` under load:
// a second later it gets no new calls; `yrpcc ctl undrain` brings its
// traffic back.
func TestDrainWithCtl(t *testing.T) {
	c := newCluster(t, zktest.Addr(t))
	ps := c.startN(3)
	k := c.newConsumer("")
	k.waitProviders(t, 20*time.Second, ps...)
	l := startLoad(k, loadOpts{})
	l.run(500 * time.Millisecond)
	victim := ps[1]

	ctl := func(cmd string) {
		t.Helper()
		var out, errb bytes.Buffer
		args := []string{"-zk", c.zk, "-root", c.root, cmd, storeKey.Service, victim.addr}
		if code := zkctl.Run(context.Background(), args, &out, &errb); code != zkctl.ExitOK {
			t.Fatalf("yrpcc ctl %v: exit %d: %s%s", args, code, out.String(), errb.String())
		}
	}
	drained := time.Now()
	ctl("drain")
	_, ok := waitFor(10*time.Second, func() bool { return k.draining(victim.addr) })
	seen := time.Since(drained)
	if !ok {
		t.Fatalf("the consumer did not see %s draining within 10s", victim.addr)
	}
	if d := time.Until(drained.Add(time.Second)); d > 0 {
		l.run(d) // the promise: no new calls one second after the drain
	}
	before := l.servedBy(victim.name)
	l.run(1500 * time.Millisecond)
	after := l.servedBy(victim.name)
	if after != before {
		t.Errorf("drained provider %s served %d calls from 1s to 2.5s after the drain", victim.name, after-before)
	}
	undrained := time.Now()
	ctl("undrain")
	_, ok = waitFor(10*time.Second, func() bool { return l.servedBy(victim.name) > after })
	back := time.Since(undrained)
	if !ok {
		t.Fatalf("undrained provider %s got no calls within 10s", victim.name)
	}
	l.run(300 * time.Millisecond)
	l.stop()
	dups := c.checkPuts(l)
	l.check(t, true)
	figures(t, "drain_ctl", l, dups, "drain_seen="+ms(seen), fmt.Sprintf("served_1s_to_2.5s_after_drain=%d", after-before),
		"traffic_back_after_undrain="+ms(back))
}

// TestFaultKit runs providers with rt/fault Injectors: one drops the
// connection on 1% of its Gets, one aborts 5% with Unavailable, one delays
// 5% by 20ms. Get never fails: retries go to another provider.
func TestFaultKit(t *testing.T) {
	c := newCluster(t, zktest.Addr(t))
	ps := []*proc{
		c.start("p1", provOpts{faults: "Get:0.01:drop"}),
		c.start("p2", provOpts{faults: "Get:0.05:abort=Unavailable:injected"}),
		c.start("p3", provOpts{faults: "Get:0.05:delay=20ms"}),
	}
	k := c.newConsumer("")
	k.waitProviders(t, 20*time.Second, ps...)
	failedBefore := k.obs.failed.Load()
	l := startLoad(k, loadOpts{})
	l.run(3 * time.Second)
	l.stop()
	dups := c.checkPuts(l)
	l.check(t, false) // Puts in flight on a dropped connection fail with Unavailable
	failed := k.obs.failed.Load() - failedBefore
	if failed == 0 {
		t.Errorf("no attempt failed: the faults were not applied")
	}
	figures(t, "fault_kit", l, dups, fmt.Sprintf("failed_attempts=%d", failed),
		fmt.Sprintf("served=p1:%d,p2:%d,p3:%d", l.servedBy("p1"), l.servedBy("p2"), l.servedBy("p3")))
}

// TestDropsOnEveryProvider: every provider drops the connection on one
// attempt in 500. A drop fails every call in flight on that connection at
// once; the client counts it as one failure of that provider, not one per
// call, so no breaker opens for a healthy provider.
//
// About 1 attempt in 100 is in flight on a dropped connection, so a Get
// fails only when all three of its tries (one per provider) hit drops:
// about 1 call in a million, 0.1 per run. The test therefore requires that
// every failed Get spent its three tries, and that such failures stay
// rare. When breakers opened wrongly, Gets failed by the hundred, most of
// them before their third try (no provider left to pick).
func TestDropsOnEveryProvider(t *testing.T) {
	c := newCluster(t, zktest.Addr(t))
	ps := make([]*proc, 3)
	for i := range ps {
		ps[i] = c.start(fmt.Sprintf("p%d", i+1), provOpts{faults: "Get:0.002:drop"})
	}
	k := c.newConsumer("")
	k.waitProviders(t, 20*time.Second, ps...)
	l := startLoad(k, loadOpts{putEvery: -1})
	l.run(3 * time.Second)
	l.stop()
	third := k.obs.failedThird.Load()
	figures(t, "drops_on_every_provider", l, 0, fmt.Sprintf("failed_attempts=%d failed_third_attempts=%d", k.obs.failed.Load(), third))
	fails := l.getFail.Load()
	if fails > third {
		t.Errorf("%d Get calls failed, only %d of them after three tries (last error: %s)", fails, third, l.err())
	}
	if limit := l.gets.Load()/10_000 + 1; fails > limit {
		t.Errorf("%d of %d Get calls failed, more than %d (last error: %s)", fails, l.gets.Load(), limit, l.err())
	}
}

// Package suite is yrpc's fault-injection suite: end-to-end scenarios in
// which real provider processes, a real ZooKeeper and consumers under load
// meet crashes, restarts and network faults, and the callers' figures are
// checked. It holds only tests; this file is its documentation.
//
// Every scenario runs provider processes (the test binary re-executed with
// $YRPC_SUITE_PROVIDER set; see main_test.go) serving the tour's Store
// service (examples/tour/tourrpc: Get is idempotent with Retry(3), Put is
// not), registered in ZooKeeper under a root of their own with a 2 s
// session. Each provider appends the id of every Put it executes to a file
// with one write per call, so a test proves that no Put ran twice across
// providers. A consumer calls Get (and Put with unique ids) from 16
// goroutines for a fixed time while the scenario injects its fault:
//
//   - Kill9: providers killed with SIGKILL under load, one and then another.
//     Get never fails; Put fails only with Unavailable or DeadlineExceeded
//     and never runs twice; the killed provider's znode disappears within
//     the session timeout.
//   - ProviderStopped: one provider of three stopped with SIGSTOP for 5s
//     under load, with the schema's call options: a try on it costs that
//     try (the default try deadline is half the time left while a retry
//     may follow), so Get never fails; Put never runs twice.
//   - ZooKeeperRestart: the suite's own ZooKeeper (started on a free port,
//     never the shared one) stopped for longer than the session timeout and
//     started again with its data kept. Calls keep succeeding from the
//     cached providers; providers are registered again; the consumer sees
//     all of them. ZooKeeperRestartWiped does the same with an empty data
//     dir (which expires every session, and whose server refuses clients
//     that saw a later zxid until they start a new session). Calls get a
//     10s timeout here: the guarantee is that the registry fails no call,
//     and a 1s call cannot survive the host freezing for a second, which
//     loaded machines do (figure stall_max; see TestZooKeeperRestart).
//   - Kill9Ensemble: Kill9 on the three-node ensemble of scripts/zk.sh.
//   - ZooKeeperLeaderKill: the ensemble's leader killed with SIGKILL under
//     load. No call fails, every provider's node keeps its session (none
//     is deleted and created again) and the consumer never routes to fewer
//     providers, as long as the election and the reconnection take less
//     than the 8s sessions the scenario uses (figures reelected, zk_back).
//   - GracefulRestart: SIGTERM -> Shutdown with a 300 ms deregister wait,
//     exit, start again on the same address: no failure at all.
//   - ZooKeeperUnreachable: the consumer's ZooKeeper connection cut for
//     longer than its session timeout; calls keep flowing. Then two
//     consumers, one provider killed: neither sends it a call once its node
//     is gone.
//   - Drain: `yrpcc ctl drain` (zkctl.Run, in process) under load: after a
//     second the drained provider gets no new calls; undrain brings it back.
//   - FaultKit: providers with an rt/fault Injector dropping connections,
//     aborting with Unavailable and delaying some Gets: Get never fails.
//     DropsOnEveryProvider: every provider drops some connections; a lost
//     connection counts once against its provider's breaker, not once per
//     call in flight on it, so breakers stay closed. A Get fails only when
//     each of its three tries meets a drop (about 1 call in a million).
//   - StreamsThroughShutdownAndKill: Store.Watch feeds (server streams)
//     kept open on three providers under load while one shuts down
//     gracefully (SIGTERM, 3s grace) and another is killed. A finite feed
//     on the draining provider finishes with all its updates; its endless
//     feeds are reset with Unavailable when the grace runs out (the
//     provider exits with code 4); new feeds go elsewhere once the
//     consumer saw the drain; the killed provider's feeds end with
//     Unavailable; the third provider's feeds keep flowing; no feed hangs.
//     (The suite's Watch sends an update every 10 ms, endless below id
//     2^32, else id/2^32 updates.)
//   - Soak: outside the default run; see below.
//
// Each scenario logs one line of figures in the same format, for example:
//
//	FIGURES scenario=kill9 calls=368677 gets=322664 puts=46013 get_fail=0 put_fail=5(Unavailable:5) dup_puts=0 stall_max=19ms recover1=49µs znode_gone1=2.01s ...
//
// stall_max is the longest time the test process went unscheduled while
// the load ran (beyond a 5ms ticker's period): how much of a call's
// latency the host, not the code, may have caused.
//
// # Running
//
// The scenarios need a real ZooKeeper, given by $YRPC_ZK, and the
// ensemble ones the three-node ensemble of $YRPC_ZK_ENSEMBLE and
// $YRPC_ZK_ENSEMBLE_DIR (scripts/test.sh starts both and sets them, with
// YRPC_ZK_REQUIRED=1). Without them they skip, or fail when
// YRPC_ZK_REQUIRED=1. ZooKeeperLeaderKill holds the ensemble exclusively
// (see internal/zktest) and starts the killed node again before it ends.
// ZooKeeperRestart starts a ZooKeeper of its own from
// /usr/share/java/zookeeper.jar with java on $PATH, and skips without them
// (fails with YRPC_ZK_REQUIRED=1):
//
//	eval "$(scripts/zk.sh start)"; eval "$(scripts/zk.sh ensemble-start)"
//	go test ./rt/fault/suite -v -run . | grep FIGURES
//	scripts/zk.sh stop; scripts/zk.sh ensemble-stop
//
// The soak runs only when asked, for at least two minutes of steady load
// with periodic faults (delays and aborts sent as per-call fault metadata,
// connection drops by one provider's Injector) and provider restarts
// (graceful and SIGKILL), sampling the consumer's goroutines and live heap:
//
//	go test ./rt/fault/suite -run Soak -soak=2m -v -timeout 10m
//	YRPC_SUITE_SOAK=5m go test ./rt/fault/suite -run Soak -v -timeout 20m
//
// Provider processes exit when the test process goes (they watch stdin),
// and the suite's own ZooKeeper gets SIGKILL if the test process dies.
package suite

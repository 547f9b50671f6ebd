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
//   - ZooKeeperRestart: the suite's own ZooKeeper (started on a free port,
//     never the shared one) restarted with an empty data dir (which expires
//     every session) and with its data kept. Calls keep succeeding from the
//     cached providers; providers re-register; the consumer sees all again.
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
//   - Soak: outside the default run; see below.
//
// Each scenario logs one line of figures in the same format, for example:
//
//	FIGURES scenario=kill9 calls=52113 get_fail=0 put_fail=3(Unavailable) dup_puts=0 recover=1ms znode_gone=2.3s
//
// # Running
//
// The scenarios need a real ZooKeeper, given by $YRPC_ZK (scripts/test.sh
// starts one and sets it, with YRPC_ZK_REQUIRED=1). Without it they skip,
// or fail when YRPC_ZK_REQUIRED=1. ZooKeeperRestart starts a ZooKeeper of
// its own from /usr/share/java/zookeeper.jar with java on $PATH, and skips
// without them (fails with YRPC_ZK_REQUIRED=1):
//
//	eval "$(scripts/zk.sh start)"
//	go test ./rt/fault/suite -v -run . | grep FIGURES
//	scripts/zk.sh stop
//
// The soak runs only when asked, for at least two minutes of steady load
// with periodic faults (delays, aborts and drops sent as per-call fault
// metadata) and provider restarts, sampling the consumer's goroutines and
// heap:
//
//	go test ./rt/fault/suite -run Soak -soak=2m -v -timeout 10m
//	YRPC_SUITE_SOAK=5m go test ./rt/fault/suite -run Soak -v -timeout 20m
package suite

// Package zktest holds helpers for tests against a real ZooKeeper: the
// server address from $YRPC_ZK, a loopback TCP proxy that can cut the
// connection and learns session passwords, a way to expire a session, a
// server of a test's own that it may stop, wipe and restart, and the
// three-node ensemble of scripts/zk.sh ($YRPC_ZK_ENSEMBLE), whose nodes a
// test may kill and start again. The registry's tests (zkreg) and the
// fault-injection suite (rt/fault/suite) share it.
package zktest

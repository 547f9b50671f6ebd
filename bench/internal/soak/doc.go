// Package soak is a long-running test of yrpc under provider churn (issue
// 11): a consumer process calls a service whose providers are restarted
// under load, while their registry, a real ZooKeeper, is restarted once;
// it counts what the callers see and samples the memory and goroutines of
// every process.
//
// The service is the tour's Store (examples/tour/tourrpc): Get is
// idempotent (retried on another provider), Put is not. Three provider
// processes (this binary's "provider" subcommand) register in ZooKeeper
// with zkreg under a root of their own; each appends the id of every Put
// it executes to a file with one write per call, so duplicate effects
// (a Put executed twice) and lost acknowledged Puts show. The consumer is
// the soak process itself: one rt.Client over zkreg, with workers making
// Gets and, one call in eight, Puts with unique ids, paced to a rate.
//
// Every Churn (default 1 min) one provider is restarted: p1 and p2 in
// turn, gracefully (SIGTERM, Shutdown: deregister, drain, exit) and with
// SIGKILL in turn, each started again at once on the same address; p3 is
// never restarted, so that a leak on the provider side shows over the
// whole run. Once, halfway, ZooKeeper itself is stopped for ZKDown
// (default 15 s) and started again with its data (Options.RestartZK; for a
// server of scripts/zk.sh, ScriptZK does it with SIGTERM and the pid file
// and run.sh that zk.sh leaves in $YRPC_ZK_DIR). Every
// Sample (default 10 s) the soak records the RSS (from /proc), goroutines
// and live heap of the consumer and of every provider (which answer
// "stats" on their standard input).
//
// The report (soak.json, soak.md) gives the calls, the failed Gets (which
// must be 0) with their codes and times, the failed Puts by code, the
// duplicate and lost Puts, every event with its time, and the memory and
// goroutines at the start and the end, with the means of the first and the
// last third of the samples (flat or not).
package soak

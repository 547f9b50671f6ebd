// Package harness drives a load against one implementation and measures it:
// c worker goroutines share one client and make n calls between them, every
// call's latency goes into a preallocated slice, and the counted phase
// reports calls per second, latency percentiles and the process's
// allocations (runtime.MemStats deltas).
//
// An implementation plugs in as a Client (one Call per request, safe for
// concurrent use by distinct workers) or, for loads that are not
// call-shaped such as a pipelined echo, as a Driver that runs the whole
// phase itself. FanIn spreads the workers over several clients (the fan-in
// of client connections).
package harness

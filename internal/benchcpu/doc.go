// Package benchcpu reports the CPU time of benchmarks as a "cpu-ns/op"
// metric beside the wall time of ns/op. On a shared, loaded machine most
// of a benchmark's wall time may be time spent waiting for a CPU; the CPU
// time leaves that out. It measures on Linux (getrusage) and reports
// nothing elsewhere. Calls runs an RPC benchmark's calls with one caller
// or many and reports their CPU time. It is for the repository's own
// benchmarks.
package benchcpu

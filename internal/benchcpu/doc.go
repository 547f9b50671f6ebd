// Package benchcpu reports the CPU time of benchmarks as a "cpu-ns/op"
// metric beside the wall time of ns/op. On a shared, loaded machine most
// of a benchmark's wall time may be time spent waiting for a CPU; the CPU
// time leaves that out. It measures on Linux (getrusage) and reports
// nothing elsewhere. It is for the repository's own benchmarks.
package benchcpu

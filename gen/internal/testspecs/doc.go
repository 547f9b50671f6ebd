// Package testspecs holds in-memory gen.Spec values that exercise the
// generator: Kitchen has every field kind, list, map, optional, enum, time,
// duration, nested and recursive message and every method policy; Bench is
// the benchmark workload (BenchmarkMessage of benchmark.proto, service
// Hello.Say, package "bench"); Streams has a stream of every kind with
// the policies streams take. Their generated code is committed beside
// them (kitchenrpc, benchrpc, streamsrpc): gen's golden test compares the generator's
// output with it, and `go test ./gen -update` rewrites it.
package testspecs

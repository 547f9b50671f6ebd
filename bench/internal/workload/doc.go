// Package workload defines the benchmark workload of
// /work/shared/bench/README.md for the protobuf peers: how a request is
// filled, what the server answers and how the client checks the answer.
//
// The yrpc adapter mirrors these functions for its own generated message;
// the tests here pin the wire sizes (581-byte request, 527-byte reply) that
// every implementation must move.
package workload

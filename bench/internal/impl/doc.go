// Package impl holds one small adapter per implementation under test. Each
// adapter has a server side (serve the Hello.Say workload on a listener
// until its context ends) and a client side (dial once for c workers and
// return a harness.Client whose Call makes one checked Say call).
//
// Peers are used the way their users run them by default: gRPC-Go over one
// ClientConn, rpcx with protobuf serialization over one XClient, net/rpc
// with gob over one client, drpc with a connection per worker (a drpc
// connection carries one call at a time). Two reference lines move the
// same bytes with no framework: a TCP ping-pong with a connection per
// worker (the round-trip floor) and a pipelined echo on one connection
// (the throughput ceiling). The yrpc adapter is built only with the "yrpc"
// build tag. yrpc-tls and grpc-tls are yrpc and gRPC over mutual TLS, with
// the configs that the runner gives them (package certs); yrpc-lz4 is yrpc
// with lz4 compression of bodies of 1 KiB and more on both sides, run only
// when named (the cost curves). Every adapter moves requests of any size
// (workload.NewSized); yrpc's client also balances over a list of
// addresses. Grouped returns the rows of the stream benchmark (feed/*,
// echo/*) and of the gRPC endpoint benchmark (grpcc/*, native/*), compared
// within their groups.
package impl

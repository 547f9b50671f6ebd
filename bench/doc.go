// Bench compares yrpc with other Go RPC frameworks on one workload (see
// README.md): separate server and client processes on loopback, c worker
// goroutines sharing one client, every call's latency recorded and every
// process's allocations counted.
//
// Usage:
//
//	bench run [-quick] [-impls grpc,rpcx,...] [-c 1,64,256] [-n1 40000] [-n 150000] [-repeats 2] [-out results]
//	bench curves [-quick] [-sweeps size,fanin,providers] [-sizes 64,581,...] [-fanin 1,16,256] [-providers 1,8,64] [-out results/curves]
//	bench streams [run flags]      (run: feed/* and echo/* at c=1,64, results/streams)
//	bench grpcserver [run flags]   (run: grpcc/* and native/* at c=1,64,256, results/grpcserver)
//	bench tail [-impls yrpc,netrpc,grpc] [-c 64,256] [-repeats 2] [-n 150000] [-window 3ms] [-timeline DIR] [-out results/tail]
//	bench server -impl NAME [-addr 127.0.0.1:0] [-certs DIR] [-size 0] [-listeners 1] [-timeline FILE]
//	bench client -impl NAME -addr HOST:PORT[,HOST:PORT...] [-c 1] [-n 1000] [-warmup 0] [-certs DIR] [-size 0] [-conns 1] [-timeline FILE]
//	bench report [-in results/results.json] [-out results]
//	bench certs DIR
//
// "bench run" starts a server and a client process per measurement itself;
// "bench curves" does the same for the cost curves (message size, fan-in
// of client connections, providers behind a balancing client); "streams"
// and "grpcserver" are "bench run" with the rows of the stream benchmark
// and of the gRPC endpoint benchmark (README.md); "tail" is "bench run"
// keeping a timeline of each measurement (run -timeline DIR), then tells
// how the slowest 1 % of its calls line up with the garbage collections
// of its client and server (package timeline); "server" and "client"
// are the processes they start; "report" renders the tables and the
// charts again from a results.json or curves.json; "certs" writes a set of
// certificates for the TLS implementations (yrpc-tls, grpc-tls), which
// "bench run" makes by itself for each run. run.sh builds the binary (with
// yrpc when it compiles) and runs everything.
package main

#!/bin/sh
# run.sh builds the bench binary and runs the side-by-side benchmark: every
# implementation, c = 1, 64, 256, two repeats, server and client in separate
# processes. Arguments go to "bench run"; for example:
#
#	./run.sh -quick                   # smoke run, ~7 s, output in results/quick
#	./run.sh -impls yrpc,grpc -c 64   # some peers, one concurrency
#	./run.sh -repeats 3 -out /tmp/r   # more repeats, results elsewhere
#	./run.sh -c 1,256 -idle 10s       # and each process's CPU while connected and idle, 11 s more per measurement
#	./run.sh curves                   # the cost curves instead (bench curves), 10-25 minutes
#	./run.sh streams                  # issue 14: yrpc, gRPC-Go and drpc streams, results/streams
#	./run.sh grpcserver               # issue 15: gRPC-Go's client on both servers, results/grpcserver
#	./run.sh tail                     # issue 16: where the slowest calls are, results/tail/tail.md
#
# yrpc is included when the module builds with -tags yrpc (the generated
# package github.com/yrpc/yrpc/examples/hello/hellorpc and the runtime);
# otherwise the peers run alone and the report says so.
set -eu
cd "$(dirname "$0")"
mkdir -p bin
if go build -tags yrpc -o bin/bench . 2>bin/yrpc-build.log; then
	echo "run.sh: built with yrpc" >&2
else
	echo "run.sh: yrpc does not build; running without it. bin/yrpc-build.log says:" >&2
	head -n 5 bin/yrpc-build.log >&2
	go build -o bin/bench .
fi
cmd=run
case "${1:-}" in
curves | streams | grpcserver | tail) cmd=$1 && shift ;;
esac
exec bin/bench "$cmd" "$@"

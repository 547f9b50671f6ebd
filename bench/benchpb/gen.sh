#!/bin/sh
# gen.sh regenerates the Go code for benchmark.proto (a copy of
# /work/shared/bench/benchmark.proto, unchanged) and stream.proto (the
# streaming benchmark's service). Tools and versions:
#   protoc               3.21.12 (Debian protobuf-compiler)
#   protoc-gen-go        go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
#   protoc-gen-go-grpc   go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
#   protoc-gen-go-drpc   go install storj.io/drpc/cmd/protoc-gen-go-drpc@v1.0.0
set -eu
cd "$(dirname "$0")"
PATH="$(go env GOPATH)/bin:$PATH"
M=Mbenchmark.proto=github.com/yrpc/yrpc/bench/benchpb
MS=Mstream.proto=github.com/yrpc/yrpc/bench/benchpb
protoc -I . \
	--go_out=. --go_opt=paths=source_relative --go_opt=$M --go_opt=$MS \
	--go-grpc_out=. --go-grpc_opt=paths=source_relative --go-grpc_opt=$M --go-grpc_opt=$MS \
	--go-drpc_out=. --go-drpc_opt=paths=source_relative --go-drpc_opt=$M --go-drpc_opt=$MS \
	benchmark.proto stream.proto

#!/bin/sh
# regen.sh regenerates the protobuf and vtprotobuf code of this module.
#
# The .proto files are the yrpcc proto export of the example schemas:
#   go run ../../yrpcc proto ../../examples/users/schema > proto/users.proto
#   go run ../../yrpcc proto ../../examples/hello/schema > proto/bench.proto
# Tools: protoc (Debian's protobuf-compiler, /usr/bin/protoc),
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
#   go install github.com/planetscale/vtprotobuf/cmd/protoc-gen-go-vtproto@v0.6.0
set -eu
cd "$(dirname "$0")"
(cd ../.. && go run ./yrpcc proto ./examples/users/schema) > proto/users.proto
(cd ../.. && go run ./yrpcc proto ./examples/hello/schema) > proto/bench.proto
mod=github.com/yrpc/yrpc/gen/protocompat
opts="Musers.proto=$mod/userspb,Mbench.proto=$mod/benchpb"
rm -rf userspb benchpb
protoc -I proto -I /usr/include \
	--go_out=. --go_opt=module=$mod,$opts \
	--go-vtproto_out=. --go-vtproto_opt=module=$mod,$opts,features=marshal+unmarshal+size \
	users.proto bench.proto

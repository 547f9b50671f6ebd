#!/bin/sh
# regen.sh regenerates this module's protobuf and gRPC code.
#
# proto/users.proto is the yrpcc proto export of the users example:
#   go run ../yrpcc proto ../examples/users/schema > proto/users.proto
# userspb is what grpc-go users generate from it. Tools: protoc (Debian's
# protobuf-compiler, /usr/bin/protoc),
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
#   go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
# The Python messages (users_pb2.py) are not committed: the Python test
# generates them with protoc --python_out, as the README shows.
set -eu
cd "$(dirname "$0")"
(cd .. && go run ./yrpcc proto ./examples/users/schema) > proto/users.proto
mod=github.com/yrpc/yrpc/interop
rm -rf userspb
protoc -I proto \
	--go_out=. --go_opt=module=$mod,Musers.proto=$mod/userspb \
	--go-grpc_out=. --go-grpc_opt=module=$mod,Musers.proto=$mod/userspb \
	users.proto

#!/bin/sh
# regen.sh regenerates this module's protobuf and gRPC code.
#
# proto/users.proto and proto/feed.proto are the yrpcc proto exports of
# the users and feed examples:
#   go run ../yrpcc proto ../examples/users/schema > proto/users.proto
#   go run ../yrpcc proto ../examples/feed/schema > proto/feed.proto
# userspb and feedpb are what grpc-go users generate from them. Tools: protoc (Debian's
# protobuf-compiler, /usr/bin/protoc),
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
#   go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
# The Python messages (users_pb2.py) are not committed: the Python test
# generates them with protoc --python_out, as the README shows.
set -eu
cd "$(dirname "$0")"
mod=github.com/yrpc/yrpc/interop
for name in users feed; do
	(cd .. && go run ./yrpcc proto ./examples/$name/schema) > proto/$name.proto
	rm -rf ${name}pb
	protoc -I proto \
		--go_out=. --go_opt=module=$mod,M$name.proto=$mod/${name}pb \
		--go-grpc_out=. --go-grpc_opt=module=$mod,M$name.proto=$mod/${name}pb \
		$name.proto
done

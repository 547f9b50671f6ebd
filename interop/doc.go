// Package interop tests that other gRPC implementations call yrpc
// servers: grpc-go's generated clients (from `yrpcc proto`'s exports of
// examples/users and examples/feed, and protoc) with unary calls and
// streams, grpc-go's reflection and health clients, and Python's grpcio,
// over h2c and TLS; and that yrpc clients call grpc-go's servers. It is a module of its own, so
// that grpc-go and protobuf-go stay out of yrpc's go.mod.
//
// Users and Feed are the examples/users and examples/feed implementations
// the tests call; cmd/usersserver serves Users for the README's Python
// example. userspb and feedpb are protoc-gen-go and protoc-gen-go-grpc
// output (regen.sh).
package interop

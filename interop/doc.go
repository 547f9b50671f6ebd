// Package interop tests that other gRPC implementations call yrpc
// servers: grpc-go's generated client (from `yrpcc proto`'s export of
// examples/users and protoc), grpc-go's reflection and health clients,
// and Python's grpcio, over h2c and TLS. It is a module of its own, so
// that grpc-go and protobuf-go stay out of yrpc's go.mod.
//
// Users is the examples/users implementation the tests call;
// cmd/usersserver serves it for the README's Python example. userspb is
// protoc-gen-go and protoc-gen-go-grpc output (regen.sh).
package interop

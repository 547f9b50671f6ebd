// Package proto writes a gen.Spec as an equivalent proto3 file: the same
// messages, field numbers, kinds, enums and services, so that other
// languages and tools can talk to yrpc services (the wire format is
// protobuf's). time.Time and time.Duration fields become
// google.protobuf.Timestamp and google.protobuf.Duration, oneway methods
// return google.protobuf.Empty, and the policies and validators that
// proto3 cannot express appear as "// yrpc: ..." comments, in the text that
// ServicePolicy, MethodPolicy and FieldRules return (yrpcc describe prints
// the same).
//
// Messages are declared and referenced by their protobuf names
// (gen.Message.ProtobufName: schema.ProtoName, else the Go name); a message
// whose Go name differs gets a "// yrpc: go-type=Name" comment.
//
// The output is deterministic. Golden tests compare it with the committed
// .proto files of the examples (gen/protocompat/proto) and with
// golden/proto for the in-memory test specs and examples/evolution;
// `go test ./gen/proto -update` rewrites them. Every function is safe for concurrent use.
package proto

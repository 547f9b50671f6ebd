// Package gen is yrpc's code generator: it turns a Spec (the plain-data
// description of a schema package, built by gen/load or in memory) into Go
// source with jennifer.
//
// For every message it writes a plain struct with Size, MarshalAppend,
// Unmarshal (the protobuf binary format, proto3 rules), UnmarshalOwned
// (Unmarshal without its copy, for a buffer the message may keep:
// rt.OwnedUnmarshaler) and Validate; for
// every enum a named int32 type with String and a Parse function; for
// every service a ServiceDesc with the schema's policies and a method-index
// dispatch switch, the server interface with its Unimplemented
// implementation and Register function, and the typed client (a unary
// method Get has Get, which calls rt.InvokeNew to make its response with
// room for the answer's bytes, and GetInto, which decodes into a response
// the caller owns); for the
// package, its google.protobuf.FileDescriptorProto (FileDescriptor, encoded
// by gen/descriptor), which every ServiceDesc references for gRPC server
// reflection. The output
// imports only the standard library, rt and rt/codec, uses no reflection,
// is gofmt-clean and deterministic.
//
// A method is unary, oneway or a stream (server, client or bidi: see
// MethodKind), and Check takes the policies that suit its kind. A stream
// method gets the typed stream APIs of package rt, in the style of
// gRPC-Go's generic streams: in the server interface
// Watch(*Req, rt.ServerStreamingServer[Res]) error,
// Upload(rt.ClientStreamingServer[Req, Res]) error and
// Chat(rt.BidiStreamingServer[Req, Res]) error; in the client
// Watch(ctx, *Req, ...rt.CallOption) (rt.ServerStreamingClient[Res], error),
// which opens the stream, sends the request and half-closes it,
// Upload(ctx, ...rt.CallOption) (rt.ClientStreamingClient[Req, Res], error)
// and Chat(ctx, ...rt.CallOption) (rt.BidiStreamingClient[Req, Res], error);
// and a MethodDesc with its rt.StreamKind and a HandleStream, which for a
// server stream receives the one request before it calls the method. A
// server stream's hash key goes to the runtime as rt.WithHashKey, ahead
// of the caller's options (see stream.go).
//
// Codec semantics follow google.golang.org/protobuf where it matters for
// compatibility (field order by number, -0.0 written, proto3 zero values
// omitted unless Optional, packed and unpacked lists both accepted,
// repeated occurrences of a message merged, unknown fields and groups
// skipped, nesting limited to codec.MaxDepth) and vtprotobuf where it is
// faster: strings are not checked for valid UTF-8, and maps are written in
// Go's map order (not deterministic). Unmarshal copies its input once and
// aliases strings and bytes into that copy, so a decoded message keeps the
// whole copy alive.
//
// Check is the generator's one check of a spec, and building the model
// that the emitting code reads is the same pass: wire numbers, names that
// clash in Go, in the protobuf package's scope (a message's
// Message.ProtoName, which the .proto, the file descriptor and generated
// errors use while the Go type keeps Name, against the other messages,
// enums, enum values and services) or in file names (a field named like a
// generated method, two types with one snake_case file name), references, enums, validators that
// do not suit their field, policies, hash keys that do not name a scalar
// request field, mock values that do not fit the response, and method IDs
// (the FNV-1a 32 hash of "package.Service/Method") that are 0 or collide.
// It returns every problem at once, each placed on the spec's position of
// the field, method or type involved. Generate runs it before it emits
// anything and gen/load runs it on the specs it loads, mapping the
// positions to file:line, so the two never disagree. Names follow the rules
// of package gen/names; package gen/proto writes a spec as a .proto file.
//
// Mock values are JSON, read by one reader with protobuf's JSON mapping
// (schema or JSON field names, 64-bit integers also as strings, bytes in
// base64, enums by name or number; see EncodeMock): Check resolves the
// schema's rpc.ReturnValue values with it into the generated mock
// functions, and EncodeMock, which `yrpcc ctl mock ... value --json`
// calls, encodes a value given at run time into the wire bytes that the
// generated marshaler would write for it, with the same rules and errors.
//
// The golden files of the generated code are the generated packages
// committed in the repository: the examples' (examples/*/...rpc) and the
// test specs' (gen/internal/testspecs/kitchenrpc, benchrpc and
// streamsrpc). The golden test fails when the generator's output differs
// from them, and `go test ./gen -update` rewrites them.
package gen

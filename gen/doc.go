// Package gen is yrpc's code generator: it turns a Spec (the plain-data
// description of a schema package, built by gen/load or in memory) into Go
// source with jennifer.
//
// For every message it writes a plain struct with Size, MarshalAppend,
// Unmarshal (the protobuf binary format, proto3 rules) and Validate; for
// every enum a named int32 type with String and a Parse function; for
// every service a ServiceDesc with the schema's policies and a method-index
// dispatch switch, the server interface with its Unimplemented
// implementation and Register function, and the typed client. The output
// imports only the standard library, rt and rt/codec, uses no reflection,
// is gofmt-clean and deterministic.
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
// Generate also validates what only the generator knows: method IDs (the
// FNV-1a 32 hash of "package.Service/Method") must be distinct and not 0,
// mock values must fit the response message, hash keys must name a scalar
// request field, validators must suit their field, and generated Go names
// must not clash.
package gen

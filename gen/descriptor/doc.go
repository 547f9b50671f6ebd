// Package descriptor encodes the google.protobuf descriptor messages of
// google/protobuf/descriptor.proto that describe a yrpc schema package:
// FileDescriptorProto with its messages (and map entries), fields, proto3
// optional oneofs, enums, services, methods (streams included) and the
// options that `yrpcc proto` writes (packed, deprecated, map_entry,
// idempotency_level). It holds only the fields that protoc fills for such
// a file without source info, and encodes them with yrpc's codec the way
// protoc serializes them: fields in number order, proto2 presence (a field
// is written when set, whatever its value). So the bytes that Marshal
// returns for the descriptor of a .proto file are the bytes of protoc
// --descriptor_set_out for it, without protobuf-go.
//
// The generator (package gen) builds a File from a spec, and generated code
// embeds its encoding for gRPC server reflection. The types are plain data;
// their zero values are empty descriptors, and Marshal is safe for
// concurrent use on a File that nothing modifies.
package descriptor

package rt

import (
	"fmt"
	"slices"

	"github.com/yrpc/yrpc/rt/internal/grpcwire"
)

// reflectIndex is what server reflection answers from: the files it
// serves (the registered services' FileDescriptors and the built-in
// files they and the built-in services need) and the symbols they
// define. Built once, then only read.
type reflectIndex struct {
	files    map[string]*reflectFile // by file name, "users.proto"
	symbols  map[string]string       // full name ("users.Users.Get") to file name
	messages map[string]bool         // full names of the messages
	services []string                // list_services' answer, sorted
}

// reflectFile is one file of a reflectIndex.
type reflectFile struct {
	desc []byte   // the encoded FileDescriptorProto
	deps []string // the files it imports
}

// maxDescriptorDepth bounds how deeply messages nest in a descriptor.
const maxDescriptorDepth = 100

// newReflectIndex indexes the built-in files, then the descriptors of
// services (a file that an earlier one already named is skipped), and
// lists services and the built-in services.
func newReflectIndex(services []*ServiceDesc, builtin []string) (*reflectIndex, error) {
	x := &reflectIndex{files: make(map[string]*reflectFile), symbols: make(map[string]string), messages: make(map[string]bool)}
	for _, desc := range reflectBuiltinFiles() {
		if err := x.addFile([]byte(desc)); err != nil {
			return nil, fmt.Errorf("rt: reflection: a built-in file: %w", err)
		}
	}
	for _, sd := range services {
		x.services = append(x.services, sd.Name)
		if sd.FileDescriptor == nil {
			continue
		}
		if err := x.addFile(sd.FileDescriptor); err != nil {
			return nil, fmt.Errorf("rt: reflection: the FileDescriptor of %q: %w", sd.Name, err)
		}
	}
	x.services = append(x.services, builtin...)
	slices.Sort(x.services)
	x.services = slices.Compact(x.services)
	return x, nil
}

// descParts decodes the descriptor message b, of type
// google.protobuf.<what>: its name (field 1, which every descriptor but
// a file's package has) and its length-delimited fields by number.
func descParts(b []byte, what string) (string, map[int32][][]byte, error) {
	parts := make(map[int32][][]byte)
	err := grpcwire.Fields(b, "google.protobuf."+what, func(num int32, _ uint64, p []byte) error {
		if p != nil {
			parts[num] = append(parts[num], p)
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	if n := len(parts[1]); n == 0 || len(parts[1][n-1]) == 0 {
		return "", nil, fmt.Errorf("a %s without a name", what)
	}
	return string(parts[1][len(parts[1])-1]), parts, nil
}

// addFile indexes the FileDescriptorProto desc:
//
//	string name = 1; string package = 2; repeated string dependency = 3;
//	repeated DescriptorProto message_type = 4;
//	repeated EnumDescriptorProto enum_type = 5;
//	repeated ServiceDescriptorProto service = 6;
func (x *reflectIndex) addFile(desc []byte) error {
	file, f, err := descParts(desc, "FileDescriptorProto")
	if err != nil {
		return err
	}
	if x.files[file] != nil {
		return nil
	}
	rf := &reflectFile{desc: desc}
	for _, d := range f[3] {
		rf.deps = append(rf.deps, string(d))
	}
	x.files[file] = rf
	scope := ""
	if len(f[2]) > 0 {
		scope = string(f[2][len(f[2])-1]) + "."
	}
	for _, m := range f[4] {
		if err := x.addMessage(file, scope, m, 0); err != nil {
			return err
		}
	}
	for _, e := range f[5] {
		if err := x.addEnum(file, scope, e); err != nil {
			return err
		}
	}
	for _, s := range f[6] {
		if err := x.addService(file, scope, s); err != nil {
			return err
		}
	}
	return nil
}

// define records that file defines the symbol name; the first file to
// define a name keeps it.
func (x *reflectIndex) define(name, file string) {
	if _, ok := x.symbols[name]; !ok {
		x.symbols[name] = file
	}
}

// addMembers defines scope+name for each of the descriptors ps (fields,
// oneofs, enum values, methods), named what.
func (x *reflectIndex) addMembers(file, scope string, ps [][]byte, what string) error {
	for _, p := range ps {
		name, _, err := descParts(p, what)
		if err != nil {
			return err
		}
		x.define(scope+name, file)
	}
	return nil
}

// addMessage indexes the DescriptorProto b of scope, its fields, oneofs,
// nested messages and enums:
//
//	string name = 1; repeated FieldDescriptorProto field = 2;
//	repeated DescriptorProto nested_type = 3;
//	repeated EnumDescriptorProto enum_type = 4;
//	repeated OneofDescriptorProto oneof_decl = 8;
func (x *reflectIndex) addMessage(file, scope string, b []byte, depth int) error {
	if depth > maxDescriptorDepth {
		return fmt.Errorf("messages nested more than %d deep", maxDescriptorDepth)
	}
	name, m, err := descParts(b, "DescriptorProto")
	if err != nil {
		return err
	}
	full := scope + name
	x.define(full, file)
	x.messages[full] = true
	if err := x.addMembers(file, full+".", m[2], "FieldDescriptorProto"); err != nil {
		return err
	}
	if err := x.addMembers(file, full+".", m[8], "OneofDescriptorProto"); err != nil {
		return err
	}
	for _, n := range m[3] {
		if err := x.addMessage(file, full+".", n, depth+1); err != nil {
			return err
		}
	}
	for _, e := range m[4] {
		if err := x.addEnum(file, full+".", e); err != nil {
			return err
		}
	}
	return nil
}

// addEnum indexes the EnumDescriptorProto b of scope and its values,
// which protobuf scopes beside the enum, not inside it:
//
//	string name = 1; repeated EnumValueDescriptorProto value = 2;
func (x *reflectIndex) addEnum(file, scope string, b []byte) error {
	name, e, err := descParts(b, "EnumDescriptorProto")
	if err != nil {
		return err
	}
	x.define(scope+name, file)
	return x.addMembers(file, scope, e[2], "EnumValueDescriptorProto")
}

// addService indexes the ServiceDescriptorProto b of scope and its
// methods:
//
//	string name = 1; repeated MethodDescriptorProto method = 2;
func (x *reflectIndex) addService(file, scope string, b []byte) error {
	name, s, err := descParts(b, "ServiceDescriptorProto")
	if err != nil {
		return err
	}
	x.define(scope+name, file)
	return x.addMembers(file, scope+name+".", s[2], "MethodDescriptorProto")
}

// answer answers req. sent holds the files already sent on the stream:
// a file is sent with those of its imports (direct or not) not sent yet,
// as gRPC's reflection clients expect.
func (x *reflectIndex) answer(req *reflectRequest, sent map[string]bool) (*reflectResponse, error) {
	resp := &reflectResponse{host: req.host, req: req}
	notFound := func(format string, args ...any) (*reflectResponse, error) {
		resp.kind, resp.code, resp.message = reflectError, NotFound, fmt.Sprintf(format, args...)
		return resp, nil
	}
	switch req.kind {
	case reflectFileByName:
		if x.files[req.arg] == nil {
			return notFound("rt: reflection: no file %q", req.arg)
		}
		resp.kind, resp.files = reflectFiles, x.withImports(req.arg, sent)
	case reflectSymbol:
		file, ok := x.symbols[req.arg]
		if !ok {
			return notFound("rt: reflection: no symbol %q", req.arg)
		}
		resp.kind, resp.files = reflectFiles, x.withImports(file, sent)
	case reflectExtension:
		return notFound("rt: reflection: no extension %d of %q: this server's files declare no extensions", req.ext, req.arg)
	case reflectExtNumbers:
		if !x.messages[req.arg] {
			return notFound("rt: reflection: no message %q", req.arg)
		}
		resp.kind, resp.typeName = reflectExtensions, req.arg // and no extension numbers
	case reflectListServices:
		resp.kind, resp.services = reflectServices, x.services
	default:
		return nil, Errorf(InvalidArgument, "rt: reflection: the request asks nothing this server knows (field %d)", req.kind)
	}
	return resp, nil
}

// withImports returns the descriptor of file, then those of the files it
// imports, directly or not, that the index has and sent lacks; it adds
// them all to sent.
func (x *reflectIndex) withImports(file string, sent map[string]bool) [][]byte {
	out := [][]byte{x.files[file].desc}
	sent[file] = true
	seen := map[string]bool{file: true}
	for queue := slices.Clone(x.files[file].deps); len(queue) > 0; {
		name := queue[0]
		queue = queue[1:]
		f := x.files[name]
		if f == nil || seen[name] {
			continue
		}
		seen[name] = true
		if !sent[name] {
			out = append(out, f.desc)
			sent[name] = true
		}
		queue = append(queue, f.deps...)
	}
	return out
}

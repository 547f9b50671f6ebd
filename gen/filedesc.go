package gen

import (
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/yrpc/yrpc/gen/descriptor"
	"github.com/yrpc/yrpc/gen/names"
)

// descTypes maps field kinds to descriptor types; time and duration are
// the google.protobuf messages in wellKnown.
var descTypes = map[Kind]descriptor.Type{
	KindBool: descriptor.TypeBool, KindInt32: descriptor.TypeInt32, KindInt64: descriptor.TypeInt64,
	KindUint32: descriptor.TypeUint32, KindUint64: descriptor.TypeUint64, KindSint32: descriptor.TypeSint32,
	KindSint64: descriptor.TypeSint64, KindFixed32: descriptor.TypeFixed32, KindFixed64: descriptor.TypeFixed64,
	KindSfixed32: descriptor.TypeSfixed32, KindSfixed64: descriptor.TypeSfixed64, KindFloat32: descriptor.TypeFloat,
	KindFloat64: descriptor.TypeDouble, KindString: descriptor.TypeString, KindBytes: descriptor.TypeBytes,
	KindEnum: descriptor.TypeEnum, KindMessage: descriptor.TypeMessage, KindTime: descriptor.TypeMessage,
	KindDuration: descriptor.TypeMessage,
}

// wellKnown are the google.protobuf types that stand for field kinds and
// oneway responses, and the files that declare them.
var wellKnown = map[Kind]struct{ name, file string }{
	KindTime:     {".google.protobuf.Timestamp", "google/protobuf/timestamp.proto"},
	KindDuration: {".google.protobuf.Duration", "google/protobuf/duration.proto"},
	"":           {".google.protobuf.Empty", "google/protobuf/empty.proto"}, // oneway responses
}

// FileDescriptor returns the google.protobuf.FileDescriptorProto of
// spec's package in the protobuf binary format: what protoc
// --descriptor_set_out gives for the .proto file that package gen/proto
// writes for spec, saved as names.ProtoFile(spec.Package) ("users.proto").
// Generate embeds it in the generated package. It returns an *Error when
// spec does not pass Check.
func FileDescriptor(spec *Spec) ([]byte, error) {
	if ps := Check(spec); ps != nil {
		return nil, &Error{Pkg: "gen", Problems: ps}
	}
	return fileDescriptor(spec, spec.Package).Marshal(), nil
}

// fileDescriptor describes the checked spec as protobuf package pkg, in
// the order of the .proto file that gen/proto writes: messages and
// services in declaration order, enums in the order of their first use,
// the imports sorted by file name. Types are named by their protobuf names
// (Message.ProtobufName).
func fileDescriptor(spec *Spec, pkg string) *descriptor.File {
	f := &descriptor.File{Name: names.ProtoFile(pkg), Package: pkg, Syntax: "proto3"}
	b := &descBuilder{pkg: pkg, protoNames: spec.ProtobufNames(), uses: map[Kind]bool{}}
	seen := map[string]bool{}
	for _, m := range spec.Messages {
		f.Messages = append(f.Messages, b.message(m))
		for _, fl := range m.Fields {
			if e := fl.Enum; e != nil && !seen[e.Name] {
				seen[e.Name] = true
				f.Enums = append(f.Enums, enumDescriptor(e))
			}
		}
	}
	for _, s := range spec.Services {
		sd := &descriptor.Service{Name: s.Name}
		for _, m := range s.Methods {
			md := &descriptor.Method{
				Name: m.Name, InputType: b.messageRef(m.Request), OutputType: b.messageRef(m.Response),
				Idempotent: m.Idempotent, ClientStreaming: m.Kind.ClientStreams(), ServerStreaming: m.Kind.ServerStreams(),
			}
			if m.Kind == MethodOneway {
				md.OutputType = wellKnown[""].name
				b.uses[""] = true
			}
			sd.Methods = append(sd.Methods, md)
		}
		f.Services = append(f.Services, sd)
	}
	for _, k := range []Kind{KindDuration, "", KindTime} { // by file name
		if b.uses[k] {
			f.Dependencies = append(f.Dependencies, wellKnown[k].file)
		}
	}
	return f
}

// descBuilder builds the descriptors of one package.
type descBuilder struct {
	pkg        string
	protoNames map[string]string // Go name of a message -> its protobuf name
	uses       map[Kind]bool     // the well-known types used so far
}

// typeRef is the full name of the package's type name.
func (b *descBuilder) typeRef(name string) string { return "." + b.pkg + "." + name }

// messageRef is the full name of the message whose Go name is name.
func (b *descBuilder) messageRef(name string) string { return b.typeRef(b.protoNames[name]) }

// message describes m, noting the well-known types its fields use.
func (b *descBuilder) message(m *Message) *descriptor.Message {
	md := &descriptor.Message{Name: m.ProtobufName()}
	for _, f := range m.Fields {
		fd := &descriptor.Field{Name: f.Name, Number: f.Number, Label: descriptor.LabelOptional, JSONName: names.JSONName(f.Name)}
		fd.Type, fd.TypeName = b.valueType(f)
		switch {
		case f.MapKey != "":
			entry := names.MapEntry(f.Name)
			fd.Label, fd.Type, fd.TypeName = descriptor.LabelRepeated, descriptor.TypeMessage, b.typeRef(md.Name+"."+entry)
			key := &descriptor.Field{Name: "key", Number: 1, Label: descriptor.LabelOptional, Type: descTypes[f.MapKey], JSONName: "key"}
			val := &descriptor.Field{Name: "value", Number: 2, Label: descriptor.LabelOptional, JSONName: "value"}
			val.Type, val.TypeName = b.valueType(f)
			md.Nested = append(md.Nested, &descriptor.Message{Name: entry, Fields: []*descriptor.Field{key, val}, MapEntry: true})
		case f.List:
			fd.Label = descriptor.LabelRepeated
		case f.Optional && f.Kind != KindMessage:
			// proto3 optional: a synthetic oneof of its own, named as
			// protoc names it. Field names start with a letter, so "_"
			// plus the name clashes with no field or other oneof.
			i := int32(len(md.Oneofs))
			fd.OneofIndex, fd.Proto3Optional = &i, true
			md.Oneofs = append(md.Oneofs, "_"+f.Name)
		}
		if f.Unpacked {
			packed := false
			fd.Packed = &packed
		}
		fd.Deprecated = f.Deprecated
		md.Fields = append(md.Fields, fd)
	}
	for _, n := range m.Reserved {
		md.Reserved = append(md.Reserved, descriptor.Range{Start: n, End: n + 1})
	}
	return md
}

// valueType is the type of one value of f: its element, or its map value.
func (b *descBuilder) valueType(f *Field) (descriptor.Type, string) {
	switch f.Kind {
	case KindMessage:
		return descriptor.TypeMessage, b.messageRef(f.Message)
	case KindEnum:
		return descriptor.TypeEnum, b.typeRef(f.Enum.Name)
	case KindTime, KindDuration:
		b.uses[f.Kind] = true
		return descriptor.TypeMessage, wellKnown[f.Kind].name
	}
	return descTypes[f.Kind], ""
}

func enumDescriptor(e *Enum) *descriptor.Enum {
	ed := &descriptor.Enum{Name: e.Name}
	for _, v := range e.Values {
		ed.Values = append(ed.Values, descriptor.EnumValue{Name: names.ProtoEnumValue(e.Name, v.Name), Number: v.Number})
	}
	return ed
}

// descriptorFile is the generated file that embeds the package's file
// descriptor: "users.proto.yrpc.go" ("shop_linux_proto.proto.yrpc.go" for
// a package that names.FileStem changes). No message, enum or service file
// can have its name, which has a dot before ".yrpc.go".
func descriptorFile(pkg string) string {
	name := names.ProtoFile(pkg) + ".yrpc.go"
	stem, rest, _ := strings.Cut(name, ".")
	return names.FileStem(stem, "proto") + "." + rest
}

// genFileDescriptor emits the package's file descriptor and its accessor.
func (m *model) genFileDescriptor(f *jen.File, desc []byte) {
	file := names.ProtoFile(m.pkg)
	f.Comment("FileDescriptor returns the google.protobuf.FileDescriptorProto of")
	f.Commentf("%s, the file that `yrpcc proto` writes for this package, in the", file)
	f.Comment("protobuf binary format: what gRPC server reflection serves. Each call")
	f.Comment("returns a new copy.")
	f.Func().Id("FileDescriptor").Params().Index().Byte().Block(
		jen.Return(jen.Append(jen.Index().Byte().Call(jen.Nil()), jen.Id("fileDescriptor").Op("..."))))
	f.Line()
	f.Commentf("fileDescriptor is the FileDescriptorProto of %s; the service", file)
	f.Comment("descriptors share it. Nothing modifies it.")
	lit := jen.Lit("")
	const chunk = 40
	for len(desc) > 0 {
		n := min(chunk, len(desc))
		lit.Op("+").Line().Op(strconv.QuoteToASCII(string(desc[:n])))
		desc = desc[n:]
	}
	f.Var().Id("fileDescriptor").Op("=").Index().Byte().Call(lit)
}

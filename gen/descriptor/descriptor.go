package descriptor

import "github.com/yrpc/yrpc/rt/codec"

// File is a google.protobuf.FileDescriptorProto.
type File struct {
	Name         string // "users.proto"
	Package      string // "users"; "" writes none
	Dependencies []string
	Messages     []*Message
	Enums        []*Enum
	Services     []*Service
	Syntax       string // "proto3"; "" writes none
}

// Message is a google.protobuf.DescriptorProto.
type Message struct {
	Name     string
	Fields   []*Field
	Nested   []*Message // map entry types, in the order of their fields
	MapEntry bool       // MessageOptions.map_entry
	Oneofs   []string   // the names of the oneofs, synthetic ones included
	Reserved []Range
}

// Range is a DescriptorProto.ReservedRange: Start to End, End excluded.
type Range struct{ Start, End int32 }

// Field is a google.protobuf.FieldDescriptorProto.
type Field struct {
	Name     string
	Number   int32
	Label    Label
	Type     Type
	TypeName string // ".users.Address" for messages and enums, else ""
	// Packed, when not nil, is FieldOptions.packed.
	Packed     *bool
	Deprecated bool // FieldOptions.deprecated
	// OneofIndex, when not nil, is the index of the field's oneof.
	OneofIndex     *int32
	JSONName       string
	Proto3Optional bool
}

// Label is a FieldDescriptorProto.Label.
type Label int32

// Labels.
const (
	LabelOptional Label = 1
	LabelRepeated Label = 3
)

// Type is a FieldDescriptorProto.Type.
type Type int32

// Field types.
const (
	TypeDouble   Type = 1
	TypeFloat    Type = 2
	TypeInt64    Type = 3
	TypeUint64   Type = 4
	TypeInt32    Type = 5
	TypeFixed64  Type = 6
	TypeFixed32  Type = 7
	TypeBool     Type = 8
	TypeString   Type = 9
	TypeMessage  Type = 11
	TypeBytes    Type = 12
	TypeUint32   Type = 13
	TypeEnum     Type = 14
	TypeSfixed32 Type = 15
	TypeSfixed64 Type = 16
	TypeSint32   Type = 17
	TypeSint64   Type = 18
)

// Enum is a google.protobuf.EnumDescriptorProto.
type Enum struct {
	Name   string
	Values []EnumValue
}

// EnumValue is a google.protobuf.EnumValueDescriptorProto.
type EnumValue struct {
	Name   string
	Number int32
}

// Service is a google.protobuf.ServiceDescriptorProto.
type Service struct {
	Name    string
	Methods []*Method
}

// Method is a google.protobuf.MethodDescriptorProto.
type Method struct {
	Name       string
	InputType  string // ".users.GetUser"
	OutputType string
	// Idempotent sets MethodOptions.idempotency_level to IDEMPOTENT.
	Idempotent      bool
	ClientStreaming bool
	ServerStreaming bool
}

// idempotent is MethodOptions.IdempotencyLevel IDEMPOTENT.
const idempotent = 2

// Marshal returns f in the protobuf binary format, as protoc serializes it.
func (f *File) Marshal() []byte {
	var e enc
	e.str(1, f.Name)
	e.str(2, f.Package)
	for _, d := range f.Dependencies {
		e.str(3, d)
	}
	for _, m := range f.Messages {
		e.msg(4, m.marshal())
	}
	for _, en := range f.Enums {
		e.msg(5, en.marshal())
	}
	for _, s := range f.Services {
		e.msg(6, s.marshal())
	}
	e.str(12, f.Syntax)
	return e
}

func (m *Message) marshal() enc {
	var e enc
	e.str(1, m.Name)
	for _, f := range m.Fields {
		e.msg(2, f.marshal())
	}
	for _, n := range m.Nested {
		e.msg(3, n.marshal())
	}
	if m.MapEntry {
		var opts enc
		opts.flag(7, true) // map_entry
		e.msg(7, opts)
	}
	for _, o := range m.Oneofs {
		var od enc
		od.str(1, o)
		e.msg(8, od)
	}
	for _, r := range m.Reserved {
		var rd enc
		rd.varint(1, uint64(r.Start))
		rd.varint(2, uint64(r.End))
		e.msg(9, rd)
	}
	return e
}

func (f *Field) marshal() enc {
	var e enc
	e.str(1, f.Name)
	e.varint(3, uint64(int64(f.Number)))
	e.varint(4, uint64(f.Label))
	e.varint(5, uint64(f.Type))
	e.str(6, f.TypeName)
	if f.Packed != nil || f.Deprecated {
		var opts enc
		if f.Packed != nil {
			opts.flag(2, *f.Packed)
		}
		if f.Deprecated {
			opts.flag(3, true)
		}
		e.msg(8, opts)
	}
	if f.OneofIndex != nil {
		e.varint(9, uint64(int64(*f.OneofIndex)))
	}
	e.str(10, f.JSONName)
	if f.Proto3Optional {
		e.flag(17, true)
	}
	return e
}

func (en *Enum) marshal() enc {
	var e enc
	e.str(1, en.Name)
	for _, v := range en.Values {
		var vd enc
		vd.str(1, v.Name)
		vd.varint(2, uint64(int64(v.Number)))
		e.msg(2, vd)
	}
	return e
}

func (s *Service) marshal() enc {
	var e enc
	e.str(1, s.Name)
	for _, m := range s.Methods {
		var md enc
		md.str(1, m.Name)
		md.str(2, m.InputType)
		md.str(3, m.OutputType)
		if m.Idempotent {
			var opts enc
			opts.varint(34, idempotent)
			md.msg(4, opts)
		}
		if m.ClientStreaming {
			md.flag(5, true)
		}
		if m.ServerStreaming {
			md.flag(6, true)
		}
		e.msg(2, md)
	}
	return e
}

// enc is an encoding under way. Its methods append one field each.
type enc []byte

// str appends string field num, unless s is "".
func (e *enc) str(num int32, s string) {
	if s != "" {
		*e = codec.AppendString(codec.AppendVarint(*e, codec.Tag(num, codec.BytesType)), s)
	}
}

// msg appends message field num holding the encoding m.
func (e *enc) msg(num int32, m enc) {
	*e = codec.AppendBytes(codec.AppendVarint(*e, codec.Tag(num, codec.BytesType)), m)
}

// varint appends varint field num.
func (e *enc) varint(num int32, v uint64) {
	*e = codec.AppendVarint(codec.AppendVarint(*e, codec.Tag(num, codec.VarintType)), v)
}

// flag appends bool field num.
func (e *enc) flag(num int32, v bool) { e.varint(num, codec.EncodeBool(v)) }

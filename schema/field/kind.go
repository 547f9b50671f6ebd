package field

import "strconv"

// Type is a field's value kind, for List and Map. Its zero value is
// invalid. Message types are given by reference (Address.Type) instead.
type Type uint8

// Value kinds.
const (
	TypeBool     Type = iota + 1 // bool
	TypeInt32                    // int32, varint
	TypeInt64                    // int64, varint
	TypeUint32                   // uint32, varint
	TypeUint64                   // uint64, varint
	TypeSint32                   // int32, zigzag varint
	TypeSint64                   // int64, zigzag varint
	TypeFixed32                  // uint32, 4 bytes
	TypeFixed64                  // uint64, 8 bytes
	TypeSfixed32                 // int32, 4 bytes
	TypeSfixed64                 // int64, 8 bytes
	TypeFloat32                  // float32
	TypeFloat64                  // float64
	TypeString                   // string
	TypeBytes                    // []byte
	TypeEnum                     // enum; give the values with Values/Value
	TypeTime                     // time.Time
	TypeDuration                 // time.Duration
)

var typeNames = [...]string{
	TypeBool: "bool", TypeInt32: "int32", TypeInt64: "int64",
	TypeUint32: "uint32", TypeUint64: "uint64", TypeSint32: "sint32",
	TypeSint64: "sint64", TypeFixed32: "fixed32", TypeFixed64: "fixed64",
	TypeSfixed32: "sfixed32", TypeSfixed64: "sfixed64", TypeFloat32: "float32",
	TypeFloat64: "float64", TypeString: "string", TypeBytes: "bytes",
	TypeEnum: "enum", TypeTime: "time", TypeDuration: "duration",
}

var typeConsts = [...]string{
	TypeBool: "TypeBool", TypeInt32: "TypeInt32", TypeInt64: "TypeInt64",
	TypeUint32: "TypeUint32", TypeUint64: "TypeUint64", TypeSint32: "TypeSint32",
	TypeSint64: "TypeSint64", TypeFixed32: "TypeFixed32", TypeFixed64: "TypeFixed64",
	TypeSfixed32: "TypeSfixed32", TypeSfixed64: "TypeSfixed64", TypeFloat32: "TypeFloat32",
	TypeFloat64: "TypeFloat64", TypeString: "TypeString", TypeBytes: "TypeBytes",
	TypeEnum: "TypeEnum", TypeTime: "TypeTime", TypeDuration: "TypeDuration",
}

// String returns the kind's name as in gen.Kind, e.g. "sint64".
func (t Type) String() string {
	if t.valid() {
		return typeNames[t]
	}
	return "invalid"
}

// GoString returns the constant's source form, e.g. "field.TypeSint64".
func (t Type) GoString() string {
	if t.valid() {
		return "field." + typeConsts[t]
	}
	return "field.Type(" + strconv.Itoa(int(t)) + ")"
}

func (t Type) valid() bool { return t >= TypeBool && t <= TypeDuration }

// numeric reports whether Range applies to values of kind t.
func numeric(kind string) bool {
	switch kind {
	case "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32",
		"fixed64", "sfixed32", "sfixed64", "float32", "float64":
		return true
	}
	return false
}

// packable reports whether a list of kind can use the packed encoding.
func packable(kind string) bool {
	return numeric(kind) || kind == "bool" || kind == "enum"
}

// mapKey reports whether kind may be a map key (protobuf's rule: integral
// kinds, bool and string).
func mapKey(kind string) bool {
	return kind != "float32" && kind != "float64" && (numeric(kind) || kind == "bool" || kind == "string")
}

package field

import (
	"fmt"

	"github.com/yrpc/yrpc/schema"
)

// Bool declares a bool field.
func Bool(name string, number int32) *Builder { return scalar(TypeBool, "Bool", name, number) }

// Int32 declares an int32 field (varint; negative values take 10 bytes,
// prefer Sint32 for them).
func Int32(name string, number int32) *Builder { return scalar(TypeInt32, "Int32", name, number) }

// Int64 declares an int64 field (varint).
func Int64(name string, number int32) *Builder { return scalar(TypeInt64, "Int64", name, number) }

// Uint32 declares a uint32 field (varint).
func Uint32(name string, number int32) *Builder { return scalar(TypeUint32, "Uint32", name, number) }

// Uint64 declares a uint64 field (varint).
func Uint64(name string, number int32) *Builder { return scalar(TypeUint64, "Uint64", name, number) }

// Sint32 declares an int32 field with zigzag encoding (small negative
// values stay small).
func Sint32(name string, number int32) *Builder { return scalar(TypeSint32, "Sint32", name, number) }

// Sint64 declares an int64 field with zigzag encoding.
func Sint64(name string, number int32) *Builder { return scalar(TypeSint64, "Sint64", name, number) }

// Fixed32 declares a uint32 field that always takes 4 bytes.
func Fixed32(name string, number int32) *Builder { return scalar(TypeFixed32, "Fixed32", name, number) }

// Fixed64 declares a uint64 field that always takes 8 bytes.
func Fixed64(name string, number int32) *Builder { return scalar(TypeFixed64, "Fixed64", name, number) }

// Sfixed32 declares an int32 field that always takes 4 bytes.
func Sfixed32(name string, number int32) *Builder {
	return scalar(TypeSfixed32, "Sfixed32", name, number)
}

// Sfixed64 declares an int64 field that always takes 8 bytes.
func Sfixed64(name string, number int32) *Builder {
	return scalar(TypeSfixed64, "Sfixed64", name, number)
}

// Float32 declares a float32 field (protobuf float).
func Float32(name string, number int32) *Builder { return scalar(TypeFloat32, "Float32", name, number) }

// Float64 declares a float64 field (protobuf double).
func Float64(name string, number int32) *Builder { return scalar(TypeFloat64, "Float64", name, number) }

// String declares a string field.
func String(name string, number int32) *Builder { return scalar(TypeString, "String", name, number) }

// Bytes declares a []byte field.
func Bytes(name string, number int32) *Builder { return scalar(TypeBytes, "Bytes", name, number) }

// Time declares a time.Time field, encoded as google.protobuf.Timestamp.
func Time(name string, number int32) *Builder { return scalar(TypeTime, "Time", name, number) }

// Duration declares a time.Duration field, encoded as
// google.protobuf.Duration.
func Duration(name string, number int32) *Builder {
	return scalar(TypeDuration, "Duration", name, number)
}

// Enum declares an enum field; give its values with Values or Value. The
// enum's Go type is named <Message><Field> (UserRole) unless EnumName says
// otherwise.
func Enum(name string, number int32) *Builder {
	b := scalar(TypeEnum, "Enum", name, number)
	b.desc.Enum = &schema.EnumDescriptor{}
	return b
}

// Message declares a nested message field; ref is the referenced message's
// Type method expression, e.g. Address.Type. A message field always has
// presence (a pointer in Go).
func Message(name string, number int32, ref any) *Builder {
	b := newBuilder(1, "", name, number, fmt.Sprintf("field.Message(%q, %d, %s)", name, number, schema.RefString(ref)))
	b.setRef(ref)
	return b
}

// Bools declares a list of bools.
func Bools(name string, number int32) *Builder { return list(TypeBool, "Bools", name, number) }

// Int32s declares a list of int32.
func Int32s(name string, number int32) *Builder { return list(TypeInt32, "Int32s", name, number) }

// Int64s declares a list of int64.
func Int64s(name string, number int32) *Builder { return list(TypeInt64, "Int64s", name, number) }

// Uint32s declares a list of uint32.
func Uint32s(name string, number int32) *Builder { return list(TypeUint32, "Uint32s", name, number) }

// Uint64s declares a list of uint64.
func Uint64s(name string, number int32) *Builder { return list(TypeUint64, "Uint64s", name, number) }

// Sint32s declares a list of zigzag int32.
func Sint32s(name string, number int32) *Builder { return list(TypeSint32, "Sint32s", name, number) }

// Sint64s declares a list of zigzag int64.
func Sint64s(name string, number int32) *Builder { return list(TypeSint64, "Sint64s", name, number) }

// Fixed32s declares a list of fixed32.
func Fixed32s(name string, number int32) *Builder { return list(TypeFixed32, "Fixed32s", name, number) }

// Fixed64s declares a list of fixed64.
func Fixed64s(name string, number int32) *Builder { return list(TypeFixed64, "Fixed64s", name, number) }

// Sfixed32s declares a list of sfixed32.
func Sfixed32s(name string, number int32) *Builder {
	return list(TypeSfixed32, "Sfixed32s", name, number)
}

// Sfixed64s declares a list of sfixed64.
func Sfixed64s(name string, number int32) *Builder {
	return list(TypeSfixed64, "Sfixed64s", name, number)
}

// Float32s declares a list of float32.
func Float32s(name string, number int32) *Builder { return list(TypeFloat32, "Float32s", name, number) }

// Float64s declares a list of float64.
func Float64s(name string, number int32) *Builder { return list(TypeFloat64, "Float64s", name, number) }

// Strings declares a list of strings.
func Strings(name string, number int32) *Builder { return list(TypeString, "Strings", name, number) }

// BytesList declares a list of []byte.
func BytesList(name string, number int32) *Builder {
	return list(TypeBytes, "BytesList", name, number)
}

// Times declares a list of time.Time.
func Times(name string, number int32) *Builder { return list(TypeTime, "Times", name, number) }

// Durations declares a list of time.Duration.
func Durations(name string, number int32) *Builder {
	return list(TypeDuration, "Durations", name, number)
}

// Enums declares a list of enum values; give the values with Values or
// Value.
func Enums(name string, number int32) *Builder {
	b := list(TypeEnum, "Enums", name, number)
	b.desc.Enum = &schema.EnumDescriptor{}
	return b
}

// Messages declares a list of messages; ref is the element message's Type
// method expression, e.g. Address.Type.
func Messages(name string, number int32, ref any) *Builder {
	b := newBuilder(1, "", name, number, fmt.Sprintf("field.Messages(%q, %d, %s)", name, number, schema.RefString(ref)))
	b.desc.List = true
	b.setRef(ref)
	return b
}

// List declares a list whose elements are elem: a Type (field.TypeString)
// or a message reference (Address.Type). For TypeEnum, give the values with
// Values or Value.
func List(name string, number int32, elem any) *Builder {
	b := newBuilder(1, "", name, number, fmt.Sprintf("field.List(%q, %d, %s)", name, number, typeString(elem)))
	b.desc.List = true
	b.setValue(elem)
	return b
}

// Map declares a map from key (an integer Type, TypeBool or TypeString) to
// value (a Type or a message reference such as Address.Type). For a
// TypeEnum value, give the values with Values or Value.
func Map(name string, number int32, key Type, value any) *Builder {
	b := newBuilder(1, "", name, number, fmt.Sprintf("field.Map(%q, %d, %s, %s)", name, number, key.GoString(), typeString(value)))
	if !key.valid() || !mapKey(key.String()) {
		b.fail("", "map key must be an integer type, TypeBool or TypeString, not %#v", key)
		b.desc.MapKey = "invalid"
	} else {
		b.desc.MapKey = key.String()
	}
	b.setValue(value)
	return b
}

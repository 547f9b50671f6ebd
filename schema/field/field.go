package field

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/yrpc/yrpc/schema"
)

// maxNumber is the largest protobuf field number, 2^29-1.
const maxNumber = 1<<29 - 1

// Builder builds one field declaration; the constructors of this package
// return it and its modifiers chain. Its zero value is not a field: use the
// constructors. A Builder is not safe for concurrent use; schema methods
// build a fresh one per call.
type Builder struct {
	desc schema.FieldDescriptor
	call string // the constructor call, e.g. `field.String("name", 2)`
}

// Descriptor returns the field's descriptor, with the mistakes found so far
// in Errors.
func (b *Builder) Descriptor() *schema.FieldDescriptor { return &b.desc }

// newBuilder starts a field of the given kind. skip counts the frames
// between the user's call and newBuilder (1 for a direct constructor).
func newBuilder(skip int, kind, name string, number int32, call string) *Builder {
	b := &Builder{call: call}
	b.desc = schema.FieldDescriptor{Name: name, Number: number, Kind: kind}
	if _, file, line, ok := runtime.Caller(skip + 1); ok {
		b.desc.Pos = fmt.Sprintf("%s:%d", file, line)
	}
	switch {
	case name == "":
		b.fail("", "name must not be empty")
	case !isIdent(name):
		b.fail("", "name must be an identifier like \"created_at\"")
	}
	switch {
	case number < 1:
		b.fail("", "wire number must be >= 1")
	case number > maxNumber:
		b.fail("", "wire number must be <= 536870911")
	case number >= 19000 && number <= 19999:
		b.fail("", "wire numbers 19000-19999 are reserved by protobuf")
	}
	return b
}

// scalar starts a plain field whose constructor is named fn.
func scalar(kind Type, fn, name string, number int32) *Builder {
	return newBuilder(2, kind.String(), name, number, fmt.Sprintf("field.%s(%q, %d)", fn, name, number))
}

// list starts a list field whose constructor is named fn.
func list(kind Type, fn, name string, number int32) *Builder {
	b := newBuilder(2, kind.String(), name, number, fmt.Sprintf("field.%s(%q, %d)", fn, name, number))
	b.desc.List = true
	return b
}

// fail records a mistake in the modifier call mod (e.g. "MaxLen(-1)").
func (b *Builder) fail(mod, format string, args ...any) *Builder {
	call := b.call
	if mod != "" {
		call += "." + mod
	}
	b.desc.Errors = append(b.desc.Errors, &schema.BuildError{Call: call, Msg: fmt.Sprintf(format, args...)})
	return b
}

// setRef resolves a message reference for the value (or element) type.
func (b *Builder) setRef(ref any) {
	name, pkg, err := schema.Ref(ref)
	if err != nil {
		b.fail("", "%v", err)
		return
	}
	b.desc.Kind = "message"
	b.desc.Message = name
	b.desc.MessagePkg = pkg
}

// setValue sets the value kind from a Type or a message reference.
func (b *Builder) setValue(v any) {
	switch v := v.(type) {
	case Type:
		if !v.valid() {
			b.fail("", "invalid value type %#v", v)
			return
		}
		b.desc.Kind = v.String()
		if v == TypeEnum {
			b.desc.Enum = &schema.EnumDescriptor{}
		}
	default:
		b.setRef(v)
	}
}

// typeString is the source form of a Type or message reference argument.
func typeString(v any) string {
	if t, ok := v.(Type); ok {
		return t.GoString()
	}
	return schema.RefString(v)
}

// shape describes the field for error messages: "a list", "an int64 field".
func (b *Builder) shape() string {
	switch {
	case b.desc.List:
		return "a list"
	case b.desc.MapKey != "":
		return "a map"
	case b.desc.Kind == "":
		return "an invalid field"
	}
	k := b.desc.Kind
	if strings.IndexByte("aeiou", k[0]) >= 0 {
		return "an " + k + " field"
	}
	return "a " + k + " field"
}

// isIdent reports whether s is an ASCII identifier starting with a letter.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && (c == '_' || '0' <= c && c <= '9'):
		default:
			return false
		}
	}
	return true
}

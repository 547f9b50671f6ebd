package field

import (
	"fmt"
	"math"
	"regexp"
	"strconv"

	"github.com/yrpc/yrpc/schema"
)

// Optional gives a scalar field presence: a pointer in Go and proto3
// "optional" on the wire, so that an unset field differs from a zero one.
// Message fields always have presence; lists and maps cannot be optional.
func (b *Builder) Optional() *Builder {
	if b.desc.List || b.desc.MapKey != "" {
		return b.fail("Optional()", "%s cannot be optional", b.shape())
	}
	b.desc.Optional = true
	return b
}

// Comment sets the field's doc comment in generated code.
func (b *Builder) Comment(text string) *Builder {
	b.desc.Comment = text
	return b
}

// Deprecated marks the field deprecated in generated code and .proto output.
func (b *Builder) Deprecated() *Builder {
	b.desc.Deprecated = true
	return b
}

// Unpacked writes a list of numbers, bools or enums with one tag per
// element instead of proto3's packed form (decoders accept both).
func (b *Builder) Unpacked() *Builder {
	if !b.desc.List || !packable(b.desc.Kind) {
		return b.fail("Unpacked()", "only a list of numbers, bools or enums can be unpacked, not %s", b.shape())
	}
	b.desc.Unpacked = true
	return b
}

// sized reports whether length validators apply to the field.
func (b *Builder) sized() bool {
	return b.desc.List || b.desc.MapKey != "" || b.desc.Kind == "string" || b.desc.Kind == "bytes"
}

// MaxLen limits the length of a string (in runes), bytes, list or map.
func (b *Builder) MaxLen(n int) *Builder {
	mod := "MaxLen(" + strconv.Itoa(n) + ")"
	switch {
	case !b.sized():
		return b.fail(mod, "max length applies to strings, bytes, lists and maps, not %s", b.shape())
	case n < 1:
		return b.fail(mod, "max length must be >= 1")
	case n < b.desc.Validate.MinLen:
		return b.fail(mod, "max length is below the min length %d", b.desc.Validate.MinLen)
	}
	b.desc.Validate.MaxLen = n
	return b
}

// MinLen requires at least n runes in a string, n bytes, n list elements or
// n map entries.
func (b *Builder) MinLen(n int) *Builder {
	mod := "MinLen(" + strconv.Itoa(n) + ")"
	switch {
	case !b.sized():
		return b.fail(mod, "min length applies to strings, bytes, lists and maps, not %s", b.shape())
	case n < 0:
		return b.fail(mod, "min length must be >= 0")
	case b.desc.Validate.MaxLen > 0 && n > b.desc.Validate.MaxLen:
		return b.fail(mod, "min length is above the max length %d", b.desc.Validate.MaxLen)
	}
	b.desc.Validate.MinLen = n
	return b
}

// NotEmpty requires a non-empty string, bytes, list or map, or a present
// message.
func (b *Builder) NotEmpty() *Builder {
	if !b.sized() && b.desc.Kind != "message" {
		return b.fail("NotEmpty()", "not-empty applies to strings, bytes, lists, maps and messages, not %s", b.shape())
	}
	b.desc.Validate.NotEmpty = true
	return b
}

// Range requires a number in [min, max].
func (b *Builder) Range(min, max float64) *Builder {
	mod := fmt.Sprintf("Range(%v, %v)", min, max)
	switch {
	case b.desc.List || b.desc.MapKey != "" || !numeric(b.desc.Kind):
		return b.fail(mod, "range applies to number fields, not %s", b.shape())
	case math.IsNaN(min) || math.IsNaN(max):
		return b.fail(mod, "range bounds must be numbers")
	case math.IsInf(min, 0) || math.IsInf(max, 0):
		if b.desc.Kind == "float32" || b.desc.Kind == "float64" {
			return b.fail(mod, "range bounds must be finite; for an open end give math.MaxFloat%s", b.desc.Kind[len("float"):])
		}
		return b.fail(mod, "range bounds must be finite")
	case min > max:
		return b.fail(mod, "min is greater than max")
	}
	b.desc.Validate.Min, b.desc.Validate.Max = &min, &max
	return b
}

// Match requires a string that matches the RE2 regular expression expr
// (anchor it with ^...$ to match the whole string).
func (b *Builder) Match(expr string) *Builder {
	mod := fmt.Sprintf("Match(%q)", expr)
	if b.desc.List || b.desc.MapKey != "" || b.desc.Kind != "string" {
		return b.fail(mod, "match applies to string fields, not %s", b.shape())
	}
	if _, err := regexp.Compile(expr); err != nil {
		return b.fail(mod, "bad regexp: %v", err)
	}
	b.desc.Validate.Match = expr
	return b
}

// Values appends enum values numbered from the next free number (0 for the
// first): Values("member", "admin") gives member=0, admin=1. The first value
// is the enum's zero value.
func (b *Builder) Values(names ...string) *Builder {
	mod := fmt.Sprintf("Values(%s)", quoteAll(names))
	if b.desc.Enum == nil {
		return b.fail(mod, "values apply to enums, not %s", b.shape())
	}
	next := int32(0)
	for _, v := range b.desc.Enum.Values {
		if v.Number >= next {
			next = v.Number + 1
		}
	}
	for _, n := range names {
		if !b.enumValueOK(mod, n) {
			continue
		}
		b.desc.Enum.Values = append(b.desc.Enum.Values, schema.EnumValueDescriptor{Name: n, Number: next})
		next++
	}
	return b
}

// Value appends one enum value with an explicit number; the zero value must
// be numbered 0.
func (b *Builder) Value(name string, number int32) *Builder {
	mod := fmt.Sprintf("Value(%q, %d)", name, number)
	if b.desc.Enum == nil {
		return b.fail(mod, "values apply to enums, not %s", b.shape())
	}
	if b.enumValueOK(mod, name) {
		b.desc.Enum.Values = append(b.desc.Enum.Values, schema.EnumValueDescriptor{Name: name, Number: number})
	}
	return b
}

func (b *Builder) enumValueOK(mod, name string) bool {
	if !isIdent(name) {
		b.fail(mod, "enum value %q is not an identifier", name)
		return false
	}
	for _, v := range b.desc.Enum.Values {
		if v.Name == name {
			b.fail(mod, "enum value %q is declared twice", name)
			return false
		}
	}
	return true
}

// EnumName names the enum's Go type (default <Message><Field>, e.g.
// UserRole). Fields that share an enum give it the same name and values.
func (b *Builder) EnumName(name string) *Builder {
	mod := fmt.Sprintf("EnumName(%q)", name)
	switch {
	case b.desc.Enum == nil:
		return b.fail(mod, "enum name applies to enums, not %s", b.shape())
	case !isIdent(name) || name[0] < 'A' || name[0] > 'Z':
		return b.fail(mod, "enum name must be an exported Go identifier")
	}
	b.desc.Enum.Name = name
	return b
}

func quoteAll(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		s += strconv.Quote(n)
	}
	return s
}

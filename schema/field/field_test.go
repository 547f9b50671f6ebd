package field_test

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/field"
)

type Address struct{ schema.Message }

type NotAMessage struct{}

func (NotAMessage) Type() {}

func f64(x float64) *float64 { return &x }

func TestBuilders(t *testing.T) {
	const pkg = "github.com/yrpc/yrpc/schema/field_test"
	for _, tc := range []struct {
		name string
		b    *field.Builder
		want schema.FieldDescriptor
	}{
		{"bool", field.Bool("ok", 1), schema.FieldDescriptor{Name: "ok", Number: 1, Kind: "bool"}},
		{"int32", field.Int32("a", 2), schema.FieldDescriptor{Name: "a", Number: 2, Kind: "int32"}},
		{"int64", field.Int64("a", 2), schema.FieldDescriptor{Name: "a", Number: 2, Kind: "int64"}},
		{"uint32", field.Uint32("a", 2), schema.FieldDescriptor{Name: "a", Number: 2, Kind: "uint32"}},
		{"uint64", field.Uint64("a", 2), schema.FieldDescriptor{Name: "a", Number: 2, Kind: "uint64"}},
		{"sint32", field.Sint32("a", 2), schema.FieldDescriptor{Name: "a", Number: 2, Kind: "sint32"}},
		{"sint64", field.Sint64("a", 2), schema.FieldDescriptor{Name: "a", Number: 2, Kind: "sint64"}},
		{"fixed32", field.Fixed32("a", 2), schema.FieldDescriptor{Name: "a", Number: 2, Kind: "fixed32"}},
		{"fixed64", field.Fixed64("a", 2), schema.FieldDescriptor{Name: "a", Number: 2, Kind: "fixed64"}},
		{"sfixed32", field.Sfixed32("a", 2), schema.FieldDescriptor{Name: "a", Number: 2, Kind: "sfixed32"}},
		{"sfixed64", field.Sfixed64("a", 2), schema.FieldDescriptor{Name: "a", Number: 2, Kind: "sfixed64"}},
		{"float32", field.Float32("a", 2), schema.FieldDescriptor{Name: "a", Number: 2, Kind: "float32"}},
		{"float64", field.Float64("a", 2), schema.FieldDescriptor{Name: "a", Number: 2, Kind: "float64"}},
		{"string", field.String("a", 2), schema.FieldDescriptor{Name: "a", Number: 2, Kind: "string"}},
		{"bytes", field.Bytes("a", 2), schema.FieldDescriptor{Name: "a", Number: 2, Kind: "bytes"}},
		{"time", field.Time("a", 2), schema.FieldDescriptor{Name: "a", Number: 2, Kind: "time"}},
		{"duration", field.Duration("a", 2), schema.FieldDescriptor{Name: "a", Number: 2, Kind: "duration"}},
		{"message", field.Message("home", 3, Address.Type).Comment("where"),
			schema.FieldDescriptor{Name: "home", Number: 3, Kind: "message", Message: "Address", MessagePkg: pkg, Comment: "where"}},
		{"enum", field.Enum("role", 4).Values("member", "admin").Value("owner", 10).Values("guest"),
			schema.FieldDescriptor{Name: "role", Number: 4, Kind: "enum", Enum: &schema.EnumDescriptor{Values: []schema.EnumValueDescriptor{{Name: "member", Number: 0}, {Name: "admin", Number: 1}, {Name: "owner", Number: 10}, {Name: "guest", Number: 11}}}}},
		{"named enum", field.Enum("role", 4).EnumName("Role").Values("a"),
			schema.FieldDescriptor{Name: "role", Number: 4, Kind: "enum", Enum: &schema.EnumDescriptor{Name: "Role", Values: []schema.EnumValueDescriptor{{Name: "a", Number: 0}}}}},
		{"strings", field.Strings("tags", 5).MaxLen(3).NotEmpty(),
			schema.FieldDescriptor{Name: "tags", Number: 5, Kind: "string", List: true, Validate: schema.Validators{NotEmpty: true, MaxLen: 3}}},
		{"bytes list", field.BytesList("chunks", 5), schema.FieldDescriptor{Name: "chunks", Number: 5, Kind: "bytes", List: true}},
		{"unpacked", field.Int64s("ids", 5).Unpacked(), schema.FieldDescriptor{Name: "ids", Number: 5, Kind: "int64", List: true, Unpacked: true}},
		{"enums", field.Enums("roles", 5).Values("a"), schema.FieldDescriptor{Name: "roles", Number: 5, Kind: "enum", List: true, Enum: &schema.EnumDescriptor{Values: []schema.EnumValueDescriptor{{Name: "a", Number: 0}}}}},
		{"messages", field.Messages("homes", 6, Address.Type), schema.FieldDescriptor{Name: "homes", Number: 6, Kind: "message", List: true, Message: "Address", MessagePkg: pkg}},
		{"list of kind", field.List("xs", 6, field.TypeSfixed64), schema.FieldDescriptor{Name: "xs", Number: 6, Kind: "sfixed64", List: true}},
		{"list of messages", field.List("xs", 6, Address.Type), schema.FieldDescriptor{Name: "xs", Number: 6, Kind: "message", List: true, Message: "Address", MessagePkg: pkg}},
		{"map", field.Map("labels", 7, field.TypeString, field.TypeString).MaxLen(9),
			schema.FieldDescriptor{Name: "labels", Number: 7, Kind: "string", MapKey: "string", Validate: schema.Validators{MaxLen: 9}}},
		{"map of messages", field.Map("homes", 7, field.TypeInt64, Address.Type),
			schema.FieldDescriptor{Name: "homes", Number: 7, Kind: "message", MapKey: "int64", Message: "Address", MessagePkg: pkg}},
		{"map of enums", field.Map("roles", 7, field.TypeBool, field.TypeEnum).Values("x"),
			schema.FieldDescriptor{Name: "roles", Number: 7, Kind: "enum", MapKey: "bool", Enum: &schema.EnumDescriptor{Values: []schema.EnumValueDescriptor{{Name: "x", Number: 0}}}}},
		{"optional deprecated", field.Uint32("age", 8).Optional().Deprecated().Range(0, 150),
			schema.FieldDescriptor{Name: "age", Number: 8, Kind: "uint32", Optional: true, Deprecated: true, Validate: schema.Validators{Min: f64(0), Max: f64(150)}}},
		{"string rules", field.String("zip", 9).MinLen(5).MaxLen(5).Match(`^\d+$`),
			schema.FieldDescriptor{Name: "zip", Number: 9, Kind: "string", Validate: schema.Validators{MinLen: 5, MaxLen: 5, Match: `^\d+$`}}},
		{"max number", field.Bool("b", 536870911), schema.FieldDescriptor{Name: "b", Number: 536870911, Kind: "bool"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.b.Descriptor()
			if len(got.Errors) > 0 {
				t.Fatalf("errors: %v", got.Errors)
			}
			if !strings.Contains(got.Pos, "field_test.go:") {
				t.Errorf("position %q is not in field_test.go", got.Pos)
			}
			if diff := cmp.Diff(tc.want, *got, cmpopts.IgnoreFields(schema.FieldDescriptor{}, "Pos", "Errors")); diff != "" {
				t.Errorf("descriptor (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuilderErrors(t *testing.T) {
	for _, tc := range []struct {
		b    *field.Builder
		want string
	}{
		{field.String("name", 2).MaxLen(-1), `field.String("name", 2).MaxLen(-1): max length must be >= 1`},
		{field.String("", 2), `field.String("", 2): name must not be empty`},
		{field.String("a b", 2), `field.String("a b", 2): name must be an identifier`},
		{field.String("a", 0), `field.String("a", 0): wire number must be >= 1`},
		{field.String("a", 19123), `field.String("a", 19123): wire numbers 19000-19999 are reserved by protobuf`},
		{field.String("a", 536870912), `wire number must be <= 536870911`},
		{field.Int64("id", 1).MaxLen(5), `field.Int64("id", 1).MaxLen(5): max length applies to strings, bytes, lists and maps, not an int64 field`},
		{field.Int64("id", 1).MinLen(5), `MinLen(5): min length applies to strings`},
		{field.String("a", 1).MinLen(-1), `MinLen(-1): min length must be >= 0`},
		{field.String("a", 1).MinLen(3).MaxLen(2), `MaxLen(2): max length is below the min length 3`},
		{field.String("name", 2).Range(1, 3), `field.String("name", 2).Range(1, 3): range applies to number fields, not a string field`},
		{field.Int32s("xs", 2).Range(1, 3), `range applies to number fields, not a list`},
		{field.Int32("x", 2).Range(3, 1), `Range(3, 1): min is greater than max`},
		// An infinite bound failed the schema's description (JSON has no
		// Inf), and yrpcc said only "exit status 1".
		{field.Float64("x", 2).Range(0, math.Inf(1)), `field.Float64("x", 2).Range(0, +Inf): range bounds must be finite; for an open end give math.MaxFloat64`},
		{field.Float32("x", 2).Range(math.Inf(-1), 0), `Range(-Inf, 0): range bounds must be finite; for an open end give math.MaxFloat32`},
		{field.Int64("x", 2).Range(math.Inf(-1), 0), `Range(-Inf, 0): range bounds must be finite`},
		{field.String("s", 2).Match("a("), `Match("a("): bad regexp: error parsing regexp`},
		{field.Int32("x", 2).Match("a"), `match applies to string fields, not an int32 field`},
		{field.Bool("x", 2).NotEmpty(), `NotEmpty(): not-empty applies to strings, bytes, lists, maps and messages, not a bool field`},
		{field.Strings("x", 2).Optional(), `field.Strings("x", 2).Optional(): a list cannot be optional`},
		{field.Map("m", 2, field.TypeString, field.TypeString).Optional(), `a map cannot be optional`},
		{field.String("x", 2).Unpacked(), `Unpacked(): only a list of numbers, bools or enums can be unpacked, not a string field`},
		{field.Strings("x", 2).Unpacked(), `not a list`},
		{field.Int32("x", 2).Values("a"), `field.Int32("x", 2).Values("a"): values apply to enums, not an int32 field`},
		{field.Enum("x", 2).Values("a", "a"), `enum value "a" is declared twice`},
		{field.Enum("x", 2).Value("9a", 1), `Value("9a", 1): enum value "9a" is not an identifier`},
		{field.Enum("x", 2).EnumName("role"), `EnumName("role"): enum name must be an exported Go identifier`},
		{field.String("x", 2).EnumName("Role"), `enum name applies to enums, not a string field`},
		{field.Message("x", 2, NotAMessage.Type), `field.Message("x", 2, func(field_test.NotAMessage)): message reference field_test.NotAMessage does not embed schema.Message`},
		{field.Message("x", 2, Address{}.Type), `message reference must be a method expression like Address.Type, got a func()`},
		{field.Messages("x", 2, nil), `field.Messages("x", 2, nil): message reference is nil`},
		{field.List("x", 2, field.Type(99)), `field.List("x", 2, field.Type(99)): invalid value type field.Type(99)`},
		{field.Map("x", 2, field.TypeFloat32, field.TypeString), `field.Map("x", 2, field.TypeFloat32, field.TypeString): map key must be an integer type, TypeBool or TypeString, not field.TypeFloat32`},
		{field.Map("x", 2, field.TypeTime, field.TypeString), `map key must be an integer type`},
		{field.Map("x", 2, field.TypeString, "Address"), `field.Map("x", 2, field.TypeString, string): message reference must be a method expression`},
	} {
		d := tc.b.Descriptor()
		if len(d.Errors) == 0 {
			t.Errorf("no error, want %q", tc.want)
			continue
		}
		if got := d.Errors[0].Error(); !strings.Contains(got, tc.want) {
			t.Errorf("error %q, want it to contain %q", got, tc.want)
		}
		if !strings.Contains(d.Pos, "field_test.go:") {
			t.Errorf("%s: position %q is not in field_test.go", tc.want, d.Pos)
		}
	}
}

// TestTypeStrings checks that every Type has a name and a source form.
func TestTypeStrings(t *testing.T) {
	for ty := field.TypeBool; ty <= field.TypeDuration; ty++ {
		if ty.String() == "invalid" || !strings.HasPrefix(ty.GoString(), "field.Type") {
			t.Errorf("Type(%d): %q %q", ty, ty.String(), ty.GoString())
		}
	}
	if field.Type(0).String() != "invalid" {
		t.Error("Type(0) is valid")
	}
}

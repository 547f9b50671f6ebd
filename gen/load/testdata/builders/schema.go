// Package schema misuses field modifiers.
package schema

import (
	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/field"
)

// User is a message.
type User struct{ schema.Message }

// Fields of User.
func (User) Fields() []schema.Field {
	return []schema.Field{
		field.String("name", 1).MaxLen(-1),                      // want "field.String(\"name\", 1).MaxLen(-1): max length must be >= 1"
		field.Int64("id", 2).MaxLen(10),                         // want "field.Int64(\"id\", 2).MaxLen(10): max length applies to strings, bytes, lists and maps, not an int64 field"
		field.String("email", 3).Range(1, 2),                    // want "field.String(\"email\", 3).Range(1, 2): range applies to number fields, not a string field"
		field.String("zip", 4).Match("[0-9"),                    // want "field.String(\"zip\", 4).Match(\"[0-9\"): bad regexp"
		field.Strings("tags", 5).Optional(),                     // want "field.Strings(\"tags\", 5).Optional(): a list cannot be optional"
		field.String("text", 6).Unpacked(),                      // want "Unpacked(): only a list of numbers, bools or enums can be unpacked, not a string field"
		field.Int32("age", 7).Range(10, 1),                      // want "Range(10, 1): min is greater than max"
		field.Bool("ok", 8).NotEmpty(),                          // want "NotEmpty(): not-empty applies to strings, bytes, lists, maps and messages, not a bool field"
		field.String("bio", 9).MaxLen(5).MinLen(6),              // want "MinLen(6): min length is above the max length 5"
		field.Map("m", 10, field.TypeFloat64, field.TypeString), // want "field.Map(\"m\", 10, field.TypeFloat64, field.TypeString): map key must be an integer type, TypeBool or TypeString"
		field.List("l", 11, field.Type(0)),                      // want "invalid value type field.Type(0)"
		field.String("", 12),                                    // want "field.String(\"\", 12): name must not be empty"
		field.String("has space", 13),                           // want "name must be an identifier"
	}
}

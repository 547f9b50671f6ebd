// Package schema has bad enums.
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
		field.Enum("role", 1).Values("member", "admin", "member"), // want "field.Enum(\"role\", 1).Values(\"member\", \"admin\", \"member\"): enum value \"member\" is declared twice"
		field.Enum("state", 2).Value("on", 1).Value("off", 2),     // want "field \"state\": the first value \"on\" of enum UserState is its zero value and must be numbered 0, not 1"
		field.Enum("mode", 3).Value("x", 0).Value("y", 0),         // want "field \"mode\": enum UserMode gives the values \"x\" and \"y\" the same number 0"
		field.Enum("empty", 4),                                    // want "field \"empty\": enum UserEmpty has no values"
		field.Enum("color", 5).EnumName("Color").Values("red", "blue"),
		field.Enums("colors", 6).EnumName("Color").Values("red", "green"), // want "field \"colors\": enum Color has other values than at schema.go:"
		field.Int32("n", 7).Values("a"),                                   // want "field.Int32(\"n\", 7).Values(\"a\"): values apply to enums, not an int32 field"
		field.Enum("bad", 8).Values("has space"),                          // want "enum value \"has space\" is not an identifier"
		field.Enum("named", 9).EnumName("lower").Values("a"),              // want "EnumName(\"lower\"): enum name must be an exported Go identifier"
	}
}

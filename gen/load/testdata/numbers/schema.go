// Package schema has bad wire numbers.
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
		field.Int64("id", 1),
		field.String("name", 1),          // want "field \"name\": wire number 1 is already used by field \"id\""
		field.String("nick", 0),          // want "field.String(\"nick\", 0): wire number must be >= 1"
		field.String("email", 19000),     // want "field.String(\"email\", 19000): wire numbers 19000-19999 are reserved by protobuf"
		field.String("phone", 19999),     // want "wire numbers 19000-19999 are reserved"
		field.Bytes("avatar", 536870912), // want "field.Bytes(\"avatar\", 536870912): wire number must be <= 536870911"
		field.Bool("admin", -3),          // want "field.Bool(\"admin\", -3): wire number must be >= 1"
		field.Bool("retired", 7),         // want "field \"retired\": wire number 7 is reserved by User.Reserved"
		field.Int32("max", 536870911),
	}
}

// Reserved numbers of User.
func (User) Reserved() []int32 { return []int32{7} }

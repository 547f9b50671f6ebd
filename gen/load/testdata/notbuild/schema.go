// Package schema does not compile.
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
		field.String("name", undefinedNumber), // want "undefined: undefinedNumber"
	}
}

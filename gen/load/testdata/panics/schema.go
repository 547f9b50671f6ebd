// Package schema has methods that panic.
package schema

import (
	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/field"
	"github.com/yrpc/yrpc/schema/rpc"
)

// User is a message.
type User struct{ schema.Message }

// Fields of User.
func (User) Fields() []schema.Field {
	var fields []schema.Field
	_ = fields[3] // want "User.Fields panicked: runtime error: index out of range"
	return fields
}

// Annotations of User.
func (User) Annotations() []schema.Annotation {
	panic("boom") // want "User.Annotations panicked: boom"
}

// Users is a service.
type Users struct{ schema.Service }

// Methods of Users.
func (Users) Methods() []schema.Method {
	var m map[string]schema.Method
	m["x"] = rpc.Unary("Get", User.Type, User.Type) // want "Users.Methods panicked: assignment to entry in nil map"
	return nil
}

// Fine is a message that loads although others panic.
type Fine struct{ schema.Message }

// Fields of Fine.
func (Fine) Fields() []schema.Field {
	return []schema.Field{field.Int64("id", 1)}
}

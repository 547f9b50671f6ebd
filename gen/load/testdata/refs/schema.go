// Package schema references types that are not messages.
package schema

import (
	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/field"
	"github.com/yrpc/yrpc/schema/rpc"
)

// NotAMessage has a Type method but does not embed schema.Message.
type NotAMessage struct{}

// Type looks like schema.Message's.
func (NotAMessage) Type() {}

// hidden is a message that is not exported.
type hidden struct{ schema.Message } // want "type hidden embeds a schema base type but is not exported"

// User is a message.
type User struct{ schema.Message }

// Fields of User.
func (User) Fields() []schema.Field {
	return []schema.Field{
		field.Message("friend", 1, NotAMessage.Type),      // want "field.Message(\"friend\", 1, func(schema.NotAMessage)): message reference schema.NotAMessage does not embed schema.Message"
		field.Messages("peers", 2, NotAMessage{}.Type),    // want "message reference must be a method expression like Address.Type, got a func()"
		field.Map("by_name", 3, field.TypeString, "User"), // want "field.Map(\"by_name\", 3, field.TypeString, string): message reference must be a method expression"
		field.List("things", 4, nil),                      // want "field.List(\"things\", 4, nil): message reference is nil"
		field.Message("secret", 5, hidden.Type),           // want "field \"secret\": unknown message \"hidden\""
	}
}

// Users is a service.
type Users struct{ schema.Service }

// Methods of Users.
func (Users) Methods() []schema.Method {
	return []schema.Method{
		rpc.Unary("Get", User.Type, NotAMessage.Type), // want "rpc.Unary(\"Get\", User.Type, func(schema.NotAMessage)): message reference schema.NotAMessage does not embed schema.Message"
	}
}

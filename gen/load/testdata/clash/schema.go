// Package schema has names that clash in Go.
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
	return []schema.Field{
		field.Int64("user_id", 1),
		field.Int64("UserID", 2),                            // want "field \"UserID\": becomes the Go field UserID, as field \"user_id\" does"
		field.Int64("size", 3),                              // want "field \"size\": becomes the Go field Size, which clashes with the generated method User.Size"
		field.Bytes("unmarshal", 4),                         // want "clashes with the generated method User.Unmarshal"
		field.String("validate", 5),                         // want "clashes with the generated method User.Validate"
		field.String("string", 6),                           // want "clashes with the generated method User.String"
		field.Bool("reset", 7),                              // want "clashes with the generated method User.Reset"
		field.Bool("marshal_append", 8),                     // want "clashes with the generated method User.MarshalAppend"
		field.Enum("kind", 9).EnumName("Users").Values("a"), // want "Go name Users of enum Users of User.kind clashes with service Users"
	}
}

// UsersClient is a message whose name clashes with generated code.
type UsersClient struct{ schema.Message }

// Users is a service.
type Users struct{ schema.Service } // want "Go name UsersClient of the generated code of service Users clashes with message UsersClient"

// Methods of Users.
func (Users) Methods() []schema.Method {
	return []schema.Method{rpc.Unary("Get", User.Type, UsersClient.Type)}
}

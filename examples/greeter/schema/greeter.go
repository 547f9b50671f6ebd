// Package schema is the schema of the greeter example: one service with one
// unary method.
package schema

import (
	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/field"
	"github.com/yrpc/yrpc/schema/rpc"
)

// HelloRequest asks for a greeting.
type HelloRequest struct{ schema.Message }

// Fields of HelloRequest.
func (HelloRequest) Fields() []schema.Field {
	return []schema.Field{
		field.String("name", 1).Comment("who to greet"),
	}
}

// HelloReply carries the greeting.
type HelloReply struct{ schema.Message }

// Fields of HelloReply.
func (HelloReply) Fields() []schema.Field {
	return []schema.Field{
		field.String("message", 1),
	}
}

// Greeter greets.
type Greeter struct{ schema.Service }

// Methods of Greeter.
func (Greeter) Methods() []schema.Method {
	return []schema.Method{
		rpc.Unary("SayHello", HelloRequest.Type, HelloReply.Type).Comment("SayHello answers with a greeting."),
	}
}

// Annotations of Greeter.
func (Greeter) Annotations() []schema.Annotation {
	return []schema.Annotation{schema.Package("greeter")}
}

// Package schema declares a stream of every kind beside a unary method,
// for the tests of the loader and of yrpcc describe, proto and generate.
package schema

import (
	"time"

	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/field"
	"github.com/yrpc/yrpc/schema/rpc"
)

// Watch asks for the events of a user.
type Watch struct{ schema.Message }

// Fields of Watch.
func (Watch) Fields() []schema.Field {
	return []schema.Field{
		field.Int64("user_id", 1),
		field.Time("since", 2).Optional(),
	}
}

// Annotations of Watch.
func (Watch) Annotations() []schema.Annotation {
	return []schema.Annotation{schema.Package("streams.v1")}
}

// Event is something that happened to a user.
type Event struct{ schema.Message }

// Fields of Event.
func (Event) Fields() []schema.Field {
	return []schema.Field{
		field.Int64("user_id", 1),
		field.Enum("kind", 2).Values("created", "renamed", "deleted"),
		field.Time("at", 3),
	}
}

// Chunk is a piece of an upload.
type Chunk struct{ schema.Message }

// Fields of Chunk.
func (Chunk) Fields() []schema.Field {
	return []schema.Field{
		field.Int64("offset", 1),
		field.Bytes("data", 2),
	}
}

// Uploaded sums up an upload.
type Uploaded struct{ schema.Message }

// Fields of Uploaded.
func (Uploaded) Fields() []schema.Field {
	return []schema.Field{
		field.Int64("total", 1),
		field.Map("parts", 2, field.TypeInt64, field.TypeString),
	}
}

// Line is one chat message.
type Line struct{ schema.Message }

// Fields of Line.
func (Line) Fields() []schema.Field {
	return []schema.Field{
		field.String("from", 1),
		field.String("text", 2),
	}
}

// Feed streams events.
type Feed struct{ schema.Service }

// Methods of Feed.
func (Feed) Methods() []schema.Method {
	return []schema.Method{
		rpc.ServerStream("Watch", Watch.Type, Event.Type).Comment("Watch sends the events of a user as they happen.").
			Idempotent().Timeout(time.Hour).Retry(3, 100*time.Millisecond).Backoff(2, time.Second).
			HashKey("user_id").MaxMessageSize(64 << 10),
		rpc.ClientStream("Upload", Chunk.Type, Uploaded.Type).Timeout(10 * time.Minute).MaxMessageSize(1 << 20),
		rpc.BidiStream("Chat", Line.Type, Line.Type),
		rpc.Unary("Last", Watch.Type, Event.Type).Idempotent(),
	}
}

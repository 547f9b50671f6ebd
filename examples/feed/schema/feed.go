// Package schema is the schema of the feed example: a topic feed with a
// stream of every kind.
package schema

import (
	"time"

	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/field"
	"github.com/yrpc/yrpc/schema/rpc"
)

// Event is one message of a topic.
type Event struct{ schema.Message }

// Fields of Event.
func (Event) Fields() []schema.Field {
	return []schema.Field{
		field.String("topic", 1).NotEmpty(),
		field.Int64("seq", 2).Comment("position in the topic, from 1; set by the server"),
		field.String("text", 3).MaxLen(280),
	}
}

// Subscription asks for the events of a topic.
type Subscription struct{ schema.Message }

// Fields of Subscription.
func (Subscription) Fields() []schema.Field {
	return []schema.Field{
		field.String("topic", 1).NotEmpty(),
		field.Int64("from", 2).Comment("the first seq to send; 0 means 1"),
		field.Bool("follow", 3).Comment("keep the stream open and send new events as they are published"),
	}
}

// Published sums up a publication.
type Published struct{ schema.Message }

// Fields of Published.
func (Published) Fields() []schema.Field {
	return []schema.Field{
		field.Int64("count", 1),
		field.Int64("last_seq", 2),
	}
}

// Line is one line of a chat.
type Line struct{ schema.Message }

// Fields of Line.
func (Line) Fields() []schema.Field {
	return []schema.Field{
		field.String("from", 1),
		field.String("text", 2),
	}
}

// Feed keeps topics of events.
type Feed struct{ schema.Service }

// Methods of Feed.
func (Feed) Methods() []schema.Method {
	return []schema.Method{
		rpc.ClientStream("Publish", Event.Type, Published.Type).
			Comment("Publish appends a stream of events to their topics.").
			Timeout(time.Minute).MaxMessageSize(4 << 10),
		rpc.ServerStream("Subscribe", Subscription.Type, Event.Type).
			Comment("Subscribe sends the events of a topic, and new ones as they come when it follows.").
			HashKey("topic"),
		rpc.BidiStream("Chat", Line.Type, Line.Type).
			Comment("Chat answers every line as it comes."),
	}
}

// Annotations of Feed.
func (Feed) Annotations() []schema.Annotation {
	return []schema.Annotation{schema.Package("feed")}
}

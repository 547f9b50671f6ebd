// Package schema declares the tour's service: a small key-value store whose
// answers say which provider served them.
package schema

import (
	"time"

	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/field"
	"github.com/yrpc/yrpc/schema/rpc"
)

// Key names one entry.
type Key struct{ schema.Message }

// Fields of Key.
func (Key) Fields() []schema.Field {
	return []schema.Field{
		field.Int64("id", 1).Comment("entry id, also the consistent-hash key"),
	}
}

// Entry is a stored value and where it came from.
type Entry struct{ schema.Message }

// Fields of Entry.
func (Entry) Fields() []schema.Field {
	return []schema.Field{
		field.Int64("id", 1),
		field.String("value", 2).MaxLen(1024),
		field.String("served_by", 3).Comment("the provider that answered"),
	}
}

// Store keeps entries on several providers.
type Store struct{ schema.Service }

// Methods of Store.
func (Store) Methods() []schema.Method {
	return []schema.Method{
		rpc.Unary("Get", Key.Type, Entry.Type).
			Comment("Get reads an entry: idempotent, so failures fail over.").
			Idempotent().Timeout(2*time.Second).
			Retry(3, 5*time.Millisecond).Backoff(2, 50*time.Millisecond).Jitter(0.2).
			HashKey("id"),
		rpc.Unary("Put", Entry.Type, Entry.Type).
			Comment("Put writes an entry: not idempotent, never sent twice.").
			Timeout(time.Second).HashKey("id"),
		rpc.ServerStream("Watch", Key.Type, Entry.Type).
			Comment("Watch is a live feed of an entry: its provider sends an update every 20 ms until the stream ends.").
			HashKey("id"),
	}
}

// Annotations of Store.
func (Store) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Package("tour"),
		schema.Balance(schema.ConsistentHash),
		schema.Breaker(0.5, 10, 2*time.Second),
	}
}

// Package schema has protobuf names (schema.ProtoName) that are wrong or
// clash.
package schema

import (
	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/field"
	"github.com/yrpc/yrpc/schema/mixin"
	"github.com/yrpc/yrpc/schema/rpc"
)

// Item is a message.
type Item struct{ schema.Message }

// Fields of Item.
func (Item) Fields() []schema.Field {
	return []schema.Field{
		field.Enum("status", 1).Values("active"), // want "field \"status\": protobuf name ItemStatus of enum ItemStatus of Item.status clashes with message Stat (schema.ProtoName)"
	}
}

// Product was Item: its protobuf name clashes with today's Item.
type Product struct{ schema.Message } // want "Product: protobuf name Item of message Product (schema.ProtoName) clashes with message Item"

// Annotations of Product.
func (Product) Annotations() []schema.Annotation {
	return []schema.Annotation{schema.ProtoName("Item")}
}

// Bad has a protobuf name that is not an identifier.
type Bad struct{ schema.Message }

// Annotations of Bad.
func (Bad) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.ProtoName("catalog.Bad"), // want "schema.ProtoName(\"catalog.Bad\"): name must be an identifier"
	}
}

// Twice names itself twice.
type Twice struct{ schema.Message }

// Annotations of Twice.
func (Twice) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.ProtoName("Once"),
		schema.ProtoName("Again"), // want "schema.ProtoName(\"Again\"): the protobuf name is already set by schema.ProtoName(\"Once\")"
	}
}

// Named is a mixin that tries to name the messages that use it.
type Named struct{ mixin.Schema }

// Annotations of Named.
func (Named) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.ProtoName("Shared"), // want "Mixed: schema.ProtoName(\"Shared\"): names one message; put it in Mixed.Annotations, not in a mixin"
	}
}

// Mixed uses Named.
type Mixed struct{ schema.Message }

// Mixin of Mixed.
func (Mixed) Mixin() []schema.Mixin { return []schema.Mixin{Named{}} }

// Stat has the protobuf name of an enum.
type Stat struct{ schema.Message }

// Annotations of Stat.
func (Stat) Annotations() []schema.Annotation {
	return []schema.Annotation{schema.ProtoName("ItemStatus")}
}

// Catalog is a service.
type Catalog struct{ schema.Service }

// Methods of Catalog.
func (Catalog) Methods() []schema.Method {
	return []schema.Method{rpc.Unary("Get", Product.Type, Stat.Type)}
}

// Annotations of Catalog.
func (Catalog) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.ProtoName("Shop"), // want "Catalog: schema.ProtoName(\"Shop\"): applies to messages, not to service Catalog"
	}
}

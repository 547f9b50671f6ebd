// Package schema is version 1 of the evolution example's Catalog schema;
// ../../v2/schema is the next version of it. The two are generated into
// two packages (../catalogrpc and ../../v2/catalogrpc) so that their
// clients and servers can be made to talk to each other.
package schema

import (
	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/field"
	"github.com/yrpc/yrpc/schema/rpc"
)

// Item is a catalog entry.
type Item struct{ schema.Message }

// Fields of Item.
func (Item) Fields() []schema.Field {
	return []schema.Field{
		field.Int64("id", 1),
		field.String("name", 2),
		field.Int64("price_cents", 3),
		field.String("legacy_sku", 4).Comment("the old stock-keeping unit; v2 removes it"),
		field.Enum("status", 5).Values("active", "retired"),
	}
}

// GetItem asks for one item.
type GetItem struct{ schema.Message }

// Fields of GetItem.
func (GetItem) Fields() []schema.Field {
	return []schema.Field{field.Int64("id", 1)}
}

// Catalog stores items.
type Catalog struct{ schema.Service }

// Methods of Catalog.
func (Catalog) Methods() []schema.Method {
	return []schema.Method{
		rpc.Unary("Get", GetItem.Type, Item.Type).Comment("Get returns one item."),
		rpc.Unary("Put", Item.Type, Item.Type).Comment("Put stores an item and returns what was stored."),
	}
}

// Annotations of Catalog: both versions name the package, so the service's
// identity (its wire name, method IDs and registry path) stays the same.
func (Catalog) Annotations() []schema.Annotation {
	return []schema.Annotation{schema.Package("catalog")}
}

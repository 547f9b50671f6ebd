// Package schema declares access rules, on a service and on a method, for
// the loader's tests.
package schema

import (
	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/field"
	"github.com/yrpc/yrpc/schema/rpc"
)

// Item is a catalog item.
type Item struct{ schema.Message }

// Fields of Item.
func (Item) Fields() []schema.Field {
	return []schema.Field{field.Int64("id", 1)}
}

// Catalog is open to the shop's workloads; Delete to its admin only, Ping
// to any authenticated caller.
type Catalog struct{ schema.Service }

// Methods of Catalog.
func (Catalog) Methods() []schema.Method {
	return []schema.Method{
		rpc.Unary("Get", Item.Type, Item.Type),
		rpc.Unary("Delete", Item.Type, Item.Type).Allow("spiffe://example.org/ns/shop/sa/admin"),
		rpc.Unary("Ping", Item.Type, Item.Type).Allow("*"),
	}
}

// Annotations of Catalog.
func (Catalog) Annotations() []schema.Annotation {
	return []schema.Annotation{schema.Package("access.v1"), schema.Allow("spiffe://example.org/ns/shop/*")}
}

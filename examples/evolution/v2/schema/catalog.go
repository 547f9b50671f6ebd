// Package schema is version 2 of the evolution example's Catalog schema
// (version 1 is ../../v1/schema). Against version 1 it:
//
//   - renames the message Item to Product in Go and keeps its protobuf name
//     with schema.ProtoName("Item"): the generated Go type is Product, while
//     the exported .proto, the embedded file descriptor (what gRPC
//     reflection serves) and validation errors still say catalog.Item, so
//     descriptor-based peers (google.protobuf.Any type URLs, code generated
//     from the .proto) see no change. The wire carries field numbers and
//     method IDs, never message names, so yrpc peers would not see the
//     rename even without ProtoName;
//   - renames the field name (2) to title (numbers, not names, are on the
//     wire) and limits it to 100 characters: a v2 server refuses a longer
//     one from any client;
//   - removes legacy_sku and reserves its number 4;
//   - adds the enum value discontinued (2) to status, whose enum keeps its
//     v1 name ItemStatus through EnumName (its default name would now be
//     ProductStatus);
//   - adds tags (6) and an optional stock (7) to Product, and with_stock
//     (2) to GetItem.
package schema

import (
	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/field"
	"github.com/yrpc/yrpc/schema/rpc"
)

// Product is a catalog entry (Item in v1, and catalog.Item in protobuf).
type Product struct{ schema.Message }

// Annotations of Product: the protobuf name stays v1's.
func (Product) Annotations() []schema.Annotation {
	return []schema.Annotation{schema.ProtoName("Item")}
}

// Fields of Product.
func (Product) Fields() []schema.Field {
	return []schema.Field{
		field.Int64("id", 1),
		field.String("title", 2).MaxLen(100).Comment("v1's name"),
		field.Int64("price_cents", 3),
		field.Enum("status", 5).EnumName("ItemStatus").Values("active", "retired", "discontinued"),
		field.Strings("tags", 6),
		field.Uint32("stock", 7).Optional().Comment("unset: unknown (a v1 provider never sets it)"),
	}
}

// Reserved numbers of Product: 4 was legacy_sku.
func (Product) Reserved() []int32 { return []int32{4} }

// GetItem asks for one product.
type GetItem struct{ schema.Message }

// Fields of GetItem.
func (GetItem) Fields() []schema.Field {
	return []schema.Field{
		field.Int64("id", 1),
		field.Bool("with_stock", 2).Comment("ask for the stock count (v1 providers ignore it)"),
	}
}

// Catalog stores products.
type Catalog struct{ schema.Service }

// Methods of Catalog.
func (Catalog) Methods() []schema.Method {
	return []schema.Method{
		rpc.Unary("Get", GetItem.Type, Product.Type).Comment("Get returns one product."),
		rpc.Unary("Put", Product.Type, Product.Type).Comment("Put stores a product and returns what was stored."),
	}
}

// Annotations of Catalog.
func (Catalog) Annotations() []schema.Annotation {
	return []schema.Annotation{schema.Package("catalog")}
}

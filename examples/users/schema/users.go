// Package schema is the schema of the users example. It uses every field
// kind, every list, map and optional form, validators, enums, a mixin, a
// recursive message, and a Users service with every method policy and
// every service annotation.
package schema

import (
	"time"

	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/field"
	"github.com/yrpc/yrpc/schema/mixin"
	"github.com/yrpc/yrpc/schema/rpc"
)

// Audit is a mixin that records when a message was created and updated.
type Audit struct{ mixin.Schema }

// Fields of Audit.
func (Audit) Fields() []schema.Field {
	return []schema.Field{
		field.Time("created_at", 100).Comment("when the record was created"),
		field.Time("updated_at", 101).Optional(),
	}
}

// User is a registered user.
type User struct{ schema.Message }

// Mixin of User.
func (User) Mixin() []schema.Mixin { return []schema.Mixin{Audit{}} }

// Fields of User.
func (User) Fields() []schema.Field {
	return []schema.Field{
		field.Int64("id", 1).Range(1, 1<<53),
		field.String("name", 2).Comment("display name").NotEmpty().MaxLen(64),
		field.Strings("emails", 3).MaxLen(8),
		field.Enum("role", 4).Values("member", "admin").Value("owner", 10),
		field.Message("address", 5, Address.Type),
		field.Map("labels", 7, field.TypeString, field.TypeString).MaxLen(32),
		field.Bytes("avatar", 8).MaxLen(1 << 20),
		field.Uint32("age", 9).Optional().Range(0, 150),
		field.String("nickname", 10).Optional().Deprecated().Comment("replaced by name"),
		field.Duration("session_ttl", 11),
	}
}

// Reserved numbers of User: fields 6 and 12 were removed.
func (User) Reserved() []int32 { return []int32{6, 12} }

// Address is a postal address.
type Address struct{ schema.Message }

// Fields of Address.
func (Address) Fields() []schema.Field {
	return []schema.Field{
		field.String("street", 1),
		field.String("city", 2).NotEmpty(),
		field.String("zip", 3).Match(`^[0-9]{5}$`),
		field.String("country", 4).MinLen(2).MaxLen(2).Comment("ISO 3166-1 alpha-2 code"),
	}
}

// Node is a tree node: a recursive message.
type Node struct{ schema.Message }

// Fields of Node.
func (Node) Fields() []schema.Field {
	return []schema.Field{
		field.String("name", 1),
		field.Messages("children", 2, Node.Type),
		field.Message("parent", 3, Node.Type).Comment("set on copies only; trees are not cyclic on the wire"),
		field.Map("by_name", 4, field.TypeString, Node.Type),
	}
}

// Scalars has one field of every scalar kind, with explicit numbers that
// include large ones.
type Scalars struct{ schema.Message }

// Fields of Scalars.
func (Scalars) Fields() []schema.Field {
	return []schema.Field{
		field.Bool("flag", 1),
		field.Int32("i32", 2),
		field.Int64("i64", 3),
		field.Uint32("u32", 4),
		field.Uint64("u64", 5),
		field.Sint32("s32", 6),
		field.Sint64("s64", 7),
		field.Fixed32("fx32", 8),
		field.Fixed64("fx64", 9),
		field.Sfixed32("sfx32", 10),
		field.Sfixed64("sfx64", 11),
		field.Float32("f32", 12),
		field.Float64("f64", 13),
		field.String("text", 14),
		field.Bytes("data", 15),
		field.Enum("color", 16).EnumName("Color").Values("red", "green", "blue"),
		field.Time("at", 17),
		field.Duration("ttl", 18),
		field.Message("address", 15999, Address.Type),
		field.Int64("before_reserved", 18999),
		field.Int64("after_reserved", 20000),
		field.Sint64("last", 536870911).Comment("the largest wire number"),
	}
}

// Optionals has an optional (presence-tracking) field of every scalar kind.
type Optionals struct{ schema.Message }

// Fields of Optionals.
func (Optionals) Fields() []schema.Field {
	return []schema.Field{
		field.Bool("flag", 1).Optional(),
		field.Int32("i32", 2).Optional(),
		field.Int64("i64", 3).Optional(),
		field.Uint32("u32", 4).Optional(),
		field.Uint64("u64", 5).Optional(),
		field.Sint32("s32", 6).Optional(),
		field.Sint64("s64", 7).Optional(),
		field.Fixed32("fx32", 8).Optional(),
		field.Fixed64("fx64", 9).Optional(),
		field.Sfixed32("sfx32", 10).Optional(),
		field.Sfixed64("sfx64", 11).Optional(),
		field.Float32("f32", 12).Optional(),
		field.Float64("f64", 13).Optional(),
		field.String("text", 14).Optional(),
		field.Bytes("data", 15).Optional(),
		field.Enum("color", 16).EnumName("Color").Values("red", "green", "blue").Optional(),
		field.Time("at", 17).Optional(),
		field.Duration("ttl", 18).Optional(),
	}
}

// Lists has a list of every kind, packed and unpacked.
type Lists struct{ schema.Message }

// Fields of Lists.
func (Lists) Fields() []schema.Field {
	return []schema.Field{
		field.Bools("flags", 1),
		field.Int32s("i32s", 2),
		field.Int64s("i64s", 3),
		field.Uint32s("u32s", 4),
		field.Uint64s("u64s", 5),
		field.Sint32s("s32s", 6),
		field.Sint64s("s64s", 7),
		field.Fixed32s("fx32s", 8),
		field.Fixed64s("fx64s", 9),
		field.Sfixed32s("sfx32s", 10),
		field.Sfixed64s("sfx64s", 11),
		field.Float32s("f32s", 12),
		field.Float64s("f64s", 13),
		field.Strings("texts", 14),
		field.BytesList("blobs", 15),
		field.Enums("colors", 16).EnumName("Color").Values("red", "green", "blue"),
		field.Times("times", 17),
		field.Durations("durations", 18),
		field.Messages("addresses", 19, Address.Type),
		field.List("tags", 20, field.TypeString).NotEmpty(),
		field.Int32s("unpacked_i32s", 21).Unpacked(),
		field.Sint64s("unpacked_s64s", 22).Unpacked(),
		field.Fixed32s("unpacked_fx32s", 23).Unpacked(),
		field.Float64s("unpacked_f64s", 24).Unpacked(),
		field.Bools("unpacked_flags", 25).Unpacked(),
		field.Enums("unpacked_colors", 26).EnumName("Color").Values("red", "green", "blue").Unpacked(),
	}
}

// Maps has maps with every key kind and values of every kind.
type Maps struct{ schema.Message }

// Fields of Maps.
func (Maps) Fields() []schema.Field {
	return []schema.Field{
		field.Map("by_string", 1, field.TypeString, field.TypeString),
		field.Map("by_bool", 2, field.TypeBool, field.TypeInt32),
		field.Map("by_i32", 3, field.TypeInt32, field.TypeInt64),
		field.Map("by_i64", 4, field.TypeInt64, field.TypeUint32),
		field.Map("by_u32", 5, field.TypeUint32, field.TypeUint64),
		field.Map("by_u64", 6, field.TypeUint64, field.TypeSint32),
		field.Map("by_s32", 7, field.TypeSint32, field.TypeSint64),
		field.Map("by_s64", 8, field.TypeSint64, field.TypeFixed32),
		field.Map("by_fx32", 9, field.TypeFixed32, field.TypeFixed64),
		field.Map("by_fx64", 10, field.TypeFixed64, field.TypeSfixed32),
		field.Map("by_sfx32", 11, field.TypeSfixed32, field.TypeSfixed64),
		field.Map("by_sfx64", 12, field.TypeSfixed64, field.TypeFloat32),
		field.Map("floats", 13, field.TypeString, field.TypeFloat64),
		field.Map("flags", 14, field.TypeString, field.TypeBool),
		field.Map("blobs", 15, field.TypeString, field.TypeBytes),
		field.Map("colors", 16, field.TypeString, field.TypeEnum).EnumName("Color").Values("red", "green", "blue"),
		field.Map("times", 17, field.TypeInt64, field.TypeTime),
		field.Map("durations", 18, field.TypeString, field.TypeDuration),
		field.Map("addresses", 19, field.TypeString, Address.Type).MaxLen(100),
	}
}

// GetUser asks for one user.
type GetUser struct{ schema.Message }

// Fields of GetUser.
func (GetUser) Fields() []schema.Field {
	return []schema.Field{field.Int64("id", 1).Range(1, 1<<53)}
}

// CreateUser asks to create a user.
type CreateUser struct{ schema.Message }

// Fields of CreateUser.
func (CreateUser) Fields() []schema.Field {
	return []schema.Field{
		field.String("name", 1).NotEmpty().MaxLen(64),
		field.Strings("emails", 2).MinLen(1),
		field.Enum("role", 3).EnumName("UserRole").Values("member", "admin").Value("owner", 10),
		field.Message("address", 4, Address.Type).NotEmpty(),
	}
}

// TouchUser records that a user was seen.
type TouchUser struct{ schema.Message }

// Fields of TouchUser.
func (TouchUser) Fields() []schema.Field {
	return []schema.Field{
		field.Int64("id", 1),
		field.Time("at", 2),
	}
}

// ListUsers asks for a page of users.
type ListUsers struct{ schema.Message }

// Fields of ListUsers.
func (ListUsers) Fields() []schema.Field {
	return []schema.Field{
		field.Int32("page_size", 1).Range(1, 1000),
		field.String("page_token", 2).Optional(),
		field.String("query", 3).MaxLen(256),
	}
}

// UserList is a page of users.
type UserList struct{ schema.Message }

// Fields of UserList.
func (UserList) Fields() []schema.Field {
	return []schema.Field{
		field.Messages("users", 1, User.Type),
		field.String("next_page_token", 2),
	}
}

// Users manages users.
type Users struct{ schema.Service }

// Methods of Users.
func (Users) Methods() []schema.Method {
	return []schema.Method{
		rpc.Unary("Get", GetUser.Type, User.Type).
			Comment("Get returns one user.").
			Idempotent().Timeout(time.Second).TryTimeout(300*time.Millisecond).
			Retry(3, 50*time.Millisecond).Backoff(2, time.Second).Jitter(0.2).
			HashKey("id"),
		rpc.Unary("Create", CreateUser.Type, User.Type).Mock(rpc.ReturnEmpty()),
		rpc.Unary("Guest", GetUser.Type, User.Type).
			Mock(rpc.ReturnValue(rpc.Values{"id": 0, "name": "guest"})),
		rpc.Unary("Delete", GetUser.Type, User.Type).
			Mock(rpc.Fail("Unavailable", "deletes are disabled").Force()),
		rpc.Oneway("Touch", TouchUser.Type).HashKey("id"),
		rpc.Unary("Audit", TouchUser.Type, User.Type).FaultMode(rpc.Failsafe),
		rpc.Unary("Search", ListUsers.Type, UserList.Type).Idempotent().FaultMode(rpc.Forking(2)),
		rpc.Unary("List", ListUsers.Type, UserList.Type).Idempotent().Hedge(50 * time.Millisecond).FaultMode(rpc.Failover),
		rpc.Unary("Rename", CreateUser.Type, User.Type).FaultMode(rpc.Failfast).Timeout(time.Second),
		rpc.Unary("Tree", GetUser.Type, Node.Type),
		rpc.Unary("Echo", Scalars.Type, Scalars.Type),
		rpc.Unary("EchoOptionals", Optionals.Type, Optionals.Type),
		rpc.Unary("EchoLists", Lists.Type, Lists.Type),
		rpc.Unary("EchoMaps", Maps.Type, Maps.Type),
	}
}

// Annotations of Users.
func (Users) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Package("users"),
		schema.Group("HK"),
		schema.Version("1.2.0"),
		schema.RateLimit(300, 500),
		schema.Breaker(0.5, 20, 5*time.Second),
		schema.Balance(schema.ConsistentHash),
	}
}

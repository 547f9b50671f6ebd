// Package schema is yrpc's schema DSL: a user declares messages and services
// as Go structs that embed Message or Service, the way ent declares
// entities, and `yrpcc generate` turns them into codecs, dispatch tables and
// typed stubs.
//
// A message lists its fields with the builders of package
// github.com/yrpc/yrpc/schema/field; a service lists its methods with the
// builders of package github.com/yrpc/yrpc/schema/rpc. Annotations (Group,
// Version, RateLimit, Breaker, Balance, Allow, Package) attach service-wide
// policy; a message's ProtoName keeps its protobuf name when its Go type is
// renamed.
//
//	// User is a message.
//	type User struct{ schema.Message }
//
//	func (User) Fields() []schema.Field {
//		return []schema.Field{
//			field.Int64("id", 1),
//			field.String("name", 2).MaxLen(64),
//			field.Message("address", 3, Address.Type),
//		}
//	}
//
//	// Users is a service.
//	type Users struct{ schema.Service }
//
//	func (Users) Methods() []schema.Method {
//		return []schema.Method{
//			rpc.Unary("Get", GetUser.Type, User.Type).Idempotent(),
//		}
//	}
//
// A message is referenced by the method expression of its Type method
// (Address.Type), which every type embedding Message has. Builders never
// panic: a mistake is recorded on the descriptor with the file:line of the
// builder call and the loader (package github.com/yrpc/yrpc/gen/load)
// reports all of them at once.
//
// The schema package runs only at generation time; generated code never
// imports it.
package schema

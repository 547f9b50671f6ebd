package schema_test

import (
	"fmt"
	"time"

	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/field"
	"github.com/yrpc/yrpc/schema/rpc"
)

// User is a message.
type User struct{ schema.Message }

// Fields of User.
func (User) Fields() []schema.Field {
	return []schema.Field{
		field.Int64("id", 1),
		field.String("name", 2).Comment("display name").MaxLen(64),
		field.Strings("emails", 3),
		field.Enum("role", 4).Values("member", "admin"),
		field.Message("address", 5, Address.Type),
		field.Time("created_at", 6),
		field.Map("labels", 7, field.TypeString, field.TypeString),
	}
}

// Address is a message.
type Address struct{ schema.Message }

// GetUser asks for a user.
type GetUser struct{ schema.Message }

// Users is a service.
type Users struct{ schema.Service }

// Methods of Users.
func (Users) Methods() []schema.Method {
	return []schema.Method{
		rpc.Unary("Get", GetUser.Type, User.Type).
			Idempotent().Timeout(300*time.Millisecond).
			Retry(3, 50*time.Millisecond).HashKey("id"),
		rpc.Oneway("Touch", GetUser.Type),
	}
}

// Annotations of Users.
func (Users) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Group("HK"),
		schema.RateLimit(300, 500),
		schema.Balance(schema.ConsistentHash),
	}
}

// The loader calls a schema's methods and reads the descriptors; a builder
// mistake is recorded with the call that made it.
func Example() {
	for _, f := range (User{}).Fields() {
		d := f.Descriptor()
		typ := d.Kind
		if d.Message != "" {
			typ = d.Message
		}
		if d.List {
			typ = "[]" + typ
		}
		if d.MapKey != "" {
			typ = "map[" + d.MapKey + "]" + typ
		}
		fmt.Println(d.Number, d.Name, typ)
	}
	for _, m := range (Users{}).Methods() {
		d := m.Descriptor()
		fmt.Printf("%s %s(%s) returns (%s) timeout=%v\n", d.Kind, d.Name, d.Request, d.Response, d.Timeout)
	}
	for _, a := range (Users{}).Annotations() {
		fmt.Println(a.Descriptor().Call)
	}
	bad := field.String("name", 2).MaxLen(-1)
	fmt.Println(bad.Descriptor().Errors[0])
	// Output:
	// 1 id int64
	// 2 name string
	// 3 emails []string
	// 4 role enum
	// 5 address Address
	// 6 created_at time
	// 7 labels map[string]string
	// unary Get(GetUser) returns (User) timeout=300ms
	// oneway Touch(GetUser) returns () timeout=0s
	// schema.Group("HK")
	// schema.RateLimit(300, 500)
	// schema.Balance("consistent_hash")
	// field.String("name", 2).MaxLen(-1): max length must be >= 1
}

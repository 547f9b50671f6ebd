package mixin_test

import (
	"fmt"

	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/field"
	"github.com/yrpc/yrpc/schema/mixin"
)

// Audit adds creation and update times to the messages that include it.
type Audit struct{ mixin.Schema }

// Fields of Audit.
func (Audit) Fields() []schema.Field {
	return []schema.Field{
		field.Time("created_at", 100),
		field.Time("updated_at", 101).Optional(),
	}
}

// User includes Audit.
type User struct{ schema.Message }

// Mixin of User.
func (User) Mixin() []schema.Mixin { return []schema.Mixin{Audit{}} }

// Fields of User.
func (User) Fields() []schema.Field {
	return []schema.Field{field.Int64("id", 1)}
}

// The loader puts a mixin's fields before the message's own.
func Example() {
	var fields []schema.Field
	for _, m := range (User{}).Mixin() {
		fields = append(fields, m.Fields()...)
	}
	fields = append(fields, User{}.Fields()...)
	for _, f := range fields {
		d := f.Descriptor()
		fmt.Println(d.Number, d.Name, d.Kind, d.Optional)
	}
	// Output:
	// 100 created_at time false
	// 101 updated_at time true
	// 1 id int64 false
}

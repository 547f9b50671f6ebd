// Package mixin provides Schema, the base type of reusable field sets that
// message schemas include through their Mixin method, as in ent:
//
//	// Audit adds creation and update times.
//	type Audit struct{ mixin.Schema }
//
//	func (Audit) Fields() []schema.Field {
//		return []schema.Field{
//			field.Time("created_at", 100),
//			field.Time("updated_at", 101),
//		}
//	}
//
//	func (User) Mixin() []schema.Mixin { return []schema.Mixin{Audit{}} }
//
// A mixin's fields come before the message's own fields; wire numbers are
// explicit, so the order never changes the encoding.
package mixin

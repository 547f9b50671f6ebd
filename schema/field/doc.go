// Package field declares message fields for yrpc schemas.
//
// Every constructor takes the field's schema name (snake_case, e.g.
// "created_at"; the Go name is CreatedAt) and its explicit wire number:
//
//	field.Int64("id", 1)
//	field.String("name", 2).MaxLen(64).Comment("display name")
//	field.Enum("role", 3).Values("member", "admin")
//	field.Message("address", 4, Address.Type).Optional()
//	field.Strings("emails", 5)
//	field.List("scores", 6, field.TypeSint32)
//	field.Messages("friends", 7, User.Type)
//	field.Map("labels", 8, field.TypeString, field.TypeString)
//	field.Map("homes", 9, field.TypeString, Address.Type)
//
// Scalars: Bool, Int32, Int64, Uint32, Uint64, Sint32, Sint64 (zigzag),
// Fixed32, Fixed64, Sfixed32, Sfixed64, Float32, Float64, String, Bytes,
// Enum, Time (time.Time, google.protobuf.Timestamp), Duration
// (time.Duration, google.protobuf.Duration) and Message.
//
// Lists: the plural of each scalar constructor (Bools, Int32s, ..., Strings,
// BytesList, Enums, Times, Durations, Messages), or List with an element
// Type or a message reference. Maps: Map with a key Type (an integer kind,
// bool or string) and a value Type or message reference.
//
// Every constructor returns a *Builder whose modifiers chain. A modifier
// that does not apply to the field (MaxLen on an int, Range on a string) or
// gets a bad argument is recorded as an error naming the call and the
// schema file:line; nothing panics.
package field

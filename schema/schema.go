package schema

// Message is the base type of a message schema: embed it in a struct and
// define Fields (and optionally Mixin, Annotations, Reserved). It has no
// state: its zero value is ready to use, it is safe for concurrent use, and
// its methods return empty declarations.
type Message struct{}

// Type is a marker: the method expression T.Type of a message schema T
// references T in field and method declarations, e.g.
// field.Message("address", 5, Address.Type). It does nothing when called.
func (Message) Type() {}

// Fields returns no fields; a message schema overrides it.
func (Message) Fields() []Field { return nil }

// Mixin returns no mixins.
func (Message) Mixin() []Mixin { return nil }

// Annotations returns no annotations.
func (Message) Annotations() []Annotation { return nil }

// Reserved returns no reserved field numbers; a message schema that retired
// fields returns their numbers so that no new field reuses them.
func (Message) Reserved() []int32 { return nil }

func (Message) message() {}

// Service is the base type of a service schema: embed it in a struct and
// define Methods (and optionally Annotations). Like Message, it has no
// state and its zero value is ready to use.
type Service struct{}

// Methods returns no methods; a service schema overrides it.
func (Service) Methods() []Method { return nil }

// Annotations returns no annotations.
func (Service) Annotations() []Annotation { return nil }

func (Service) service() {}

// MessageSchema is implemented by every type that embeds Message. The loader
// uses it to call a message schema's methods.
type MessageSchema interface {
	Type()
	Fields() []Field
	Mixin() []Mixin
	Annotations() []Annotation
	Reserved() []int32
	message()
}

// ServiceSchema is implemented by every type that embeds Service.
type ServiceSchema interface {
	Methods() []Method
	Annotations() []Annotation
	service()
}

// Mixin is a reusable set of fields and annotations that message schemas
// include through their Mixin method, as in ent. Embed
// github.com/yrpc/yrpc/schema/mixin.Schema to implement it.
type Mixin interface {
	Fields() []Field
	Annotations() []Annotation
}

// Field is a field declaration, built by package
// github.com/yrpc/yrpc/schema/field.
type Field interface {
	Descriptor() *FieldDescriptor
}

// Method is a method declaration, built by package
// github.com/yrpc/yrpc/schema/rpc.
type Method interface {
	Descriptor() *MethodDescriptor
}

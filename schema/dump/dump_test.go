package dump_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/schema"
	"github.com/yrpc/yrpc/schema/dump"
	"github.com/yrpc/yrpc/schema/field"
	"github.com/yrpc/yrpc/schema/mixin"
	"github.com/yrpc/yrpc/schema/rpc"
)

const pkg = "github.com/yrpc/yrpc/schema/dump_test"

type Stamp struct{ mixin.Schema }

func (Stamp) Fields() []schema.Field { return []schema.Field{field.Time("at", 100)} }
func (Stamp) Annotations() []schema.Annotation {
	return []schema.Annotation{schema.ProtoName("Stamped")}
}

type User struct{ schema.Message }

func (User) Mixin() []schema.Mixin { return []schema.Mixin{Stamp{}} }
func (User) Fields() []schema.Field {
	return []schema.Field{field.Int64("id", 1), nil, field.String("name", 2).MaxLen(0)}
}
func (User) Annotations() []schema.Annotation {
	return []schema.Annotation{schema.Package("acme"), schema.Group("x"), schema.ProtoName("Person"), schema.ProtoName("Human")}
}
func (User) Reserved() []int32 { return []int32{9} }

type Boom struct{ schema.Message }

func (Boom) Fields() []schema.Field { panic("boom") }

// foreign is a field whose descriptor references a message of another
// package.
type foreign struct{}

func (foreign) Descriptor() *schema.FieldDescriptor {
	return &schema.FieldDescriptor{Name: "x", Number: 3, Kind: "message", Message: "T", MessagePkg: "example.com/other"}
}

type Foreign struct{ schema.Message }

func (Foreign) Fields() []schema.Field { return []schema.Field{foreign{}} }

type Users struct{ schema.Service }

func (Users) Methods() []schema.Method {
	return []schema.Method{rpc.Unary("Get", User.Type, User.Type).Timeout(-1)}
}
func (Users) Annotations() []schema.Annotation {
	return []schema.Annotation{schema.Version("1"), schema.Version("2"), schema.Package("other"), schema.RateLimit(1, 1), schema.ProtoName("U")}
}

func TestDumper(t *testing.T) {
	d := dump.New(pkg)
	d.Message("User", User{})
	d.Message("Boom", Boom{})
	d.Message("Foreign", Foreign{})
	d.Service("Users", Users{})
	var buf bytes.Buffer
	if code := d.Write(&buf); code != 0 {
		t.Fatalf("Write = %d", code)
	}
	var out dump.Output
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Package != "acme" {
		t.Errorf("package %q", out.Package)
	}
	u := out.Messages[0]
	if len(u.Fields) != 3 || u.Fields[0].Name != "at" || u.Fields[1].Name != "id" || u.Reserved[0] != 9 || u.ProtoName != "Person" {
		t.Errorf("User: %+v", u)
	}
	if s := out.Services[0]; s.Version != "1" || s.RateLimit == nil || len(s.Methods) != 1 {
		t.Errorf("Users: %+v", s)
	}
	var msgs []string
	for _, p := range out.Problems {
		msgs = append(msgs, p.Type+": "+p.Msg)
		if strings.Contains(p.Msg, "panicked") && !strings.Contains(p.Pos, "dump_test.go:") {
			t.Errorf("panic position %q, want dump_test.go", p.Pos)
		}
	}
	got := strings.Join(msgs, "\n")
	for _, want := range []string{
		"User: User.Fields()[1] is nil",
		`User: field.String("name", 2).MaxLen(0): max length must be >= 1`,
		`User: schema.Group("x"): applies to services, not to message User`,
		`User: schema.ProtoName("Stamped"): names one message; put it in User.Annotations, not in a mixin`,
		`User: schema.ProtoName("Human"): the protobuf name is already set by schema.ProtoName("Person")`,
		`Users: schema.ProtoName("U"): applies to messages, not to service Users`,
		"Boom: Boom.Fields panicked: boom",
		`Foreign: field "x" references example.com/other.T, which is outside the schema package ` + pkg,
		`Users: rpc.Unary("Get", User.Type, User.Type).Timeout(-1ns): timeout must be > 0`,
		`Users: schema.Version("2"): version already set by schema.Version("1")`,
		`Users: schema.Package("other"): conflicts with schema.Package("acme") at `,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q", want)
		}
	}
	if len(out.Problems) != 11 {
		t.Errorf("%d problems:\n%s", len(out.Problems), got)
	}
}

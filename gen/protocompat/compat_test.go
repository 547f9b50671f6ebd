package protocompat_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/yrpc/yrpc/examples/users/userrpc"
	"github.com/yrpc/yrpc/gen/protocompat/userspb"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/codec/codectest"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// vtMessage is a protoc-gen-go message with vtprotobuf's methods.
type vtMessage interface {
	proto.Message
	MarshalVT() ([]byte, error)
	UnmarshalVT([]byte) error
}

// pair is a yrpc message type and its protoc-generated twin.
type pair struct {
	name  string
	yrpc  func() rt.Message
	proto func() vtMessage
}

var pairs = []pair{
	{"User", func() rt.Message { return new(userrpc.User) }, func() vtMessage { return new(userspb.User) }},
	{"Address", func() rt.Message { return new(userrpc.Address) }, func() vtMessage { return new(userspb.Address) }},
	{"Node", func() rt.Message { return new(userrpc.Node) }, func() vtMessage { return new(userspb.Node) }},
	{"Scalars", func() rt.Message { return new(userrpc.Scalars) }, func() vtMessage { return new(userspb.Scalars) }},
	{"Optionals", func() rt.Message { return new(userrpc.Optionals) }, func() vtMessage { return new(userspb.Optionals) }},
	{"Lists", func() rt.Message { return new(userrpc.Lists) }, func() vtMessage { return new(userspb.Lists) }},
	{"Maps", func() rt.Message { return new(userrpc.Maps) }, func() vtMessage { return new(userspb.Maps) }},
	{"GetUser", func() rt.Message { return new(userrpc.GetUser) }, func() vtMessage { return new(userspb.GetUser) }},
	{"CreateUser", func() rt.Message { return new(userrpc.CreateUser) }, func() vtMessage { return new(userspb.CreateUser) }},
	{"TouchUser", func() rt.Message { return new(userrpc.TouchUser) }, func() vtMessage { return new(userspb.TouchUser) }},
	{"ListUsers", func() rt.Message { return new(userrpc.ListUsers) }, func() vtMessage { return new(userspb.ListUsers) }},
	{"UserList", func() rt.Message { return new(userrpc.UserList) }, func() vtMessage { return new(userspb.UserList) }},
}

// TestCompat: random yrpc value -> yrpc encode -> protobuf decode ->
// protobuf encode -> yrpc decode -> equal, and the same through vtprotobuf.
// protobuf must understand every field (no unknown fields after decoding)
// and agree on the size.
func TestCompat(t *testing.T) {
	for i, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			f := &codectest.Filler{Rand: rand.New(rand.NewPCG(uint64(i), 42))}
			for n := range 300 {
				in := p.yrpc()
				f.Fill(in)
				wire := in.MarshalAppend(nil)

				pm := p.proto()
				if err := proto.Unmarshal(wire, pm); err != nil {
					t.Fatalf("value %d: protobuf cannot decode yrpc's encoding: %v\n%+v", n, err, in)
				}
				if path := unknownField(pm.ProtoReflect(), p.name); path != "" {
					t.Fatalf("value %d: protobuf sees unknown fields in %s", n, path)
				}
				if got := proto.Size(pm); got != len(wire) {
					t.Fatalf("value %d: protobuf size %d, yrpc size %d", n, got, len(wire))
				}
				back, err := proto.Marshal(pm)
				if err != nil {
					t.Fatal(err)
				}
				out := p.yrpc()
				if err := out.Unmarshal(back); err != nil {
					t.Fatalf("value %d: yrpc cannot decode protobuf's encoding: %v", n, err)
				}
				if !cmp.Equal(in, out) {
					t.Fatalf("value %d: yrpc -> protobuf -> yrpc differs (-in +out):\n%s", n, cmp.Diff(in, out))
				}

				vm := p.proto()
				if err := vm.UnmarshalVT(wire); err != nil {
					t.Fatalf("value %d: vtprotobuf cannot decode yrpc's encoding: %v", n, err)
				}
				vback, err := vm.MarshalVT()
				if err != nil {
					t.Fatal(err)
				}
				out = p.yrpc()
				if err := out.Unmarshal(vback); err != nil || !cmp.Equal(in, out) {
					t.Fatalf("value %d: yrpc -> vtprotobuf -> yrpc differs (err %v):\n%s", n, err, cmp.Diff(in, out))
				}
			}
		})
	}
}

// unknownField returns the path of the first message in m (recursively)
// that holds unknown fields, or "".
func unknownField(m protoreflect.Message, path string) string {
	if len(m.GetUnknown()) > 0 {
		return path
	}
	found := ""
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		sub := path + "." + string(fd.Name())
		switch {
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				found = unknownField(mv.Message(), sub)
				return found == ""
			})
		case fd.IsList() && fd.Message() != nil:
			for i := range v.List().Len() {
				if found = unknownField(v.List().Get(i).Message(), sub); found != "" {
					break
				}
			}
		case !fd.IsMap() && !fd.IsList() && fd.Message() != nil:
			found = unknownField(v.Message(), sub)
		}
		return found == ""
	})
	return found
}

// TestUnknownFields: a protobuf message carrying fields that the yrpc
// schema does not declare (every wire type, groups included) decodes in
// yrpc to the known fields only.
func TestUnknownFields(t *testing.T) {
	pm := &userspb.User{Id: 7, Name: "ann", Emails: []string{"a@b"}, Labels: map[string]string{"k": "v"}}
	var unknown []byte
	unknown = protowire.AppendTag(unknown, 50, protowire.VarintType)
	unknown = protowire.AppendVarint(unknown, 1<<63)
	unknown = protowire.AppendTag(unknown, 51, protowire.Fixed32Type)
	unknown = protowire.AppendFixed32(unknown, 3)
	unknown = protowire.AppendTag(unknown, 52, protowire.Fixed64Type)
	unknown = protowire.AppendFixed64(unknown, 4)
	unknown = protowire.AppendTag(unknown, 53, protowire.BytesType)
	unknown = protowire.AppendBytes(unknown, []byte("hello"))
	unknown = protowire.AppendTag(unknown, 54, protowire.StartGroupType)
	unknown = protowire.AppendTag(unknown, 1, protowire.VarintType)
	unknown = protowire.AppendVarint(unknown, 5)
	unknown = protowire.AppendTag(unknown, 54, protowire.EndGroupType)
	unknown = protowire.AppendTag(unknown, 6, protowire.VarintType) // reserved in the schema
	unknown = protowire.AppendVarint(unknown, 6)
	pm.ProtoReflect().SetUnknown(unknown)
	wire, err := proto.Marshal(pm)
	if err != nil {
		t.Fatal(err)
	}
	var got userrpc.User
	if err := got.Unmarshal(wire); err != nil {
		t.Fatal(err)
	}
	want := &userrpc.User{ID: 7, Name: "ann", Emails: []string{"a@b"}, Labels: map[string]string{"k": "v"}}
	if diff := cmp.Diff(want, &got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// TestEmptyVersusAbsent: Optional fields set to zero values, present empty
// bytes and empty list elements survive yrpc -> protobuf -> yrpc, and
// protobuf sees them as present.
func TestEmptyVersusAbsent(t *testing.T) {
	var (
		f    = false
		zero = int32(0)
		txt  = ""
		red  = userrpc.ColorRed
		at   = time.Unix(0, 0).UTC()
		ttl  = time.Duration(0)
	)
	in := &userrpc.Optionals{Flag: &f, I32: &zero, Text: &txt, Data: []byte{}, Color: &red, At: &at, TTL: &ttl}
	pm := new(userspb.Optionals)
	if err := proto.Unmarshal(in.MarshalAppend(nil), pm); err != nil {
		t.Fatal(err)
	}
	if pm.Flag == nil || pm.I32 == nil || pm.Text == nil || pm.Data == nil || pm.Color == nil || pm.At == nil || pm.Ttl == nil || pm.I64 != nil {
		t.Fatalf("protobuf presence differs: %v", pm)
	}
	back, err := proto.Marshal(pm)
	if err != nil {
		t.Fatal(err)
	}
	var out userrpc.Optionals
	if err := out.Unmarshal(back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, &out); diff != "" {
		t.Fatalf("(-in +out):\n%s", diff)
	}
	if out.Data == nil {
		t.Fatal("present empty bytes decoded as absent")
	}

	lists := &userrpc.Lists{Texts: []string{"", "x", ""}, Blobs: [][]byte{{}, {1}}}
	pl := new(userspb.Lists)
	if err := proto.Unmarshal(lists.MarshalAppend(nil), pl); err != nil || len(pl.Texts) != 3 || len(pl.Blobs) != 2 {
		t.Fatalf("protobuf decodes empty list elements as %v (err %v)", pl, err)
	}
}

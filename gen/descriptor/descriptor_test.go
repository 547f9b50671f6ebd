package descriptor_test

import (
	"encoding/hex"
	"testing"

	"github.com/yrpc/yrpc/gen/descriptor"
)

// TestMarshal encodes the descriptor of this file by hand and compares it
// with protoc 3.21's (protoc --descriptor_set_out, the set's one file):
//
//	syntax = "proto3";
//	package p;
//	message M {
//	  optional int32 a_b = 1 [deprecated = true];
//	  repeated sint64 b = 2 [packed = false];
//	  map<string, M> c = 3;
//	  reserved 9;
//	}
//	enum E {
//	  E_X = 0;
//	  E_Y = -3;
//	}
//	service S {
//	  rpc R(stream M) returns (stream M) {
//	    option idempotency_level = IDEMPOTENT;
//	  }
//	}
//
// It pins what presence means in descriptor.proto's proto2 fields: a
// oneof index of 0, an enum value numbered 0 and packed = false are
// written; streaming flags only when set; negative numbers take ten bytes.
// gen/proto's tests compare whole schemas with protoc when it is installed.
func TestMarshal(t *testing.T) {
	zero, no := int32(0), false
	m := &descriptor.Message{Name: "M",
		Fields: []*descriptor.Field{
			{Name: "a_b", Number: 1, Label: descriptor.LabelOptional, Type: descriptor.TypeInt32, Deprecated: true,
				OneofIndex: &zero, JSONName: "aB", Proto3Optional: true},
			{Name: "b", Number: 2, Label: descriptor.LabelRepeated, Type: descriptor.TypeSint64, Packed: &no, JSONName: "b"},
			{Name: "c", Number: 3, Label: descriptor.LabelRepeated, Type: descriptor.TypeMessage, TypeName: ".p.M.CEntry", JSONName: "c"},
		},
		Nested: []*descriptor.Message{{Name: "CEntry", MapEntry: true, Fields: []*descriptor.Field{
			{Name: "key", Number: 1, Label: descriptor.LabelOptional, Type: descriptor.TypeString, JSONName: "key"},
			{Name: "value", Number: 2, Label: descriptor.LabelOptional, Type: descriptor.TypeMessage, TypeName: ".p.M", JSONName: "value"},
		}}},
		Oneofs:   []string{"_a_b"},
		Reserved: []descriptor.Range{{Start: 9, End: 10}},
	}
	f := &descriptor.File{
		Name: "p.proto", Package: "p", Syntax: "proto3",
		Messages: []*descriptor.Message{m},
		Enums:    []*descriptor.Enum{{Name: "E", Values: []descriptor.EnumValue{{Name: "E_X", Number: 0}, {Name: "E_Y", Number: -3}}}},
		Services: []*descriptor.Service{{Name: "S", Methods: []*descriptor.Method{
			{Name: "R", InputType: ".p.M", OutputType: ".p.M", Idempotent: true, ClientStreaming: true, ServerStreaming: true},
		}}},
	}
	const protoc = "0a07702e70726f746f1201702294010a014d12180a03615f621801200128054202180148005202614288010112100a01621802200328124202100052016212190a016318032003280b320b2e702e4d2e43456e7472795201631a3a0a0643456e74727912100a036b657918012001280952036b6579121a0a0576616c756518022001280b32042e702e4d520576616c75653a02380142060a045f615f624a040809100a2a1e0a014512070a03455f58100012100a03455f5910fdffffffffffffffff01321d0a015312180a015212042e702e4d1a042e702e4d220390020228013001620670726f746f33"
	if got := hex.EncodeToString(f.Marshal()); got != protoc {
		t.Errorf("Marshal =\n%s\nprotoc:\n%s", got, protoc)
	}
	if got := (&descriptor.File{}).Marshal(); len(got) != 0 {
		t.Errorf("the empty file encodes as % x", got)
	}
}

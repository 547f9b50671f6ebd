package gen_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/internal/testspecs"
	"github.com/yrpc/yrpc/gen/internal/testspecs/kitchenrpc"
	"github.com/yrpc/yrpc/rt"
)

// TestEncodeMockMatchesGenerated: the bytes EncodeMock writes for the
// kitchen spec's mock value are those of the generated code's mock value
// (kitchenServiceForkMock), marshaled: the encoder and the emitted
// literal come from one resolved value and agree on every kind the value
// holds (its maps have one entry each, so the generated order is fixed).
func TestEncodeMockMatchesGenerated(t *testing.T) {
	spec := testspecs.Kitchen()
	var js string
	for _, m := range spec.Services[0].Methods {
		if m.Name == "Fork" {
			js = m.Mock.Value
		}
	}
	got, err := gen.EncodeMock(spec, "kitchen.KitchenService", "Fork", js)
	if err != nil {
		t.Fatal(err)
	}
	var fork rt.MethodDesc
	for _, m := range kitchenrpc.KitchenServiceServiceDesc.Methods {
		if m.Name == "Fork" {
			fork = m
		}
	}
	want := fork.Policy.Mock.Value().MarshalAppend(nil)
	if !bytes.Equal(got, want) {
		t.Errorf("EncodeMock = %x\nwant the generated mock's %x", got, want)
	}
}

// TestEncodeMockErrors covers what EncodeMock refuses before it reads the
// JSON (the JSON rules are tested through both entry points in
// yrpcc/internal/cli's TestMockRules).
func TestEncodeMockErrors(t *testing.T) {
	broken := validSpec()
	broken.Messages[0].Fields[0].Number = 0
	for _, tc := range []struct {
		name            string
		spec            *gen.Spec
		service, method string
		want            string
	}{
		{"nil spec", nil, "acme.users.Users", "Get", "gen: nil spec"},
		{"spec with problems", broken, "acme.users.Users", "Get", `gen: users.go:12: User: field "id": missing wire number`},
		{"service", validSpec(), "Users", "Get", `gen: the schema has no service "Users" (it has "acme.users.Users")`},
		{"method", validSpec(), "acme.users.Users", "Put", `gen: service acme.users.Users of the schema has no method "Put" (it has Get, Touch)`},
		{"oneway", validSpec(), "acme.users.Users", "Touch", "gen: method Touch is oneway: it has no response to mock"},
		{"stream", func() *gen.Spec {
			s := validSpec()
			s.Services[0].Methods[0].Kind = gen.MethodServerStream
			return s
		}(), "acme.users.Users", "Get", "gen: method Get is a server stream: streams cannot be mocked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gen.EncodeMock(tc.spec, tc.service, tc.method, `{}`)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("EncodeMock = %v, want %q", err, tc.want)
			}
			var ge *gen.Error
			if problems := tc.name == "spec with problems"; errors.As(err, &ge) != problems {
				t.Errorf("EncodeMock = %#v: an *Error is for a spec with problems only", err)
			}
		})
	}
}

// TestMockFloatLiterals: the floats that Go constants cannot hold (NaN,
// the infinities, -0.0) are emitted as math calls, typed for float32
// fields and pointers, so the generated mock value is the one that
// EncodeMock writes. Before, "-0.0" became the constant -0.0, which is 0.
func TestMockFloatLiterals(t *testing.T) {
	spec := validSpec()
	spec.Messages[0].Fields = append(spec.Messages[0].Fields,
		&gen.Field{Name: "f32", Number: 5, Kind: gen.KindFloat32},
		&gen.Field{Name: "f64", Number: 6, Kind: gen.KindFloat64},
		&gen.Field{Name: "opt_f32", Number: 7, Kind: gen.KindFloat32, Optional: true},
		&gen.Field{Name: "opt_f64", Number: 8, Kind: gen.KindFloat64, Optional: true},
		&gen.Field{Name: "f32s", Number: 9, Kind: gen.KindFloat32, List: true},
		&gen.Field{Name: "f64_by_id", Number: 10, Kind: gen.KindFloat64, MapKey: gen.KindInt32},
	)
	spec.Services[0].Methods[0].Mock = &gen.Mock{Action: "value", Value: `{"f32": "NaN", "f64": -0.0, "opt_f32": "-Infinity",
		"opt_f64": "Infinity", "f32s": [-0, 1.5, "NaN"], "f64_by_id": {"1": "-Infinity", "2": 0.25}}`}
	files, err := gen.Generate(spec, gen.Config{Package: "usersrpc"})
	if err != nil {
		t.Fatal(err)
	}
	var svc gen.File
	for _, f := range files {
		if f.Name == "users_service.yrpc.go" {
			svc = f
		}
	}
	checkFile(t, svc)
	code := strings.Join(strings.Fields(string(svc.Content)), " ")
	lacks := slices.DeleteFunc([]string{
		"v0 := float32(math.Inf(-1)) v1 := math.Inf(1)",
		"F32: float32(math.NaN()), F64: math.Copysign(0, -1), OptF32: &v0, OptF64: &v1,",
		"F32s: []float32{float32(math.Copysign(0, -1)), 1.5, float32(math.NaN())},",
		"F64ByID: map[int32]float64{ 1: math.Inf(-1), 2: 0.25, },",
	}, func(want string) bool { return strings.Contains(code, want) })
	if len(lacks) > 0 {
		t.Errorf("the generated mock lacks %q; generated:\n%s", lacks, svc.Content)
	}
}

// FuzzEncodeMock: for any JSON, EncodeMock returns bytes or an error,
// never panics, and its bytes decode with the generated code into a
// message that the generated marshaler writes back in as many bytes (the
// same bytes but for the order of map entries).
func FuzzEncodeMock(f *testing.F) {
	spec := testspecs.Kitchen()
	for _, m := range spec.Services[0].Methods {
		if m.Mock != nil && m.Mock.Action == "value" {
			f.Add(m.Mock.Value)
		}
	}
	f.Add(`{"a_float": "NaN", "a_double": -0.0, "nodes_by_id": {"1": {}, "01": {}}, "aString": "x", "a_string": "y"}`)
	f.Add(`{"an_int64": "-9223372036854775808", "a_uint32": 4294967295, "some_bytes": "", "opt_int32": 0, "colors_by_flag": {"t": 1, "f": "COLOR_RED"}}`)
	f.Fuzz(func(t *testing.T, js string) {
		b, err := gen.EncodeMock(spec, "kitchen.KitchenService", "Fork", js)
		if err != nil {
			return
		}
		var k kitchenrpc.Kitchen
		if err := k.Unmarshal(b); err != nil {
			t.Fatalf("EncodeMock(%s) = %x, which does not decode: %v", js, b, err)
		}
		if again := k.MarshalAppend(nil); len(again) != len(b) {
			t.Fatalf("EncodeMock(%s) = %x, decoded and encoded again %x", js, b, again)
		}
	})
}

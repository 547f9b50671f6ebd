package gen_test

import (
	"bytes"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/internal/testspecs"
)

func TestGenerateOutput(t *testing.T) {
	files, err := gen.Generate(testspecs.Kitchen(), gen.Config{Package: "kitchenrpc"})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		if i > 0 && files[i-1].Name >= f.Name {
			t.Errorf("files not sorted: %s before %s", files[i-1].Name, f.Name)
		}
		if !strings.HasSuffix(f.Name, ".yrpc.go") {
			t.Errorf("file %s does not end in .yrpc.go", f.Name)
		}
		if !bytes.HasPrefix(f.Content, []byte("// "+gen.Header+"\n")) {
			t.Errorf("%s lacks the header", f.Name)
		}
		if !bytes.Contains(f.Content, []byte("const _ = rt.SupportPackageIsVersion1")) {
			t.Errorf("%s lacks the version guard", f.Name)
		}
		if bytes.Contains(f.Content, []byte(`"reflect"`)) {
			t.Errorf("%s imports reflect", f.Name)
		}
		if _, err := parser.ParseFile(token.NewFileSet(), f.Name, f.Content, 0); err != nil {
			t.Errorf("%s does not parse: %v", f.Name, err)
		}
	}
}

func TestMethodID(t *testing.T) {
	// FNV-1a 32 of the full name; "a" is a published test vector.
	for name, want := range map[string]uint32{"a": 0xe40c292c, "bench.Hello/Say": 0xfe06e7b7} {
		if got := gen.MethodID(name); got != want {
			t.Errorf("MethodID(%q) = %#x, want %#x", name, got, want)
		}
	}
	if gen.MethodID("p.S/MMRaNcZK") != gen.MethodID("p.S/MBuCppvv") {
		t.Fatal("the known collision no longer collides")
	}
}

func msg(name string, fields ...*gen.Field) *gen.Message {
	return &gen.Message{Name: name, Fields: fields}
}

func field(name string, num int32, k gen.Kind) *gen.Field {
	return &gen.Field{Name: name, Number: num, Kind: k}
}

func unary(name, req, resp string) *gen.Method {
	return &gen.Method{Name: name, Request: req, Response: resp}
}

// TestGenerateErrors checks what Generate rejects, and that the error names
// the type and the call.
func TestGenerateErrors(t *testing.T) {
	req := func() *gen.Message {
		return msg("Req", field("id", 1, gen.KindInt64), field("tags", 2, gen.KindString))
	}
	tests := []struct {
		name string
		spec *gen.Spec
		cfg  gen.Config
		want []string
	}{
		{"no package", &gen.Spec{}, gen.Config{}, []string{"Config.Package"}},
		{"bad package", &gen.Spec{}, gen.Config{Package: "a-b"}, []string{`"a-b"`}},
		{"method ID collision", &gen.Spec{Package: "p", Messages: []*gen.Message{req()},
			Services: []*gen.Service{{Name: "S", Methods: []*gen.Method{unary("MMRaNcZK", "Req", "Req"), unary("MBuCppvv", "Req", "Req")}}}},
			gen.Config{Package: "p"}, []string{`method "MBuCppvv"`, "collides", `"p.S/MMRaNcZK"`}},
		{"duplicate method", &gen.Spec{Package: "p", Messages: []*gen.Message{req()},
			Services: []*gen.Service{{Name: "S", Methods: []*gen.Method{unary("A", "Req", "Req"), unary("A", "Req", "Req")}}}},
			gen.Config{Package: "p"}, []string{`service S: method "A": declared twice`}},
		{"unknown request", &gen.Spec{Services: []*gen.Service{{Name: "S", Methods: []*gen.Method{unary("A", "Nope", "")}}}},
			gen.Config{Package: "p"}, []string{`unknown request message "Nope"`, `unknown response message ""`}},
		{"mock JSON syntax", &gen.Spec{Messages: []*gen.Message{req()}, Services: []*gen.Service{{Name: "S", Methods: []*gen.Method{
			{Name: "A", Request: "Req", Response: "Req", Mock: &gen.Mock{Action: "value", Value: `{"id": }`}}}}}},
			gen.Config{Package: "p"}, []string{`method "A": Mock(ReturnValue): invalid JSON`}},
		{"mock unknown field", &gen.Spec{Messages: []*gen.Message{req()}, Services: []*gen.Service{{Name: "S", Methods: []*gen.Method{
			{Name: "A", Request: "Req", Response: "Req", Mock: &gen.Mock{Action: "value", Value: `{"nope": 1}`}}}}}},
			gen.Config{Package: "p"}, []string{`message Req has no field "nope"`}},
		{"mock wrong type", &gen.Spec{Messages: []*gen.Message{req()}, Services: []*gen.Service{{Name: "S", Methods: []*gen.Method{
			{Name: "A", Request: "Req", Response: "Req", Mock: &gen.Mock{Action: "value", Value: `{"id": "x"}`}}}}}},
			gen.Config{Package: "p"}, []string{`Req.id: want a int64, got a string`}},
		{"mock out of range", &gen.Spec{Messages: []*gen.Message{msg("R", field("n", 1, gen.KindInt32))}, Services: []*gen.Service{{Name: "S", Methods: []*gen.Method{
			{Name: "A", Request: "R", Response: "R", Mock: &gen.Mock{Action: "value", Value: `{"n": 3000000000}`}}}}}},
			gen.Config{Package: "p"}, []string{`R.n: 3000000000 is not a int32`}},
		{"mock bad code", &gen.Spec{Messages: []*gen.Message{req()}, Services: []*gen.Service{{Name: "S", Methods: []*gen.Method{
			{Name: "A", Request: "Req", Response: "Req", Mock: &gen.Mock{Action: "fail", Code: "Oops"}}}}}},
			gen.Config{Package: "p"}, []string{`unknown status code "Oops"`}},
		{"hash key unknown", &gen.Spec{Messages: []*gen.Message{req()}, Services: []*gen.Service{{Name: "S", Methods: []*gen.Method{
			{Name: "A", Request: "Req", Response: "Req", HashKey: "nope"}}}}},
			gen.Config{Package: "p"}, []string{`HashKey("nope"): message Req has no such field`}},
		{"name clash", &gen.Spec{Messages: []*gen.Message{msg("SClient"), msg("Req")},
			Services: []*gen.Service{{Name: "S", Methods: []*gen.Method{unary("A", "Req", "Req")}}}},
			gen.Config{Package: "p"}, []string{`Go name "SClient" clashes with message SClient`}},
		{"field clashes with a method", &gen.Spec{Messages: []*gen.Message{msg("M", field("size", 1, gen.KindInt32))}},
			gen.Config{Package: "p"}, []string{`message M: field "size": Go name "Size" clashes`}},
		{"field Go names clash", &gen.Spec{Messages: []*gen.Message{msg("M", field("user_id", 1, gen.KindInt32), field("userID", 2, gen.KindInt32))}},
			gen.Config{Package: "p"}, []string{`"UserID" clashes with field "user_id"`}},
		{"reserved number", &gen.Spec{Messages: []*gen.Message{msg("M", field("a", 19500, gen.KindInt32))}},
			gen.Config{Package: "p"}, []string{`invalid wire number 19500`}},
		{"duplicate number", &gen.Spec{Messages: []*gen.Message{msg("M", field("a", 1, gen.KindInt32), field("b", 1, gen.KindInt32))}},
			gen.Config{Package: "p"}, []string{`wire number 1 already used by field "a"`}},
		{"unknown message", &gen.Spec{Messages: []*gen.Message{msg("M", &gen.Field{Name: "a", Number: 1, Kind: gen.KindMessage, Message: "X"})}},
			gen.Config{Package: "p"}, []string{`unknown message "X"`}},
		{"float map key", &gen.Spec{Messages: []*gen.Message{msg("M", &gen.Field{Name: "a", Number: 1, Kind: gen.KindInt32, MapKey: gen.KindFloat64})}},
			gen.Config{Package: "p"}, []string{`map key kind "float64"`}},
		{"bad regexp", &gen.Spec{Messages: []*gen.Message{msg("M", &gen.Field{Name: "a", Number: 1, Kind: gen.KindString, Validate: gen.Validators{Match: "("}})}},
			gen.Config{Package: "p"}, []string{`Match("(")`}},
		{"range on a string", &gen.Spec{Messages: []*gen.Message{msg("M", &gen.Field{Name: "a", Number: 1, Kind: gen.KindString, Validate: gen.Validators{Max: new(float64)}})}},
			gen.Config{Package: "p"}, []string{`Range applies to numbers`}},
		{"enum without zero", &gen.Spec{Messages: []*gen.Message{msg("M", &gen.Field{Name: "a", Number: 1, Kind: gen.KindEnum,
			Enum: &gen.Enum{Name: "E", Values: []gen.EnumValue{{Name: "one", Number: 1}}}})}},
			gen.Config{Package: "p"}, []string{`enum "E": the first value must have number 0`}},
		{"file clash", &gen.Spec{Messages: []*gen.Message{msg("UsersService"), msg("Req")},
			Services: []*gen.Service{{Name: "Users", Methods: []*gen.Method{unary("A", "Req", "Req")}}}},
			gen.Config{Package: "p"}, []string{`"users_service.yrpc.go"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gen.Generate(tc.spec, tc.cfg)
			if err == nil {
				t.Fatal("Generate succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "gen: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

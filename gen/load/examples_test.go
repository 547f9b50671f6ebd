package load_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/load"
)

func loadExample(t *testing.T, name string) *gen.Spec {
	t.Helper()
	spec, err := load.Load(context.Background(), "../../examples/"+name+"/schema", load.Options{})
	if err != nil {
		t.Fatalf("Load(%s): %v", name, err)
	}
	if ps := gen.Check(spec); ps != nil {
		t.Fatalf("gen.Check(%s): %v", name, ps)
	}
	return spec
}

func TestGreeter(t *testing.T) {
	spec := loadExample(t, "greeter")
	want := &gen.Spec{
		Version:   gen.SpecVersion,
		SchemaPkg: "github.com/yrpc/yrpc/examples/greeter/schema",
		Package:   "greeter",
		Messages: []*gen.Message{
			{Name: "HelloRequest", Comment: "HelloRequest asks for a greeting.", Fields: []*gen.Field{
				{Name: "name", Number: 1, Kind: gen.KindString, Comment: "who to greet"},
			}},
			{Name: "HelloReply", Comment: "HelloReply carries the greeting.", Fields: []*gen.Field{
				{Name: "message", Number: 1, Kind: gen.KindString},
			}},
		},
		Services: []*gen.Service{{Name: "Greeter", Comment: "Greeter greets.", Methods: []*gen.Method{
			{Name: "SayHello", Kind: gen.MethodUnary, Comment: "SayHello answers with a greeting.", Request: "HelloRequest", Response: "HelloReply"},
		}}},
	}
	ignorePos := cmpopts.IgnoreFields(gen.Message{}, "Pos")
	if diff := cmp.Diff(want, spec, ignorePos, cmpopts.IgnoreFields(gen.Field{}, "Pos"), cmpopts.IgnoreFields(gen.Service{}, "Pos"), cmpopts.IgnoreFields(gen.Method{}, "Pos")); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	for _, pos := range []string{spec.Messages[0].Pos, spec.Messages[0].Fields[0].Pos, spec.Services[0].Pos, spec.Services[0].Methods[0].Pos} {
		if !strings.HasPrefix(pos, "greeter.go:") {
			t.Errorf("position %q, want greeter.go:LINE", pos)
		}
	}
}

// benchmarkFields are the fields of BenchmarkMessage in
// ../shared/bench/benchmark.proto.
const benchmarkFields = `
	string field1 = 1
	string field9 = 9
	string field18 = 18
	bool field80 = 80
	bool field81 = 81
	int32 field2 = 2
	int32 field3 = 3
	int32 field280 = 280
	int32 field6 = 6
	int64 field22 = 22
	string field4 = 4
	repeated fixed64 field5 = 5
	bool field59 = 59
	string field7 = 7
	int32 field16 = 16
	int32 field130 = 130
	bool field12 = 12
	bool field17 = 17
	bool field13 = 13
	bool field14 = 14
	int32 field104 = 104
	int32 field100 = 100
	int32 field101 = 101
	string field102 = 102
	string field103 = 103
	int32 field29 = 29
	bool field30 = 30
	int32 field60 = 60
	int32 field271 = 271
	int32 field272 = 272
	int32 field150 = 150
	int32 field23 = 23
	bool field24 = 24
	int32 field25 = 25
	bool field78 = 78
	int32 field67 = 67
	int32 field68 = 68
	int32 field128 = 128
	string field129 = 129
	int32 field131 = 131
`

func TestHello(t *testing.T) {
	spec := loadExample(t, "hello")
	if spec.Package != "bench" {
		t.Errorf("package %q, want bench", spec.Package)
	}
	if len(spec.Messages) != 1 || len(spec.Services) != 1 {
		t.Fatalf("%d messages, %d services", len(spec.Messages), len(spec.Services))
	}
	var got []string
	for _, f := range spec.Messages[0].Fields {
		kind := string(f.Kind)
		if f.List {
			kind = "repeated " + kind
		}
		got = append(got, fmt.Sprintf("%s %s = %d", kind, f.Name, f.Number))
	}
	want := strings.Fields(strings.TrimSpace(benchmarkFields))
	if diff := cmp.Diff(strings.Join(want, " "), strings.Join(strings.Fields(strings.Join(got, " ")), " ")); diff != "" {
		t.Errorf("BenchmarkMessage fields (-want +got):\n%s", diff)
	}
	if n := len(spec.Messages[0].Fields); n != 40 {
		t.Errorf("%d fields, want 40", n)
	}
	m := spec.Services[0].Methods[0]
	if spec.Services[0].Name != "Hello" || m.Name != "Say" || m.Request != "BenchmarkMessage" || m.Response != "BenchmarkMessage" {
		t.Errorf("service %s method %+v", spec.Services[0].Name, m)
	}
}

func TestUsers(t *testing.T) {
	spec := loadExample(t, "users")
	msgs := map[string]*gen.Message{}
	for _, m := range spec.Messages {
		msgs[m.Name] = m
		if !strings.HasPrefix(m.Pos, "users.go:") {
			t.Errorf("message %s position %q", m.Name, m.Pos)
		}
	}
	field := func(msg, name string) *gen.Field {
		t.Helper()
		for _, f := range msgs[msg].Fields {
			if f.Name == name {
				return f
			}
		}
		t.Fatalf("%s has no field %q", msg, name)
		return nil
	}

	// Every kind, plain, optional and as a list.
	kinds := []gen.Kind{gen.KindBool, gen.KindInt32, gen.KindInt64, gen.KindUint32, gen.KindUint64,
		gen.KindSint32, gen.KindSint64, gen.KindFixed32, gen.KindFixed64, gen.KindSfixed32,
		gen.KindSfixed64, gen.KindFloat32, gen.KindFloat64, gen.KindString, gen.KindBytes,
		gen.KindEnum, gen.KindTime, gen.KindDuration}
	for _, tc := range []struct {
		msg      string
		optional bool
		list     bool
	}{{"Scalars", false, false}, {"Optionals", true, false}, {"Lists", false, true}} {
		seen := map[gen.Kind]bool{}
		for _, f := range msgs[tc.msg].Fields {
			if f.Optional == tc.optional && f.List == tc.list {
				seen[f.Kind] = true
			}
		}
		for _, k := range kinds {
			if !seen[k] {
				t.Errorf("%s has no %s field (optional %v, list %v)", tc.msg, k, tc.optional, tc.list)
			}
		}
	}
	keys := map[gen.Kind]bool{}
	values := map[gen.Kind]bool{}
	for _, f := range msgs["Maps"].Fields {
		keys[f.MapKey], values[f.Kind] = true, true
	}
	for _, k := range kinds {
		if k != gen.KindFloat32 && k != gen.KindFloat64 && k != gen.KindBytes && k != gen.KindEnum && k != gen.KindTime && k != gen.KindDuration && !keys[k] {
			t.Errorf("Maps has no %s key", k)
		}
		if !values[k] {
			t.Errorf("Maps has no %s value", k)
		}
	}
	if !values[gen.KindMessage] {
		t.Error("Maps has no message value")
	}

	// Mixin fields come first; reserved numbers; enums; validators.
	if u := msgs["User"]; u.Fields[0].Name != "created_at" || u.Fields[1].Name != "updated_at" || !u.Fields[1].Optional {
		t.Errorf("User's first fields are %q, %q; want the Audit mixin's", u.Fields[0].Name, u.Fields[1].Name)
	}
	if diff := cmp.Diff([]int32{6, 12}, msgs["User"].Reserved); diff != "" {
		t.Errorf("User.Reserved: %s", diff)
	}
	role := field("User", "role").Enum
	if diff := cmp.Diff(&gen.Enum{Name: "UserRole", Values: []gen.EnumValue{{Name: "member", Number: 0}, {Name: "admin", Number: 1}, {Name: "owner", Number: 10}}}, role); diff != "" {
		t.Errorf("User.role enum (-want +got):\n%s", diff)
	}
	if e := field("Scalars", "color").Enum; e.Name != "Color" {
		t.Errorf("Scalars.color enum %q", e.Name)
	}
	if v := field("User", "name").Validate; !v.NotEmpty || v.MaxLen != 64 {
		t.Errorf("User.name validators %+v", v)
	}
	if v := field("Address", "zip").Validate; v.Match != `^[0-9]{5}$` {
		t.Errorf("Address.zip validators %+v", v)
	}
	if v := field("User", "age").Validate; v.Min == nil || *v.Min != 0 || *v.Max != 150 {
		t.Errorf("User.age validators %+v", v)
	}
	if f := field("User", "nickname"); !f.Deprecated || !f.Optional || f.Comment != "replaced by name" {
		t.Errorf("User.nickname %+v", f)
	}
	if f := field("Lists", "unpacked_i32s"); !f.Unpacked {
		t.Error("Lists.unpacked_i32s is packed")
	}
	if f := field("Node", "children"); f.Message != "Node" || !f.List {
		t.Errorf("Node.children %+v", f)
	}
	if f := field("Maps", "addresses"); f.MapKey != gen.KindString || f.Message != "Address" {
		t.Errorf("Maps.addresses %+v", f)
	}
	if f := field("Scalars", "last"); f.Number != 536870911 {
		t.Errorf("Scalars.last number %d", f.Number)
	}

	// The service: every annotation and every method policy.
	if len(spec.Services) != 1 {
		t.Fatalf("%d services", len(spec.Services))
	}
	s := spec.Services[0]
	wantSvc := gen.Service{Name: "Users", Group: "HK", Version: "1.2.0",
		RateLimit: &gen.RateLimit{Rate: 300, Burst: 500},
		Breaker:   &gen.Breaker{ErrorRate: 0.5, MinRequests: 20, OpenFor: 5 * time.Second},
		Balance:   "consistent_hash"}
	if diff := cmp.Diff(wantSvc, *s, cmpopts.IgnoreFields(gen.Service{}, "Comment", "Pos", "Methods")); diff != "" {
		t.Errorf("service (-want +got):\n%s", diff)
	}
	methods := map[string]*gen.Method{}
	for _, m := range s.Methods {
		methods[m.Name] = m
	}
	ignore := cmpopts.IgnoreFields(gen.Method{}, "Pos", "Comment")
	for _, want := range []*gen.Method{
		{Name: "Get", Kind: gen.MethodUnary, Request: "GetUser", Response: "User", Idempotent: true, Timeout: time.Second, TryTimeout: 300 * time.Millisecond,
			Retry:   &gen.Retry{Tries: 3, Interval: 50 * time.Millisecond, Backoff: 2, MaxInterval: time.Second, Jitter: 0.2},
			HashKey: "id"},
		{Name: "Create", Kind: gen.MethodUnary, Request: "CreateUser", Response: "User", Mock: &gen.Mock{Action: "empty"}},
		{Name: "Guest", Kind: gen.MethodUnary, Request: "GetUser", Response: "User", Mock: &gen.Mock{Action: "value", Value: `{"id":0,"name":"guest"}`}},
		{Name: "Delete", Kind: gen.MethodUnary, Request: "GetUser", Response: "User", Mock: &gen.Mock{Force: true, Action: "fail", Code: "Unavailable", Message: "deletes are disabled"}},
		{Name: "Touch", Kind: gen.MethodOneway, Request: "TouchUser", HashKey: "id"},
		{Name: "Audit", Kind: gen.MethodUnary, Request: "TouchUser", Response: "User", FaultMode: "failsafe"},
		{Name: "Search", Kind: gen.MethodUnary, Request: "ListUsers", Response: "UserList", Idempotent: true, FaultMode: "forking", Forks: 2},
		{Name: "List", Kind: gen.MethodUnary, Request: "ListUsers", Response: "UserList", Idempotent: true, FaultMode: "failover", Hedge: 50 * time.Millisecond},
		{Name: "Rename", Kind: gen.MethodUnary, Request: "CreateUser", Response: "User", FaultMode: "failfast", Timeout: time.Second},
	} {
		if diff := cmp.Diff(want, methods[want.Name], ignore); diff != "" {
			t.Errorf("method %s (-want +got):\n%s", want.Name, diff)
		}
	}
}

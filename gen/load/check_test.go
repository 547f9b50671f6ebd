package load_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/load"
)

// validSpec returns a small valid spec to break in each test case.
func validSpec() *gen.Spec {
	return &gen.Spec{
		Version: gen.SpecVersion,
		Package: "acme.users",
		Messages: []*gen.Message{
			{Name: "User", Pos: "users.go:10", Fields: []*gen.Field{
				{Name: "id", Number: 1, Kind: gen.KindInt64, Pos: "users.go:12"},
				{Name: "name", Number: 2, Kind: gen.KindString, Pos: "users.go:13"},
				{Name: "role", Number: 3, Kind: gen.KindEnum, Pos: "users.go:14", Enum: &gen.Enum{Name: "UserRole", Values: []gen.EnumValue{{Name: "member", Number: 0}, {Name: "admin", Number: 1}}}},
				{Name: "friends", Number: 4, Kind: gen.KindMessage, Message: "User", List: true, Pos: "users.go:15"},
			}},
			{Name: "GetUser", Pos: "users.go:20", Fields: []*gen.Field{
				{Name: "id", Number: 1, Kind: gen.KindInt64, Pos: "users.go:21"},
			}},
		},
		Services: []*gen.Service{{Name: "Users", Pos: "users.go:30", Methods: []*gen.Method{
			{Name: "Get", Request: "GetUser", Response: "User", Pos: "users.go:33", HashKey: "id", Idempotent: true},
			{Name: "Touch", Request: "GetUser", Oneway: true, Pos: "users.go:34"},
		}}},
	}
}

func TestCheckValid(t *testing.T) {
	if err := load.Check(validSpec()); err != nil {
		t.Fatal(err)
	}
}

func TestCheck(t *testing.T) {
	user := func(s *gen.Spec) *gen.Message { return s.Messages[0] }
	get := func(s *gen.Spec) *gen.Method { return s.Services[0].Methods[0] }
	for _, tc := range []struct {
		name   string
		mutate func(s *gen.Spec)
		want   string
	}{
		{"no package", func(s *gen.Spec) { s.Package = "" }, "the spec has no package name"},
		{"bad package", func(s *gen.Spec) { s.Package = "a-b" }, `package "a-b" is not dot-separated identifiers`},
		{"missing number", func(s *gen.Spec) { user(s).Fields[1].Number = 0 }, `users.go:13: User: field "name": missing wire number`},
		{"duplicate number", func(s *gen.Spec) { user(s).Fields[1].Number = 1 }, `users.go:13: User: field "name": wire number 1 is already used by field "id"`},
		{"reserved range", func(s *gen.Spec) { user(s).Fields[1].Number = 19500 }, `wire number 19500 is in protobuf's reserved range 19000-19999`},
		{"too large", func(s *gen.Spec) { user(s).Fields[1].Number = 536870912 }, `wire number 536870912 is out of the range 1-536870911`},
		{"reserved by message", func(s *gen.Spec) { user(s).Reserved = []int32{2} }, `wire number 2 is reserved by User.Reserved`},
		{"go clash", func(s *gen.Spec) { user(s).Fields[1].Name = "ID" }, `field "ID" and field "id" both become the Go field ID`},
		{"generated method", func(s *gen.Spec) { user(s).Fields[1].Name = "marshal_append" }, `clashes with the generated method User.MarshalAppend`},
		{"unknown message", func(s *gen.Spec) { user(s).Fields[3].Message = "Friend" }, `users.go:15: User: field "friends": unknown message "Friend"`},
		{"unknown kind", func(s *gen.Spec) { user(s).Fields[1].Kind = "text" }, `unknown kind "text"`},
		{"float map key", func(s *gen.Spec) { user(s).Fields[1].MapKey = gen.KindFloat64 }, `map key kind "float64" is not an integer kind, bool or string`},
		{"optional list", func(s *gen.Spec) { user(s).Fields[3].Optional = true }, "a list or map cannot be optional"},
		{"unpacked string", func(s *gen.Spec) { user(s).Fields[1].Unpacked = true }, "only a list of numbers, bools or enums can be unpacked"},
		{"enum zero", func(s *gen.Spec) { user(s).Fields[2].Enum.Values[0].Number = 5 }, `the first value "member" of enum UserRole is its zero value and must be numbered 0, not 5`},
		{"enum dup number", func(s *gen.Spec) { user(s).Fields[2].Enum.Values[1].Number = 0 }, `gives the values "member" and "admin" the same number 0`},
		{"enum dup name", func(s *gen.Spec) { user(s).Fields[2].Enum.Values[1].Name = "member" }, `declares the value "member" twice`},
		{"enum clash", func(s *gen.Spec) { user(s).Fields[2].Enum.Name = "GetUser" }, "Go name GetUser of enum GetUser of User.role clashes with message GetUser"},
		{"max len on int", func(s *gen.Spec) { user(s).Fields[0].Validate.MaxLen = 3 }, "length limits apply to strings, bytes, lists and maps"},
		{"range on string", func(s *gen.Spec) {
			one := 1.0
			user(s).Fields[1].Validate.Min, user(s).Fields[1].Validate.Max = &one, &one
		}, "range applies to number fields"},
		{"bad regexp", func(s *gen.Spec) { user(s).Fields[1].Validate.Match = "(" }, "bad regexp"},
		{"duplicate message", func(s *gen.Spec) { s.Messages[1].Name = "User" }, "Go name User of message User clashes with message User"},
		{"duplicate method", func(s *gen.Spec) { s.Services[0].Methods[1].Name = "Get" }, "users.go:34: Users: method Get is declared twice"},
		{"unknown request", func(s *gen.Spec) { get(s).Request = "Nope" }, `method Get: unknown request message "Nope"`},
		{"oneway response", func(s *gen.Spec) { s.Services[0].Methods[1].Response = "User" }, `a oneway method has no response, got "User"`},
		{"hash key missing", func(s *gen.Spec) { get(s).HashKey = "nope" }, `hash key "nope" is not a field of GetUser`},
		{"hash key list", func(s *gen.Spec) { get(s).Request = "User"; get(s).HashKey = "friends" }, `hash key "friends" must be a scalar or string field of User`},
		{"negative timeout", func(s *gen.Spec) { get(s).Timeout = -time.Second }, "negative timeout -1s"},
		{"retry tries", func(s *gen.Spec) { get(s).Retry = &gen.Retry{Tries: 0} }, "bad retry policy: tries 0"},
		{"hedge", func(s *gen.Spec) { get(s).Idempotent = false; get(s).Hedge = time.Millisecond }, "hedging (1ms) needs an idempotent method"},
		{"forks", func(s *gen.Spec) { get(s).FaultMode = "forking"; get(s).Forks = 1 }, "forking needs at least 2 forks, got 1"},
		{"fault mode", func(s *gen.Spec) { get(s).FaultMode = "panic" }, `unknown fault mode "panic"`},
		{"mock code", func(s *gen.Spec) { get(s).Mock = &gen.Mock{Action: "fail", Code: "Oops"} }, `mock fails with unknown status code "Oops"`},
		{"mock value", func(s *gen.Spec) { get(s).Mock = &gen.Mock{Action: "value", Value: `{"nick":"x"}`} }, `mock value sets "nick", which is not a field of User`},
		{"balance", func(s *gen.Spec) { s.Services[0].Balance = "fastest" }, `unknown balancer "fastest"`},
		{"service clash", func(s *gen.Spec) {
			s.Messages[1].Name = "UsersServer"
			get(s).Request = "UsersServer"
			s.Services[0].Methods[1].Request = "UsersServer"
		}, "Go name UsersServer of the generated code of service Users clashes with message UsersServer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec()
			tc.mutate(s)
			err := load.Check(s)
			var lerr *load.Error
			if !errors.As(err, &lerr) {
				t.Fatalf("Check = %v, want a *load.Error", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check =\n%v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func TestCheckAllProblems(t *testing.T) {
	s := validSpec()
	s.Messages[0].Fields[1].Number = 1
	s.Services[0].Methods[0].Request = "Nope"
	err := load.Check(s)
	var lerr *load.Error
	if !errors.As(err, &lerr) || len(lerr.Problems) != 2 {
		t.Fatalf("Check = %v, want 2 problems", err)
	}
	if !strings.HasPrefix(err.Error(), "load: schema has 2 problems:\n\tusers.go:13: User: ") {
		t.Errorf("error format:\n%v", err)
	}
}

package gen_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/internal/testspecs"
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
				{Name: "tags", Number: 2, Kind: gen.KindString, List: true, Pos: "users.go:22"},
			}},
		},
		Services: []*gen.Service{{Name: "Users", Pos: "users.go:30", Methods: []*gen.Method{
			{Name: "Get", Request: "GetUser", Response: "User", Pos: "users.go:33", HashKey: "id", Idempotent: true},
			{Name: "Touch", Request: "GetUser", Kind: gen.MethodOneway, Pos: "users.go:34"},
		}}},
	}
}

// generateProblems returns the problems of Generate's *gen.Error, or nil
// when Generate succeeds.
func generateProblems(t *testing.T, spec *gen.Spec) []gen.Problem {
	t.Helper()
	_, err := gen.Generate(spec, gen.Config{Package: "usersrpc"})
	if err == nil {
		return nil // a spec that passes Check
	}
	var gerr *gen.Error
	if !errors.As(err, &gerr) {
		t.Fatalf("Generate = %v, want a *gen.Error", err)
	}
	if !strings.HasPrefix(err.Error(), "gen: ") {
		t.Errorf("error %q lacks the package prefix", err)
	}
	return gerr.Problems
}

func TestCheckValid(t *testing.T) {
	for name, spec := range map[string]*gen.Spec{"valid": validSpec(), "kitchen": testspecs.Kitchen(), "bench": testspecs.Bench()} {
		if ps := gen.Check(spec); ps != nil {
			t.Errorf("%s: Check = %v", name, ps)
		}
	}
}

// TestCheck breaks a valid spec in one way per case and checks the problem
// that Check reports (in full, with position, type and field or method),
// and that Generate reports exactly the same problems: the generator has
// one check, whoever calls it.
func TestCheck(t *testing.T) {
	user := func(s *gen.Spec) *gen.Message { return s.Messages[0] }
	get := func(s *gen.Spec) *gen.Method { return s.Services[0].Methods[0] }
	one := 1.0
	for _, tc := range []struct {
		name   string
		mutate func(s *gen.Spec)
		want   string
	}{
		{"bad package", func(s *gen.Spec) { s.Package = "a-b" }, `package "a-b" is not dot-separated identifiers`},
		{"spec version", func(s *gen.Spec) { s.Version = 99 }, "spec version 99, this generator reads version 3"},
		{"nil message", func(s *gen.Spec) { s.Messages = append(s.Messages, nil) }, "nil message in spec"},
		{"message name", func(s *gen.Spec) { s.Messages = append(s.Messages, &gen.Message{Name: "lower", Pos: "x.go:1"}) }, `x.go:1: lower: message name "lower" is not an exported Go identifier`},
		{"reserved range", func(s *gen.Spec) { user(s).Reserved = []int32{0} }, "users.go:10: User: reserved number 0 is out of the range 1-536870911"},
		// A number listed twice gave a descriptor with overlapping
		// reserved ranges, which protobuf refuses to load.
		{"reserved twice", func(s *gen.Spec) { user(s).Reserved = []int32{5, 6, 5} }, "users.go:10: User: reserved number 5 is listed twice in User.Reserved"},
		{"nil field", func(s *gen.Spec) { user(s).Fields = append(user(s).Fields, nil) }, "users.go:10: User: nil field"},
		{"missing number", func(s *gen.Spec) { user(s).Fields[1].Number = 0 }, `users.go:13: User: field "name": missing wire number`},
		{"duplicate number", func(s *gen.Spec) { user(s).Fields[1].Number = 1 }, `users.go:13: User: field "name": wire number 1 is already used by field "id"`},
		{"protobuf range", func(s *gen.Spec) { user(s).Fields[1].Number = 19500 }, `wire number 19500 is in protobuf's reserved range 19000-19999`},
		{"too large", func(s *gen.Spec) { user(s).Fields[1].Number = 536870912 }, `wire number 536870912 is out of the range 1-536870911`},
		{"reserved by message", func(s *gen.Spec) { user(s).Reserved = []int32{2} }, `field "name": wire number 2 is reserved by User.Reserved`},
		{"field name", func(s *gen.Spec) { user(s).Fields[1].Name = "has space" }, `field "has space": name is not an identifier like "created_at"`},
		{"go clash", func(s *gen.Spec) { user(s).Fields[1].Name = "ID" }, `field "ID": becomes the Go field ID, as field "id" does`},
		{"generated method", func(s *gen.Spec) { user(s).Fields[1].Name = "marshal_append" }, `field "marshal_append": becomes the Go field MarshalAppend, which clashes with the generated method User.MarshalAppend`},
		// A field named like a method the generated code reserves: String
		// passed Generate and failed gen/load's check before there was one.
		{"reserved method String", func(s *gen.Spec) { user(s).Fields[1].Name = "string" }, `users.go:13: User: field "string": becomes the Go field String, which clashes with the generated method User.String`},
		{"reserved method Reset", func(s *gen.Spec) { user(s).Fields[1].Name = "Reset" }, `clashes with the generated method User.Reset`},
		// protobuf declares a map field's entry message in the message's
		// scope: a field with its name gave a descriptor that protobuf
		// refuses to load.
		{"map entry clash", func(s *gen.Spec) {
			user(s).Fields = append(user(s).Fields, &gen.Field{Name: "labels", Number: 5, Kind: gen.KindString, MapKey: gen.KindString, Pos: "users.go:16"})
			user(s).Fields[1].Name = "LabelsEntry"
		}, `users.go:16: User: field "labels": protobuf name LabelsEntry of the map entry message of field "labels" clashes with field "LabelsEntry"; rename one`},
		{"map entry clash, map first", func(s *gen.Spec) {
			user(s).Fields = append(user(s).Fields, &gen.Field{Name: "LabelsEntry", Number: 5, Kind: gen.KindString, Pos: "users.go:16"})
			user(s).Fields[1].MapKey, user(s).Fields[1].Name = gen.KindString, "labels"
		}, `users.go:16: User: field "LabelsEntry": protobuf name LabelsEntry of field "LabelsEntry" clashes with the map entry message of field "labels"; rename one`},
		{"unknown message", func(s *gen.Spec) { user(s).Fields[3].Message = "Friend" }, `users.go:15: User: field "friends": unknown message "Friend"`},
		{"message without type", func(s *gen.Spec) { user(s).Fields[3].Message = "" }, "message field without a message type"},
		{"scalar with message", func(s *gen.Spec) { user(s).Fields[0].Message = "User" }, `a int64 field cannot reference message "User"`},
		{"unknown kind", func(s *gen.Spec) { user(s).Fields[1].Kind = "text" }, `unknown kind "text"`},
		{"list and map", func(s *gen.Spec) { user(s).Fields[3].MapKey = gen.KindString }, "a field cannot be both a list and a map"},
		{"float map key", func(s *gen.Spec) { user(s).Fields[1].MapKey = gen.KindFloat64 }, `map key kind "float64" is not an integer kind, bool or string`},
		{"optional list", func(s *gen.Spec) { user(s).Fields[3].Optional = true }, "a list or map cannot be optional"},
		{"unpacked string", func(s *gen.Spec) { user(s).Fields[1].Unpacked = true }, "only a list of numbers, bools or enums can be unpacked"},
		{"enum without type", func(s *gen.Spec) { user(s).Fields[2].Enum = nil }, "enum field without an enum type"},
		{"scalar with enum", func(s *gen.Spec) { user(s).Fields[0].Enum = user(s).Fields[2].Enum }, "a int64 field cannot have enum values"},
		{"enum name", func(s *gen.Spec) { user(s).Fields[2].Enum.Name = "role" }, `enum name "role" is not an exported Go identifier`},
		{"enum no values", func(s *gen.Spec) { user(s).Fields[2].Enum.Values = nil }, "enum UserRole has no values; add them with Values"},
		{"enum zero", func(s *gen.Spec) { user(s).Fields[2].Enum.Values[0].Number = 5 }, `field "role": the first value "member" of enum UserRole is its zero value and must be numbered 0, not 5`},
		{"enum dup number", func(s *gen.Spec) { user(s).Fields[2].Enum.Values[1].Number = 0 }, `gives the values "member" and "admin" the same number 0`},
		{"enum dup name", func(s *gen.Spec) { user(s).Fields[2].Enum.Values[1].Name = "member" }, `declares the value "member" twice`},
		{"enum value name", func(s *gen.Spec) { user(s).Fields[2].Enum.Values[1].Name = "a b" }, `enum value "a b" is not an identifier`},
		{"enum other values", func(s *gen.Spec) {
			s.Messages[1].Fields = append(s.Messages[1].Fields, &gen.Field{Name: "role", Number: 3, Kind: gen.KindEnum, Pos: "users.go:23",
				Enum: &gen.Enum{Name: "UserRole", Values: []gen.EnumValue{{Name: "member", Number: 0}}}})
		}, `users.go:23: GetUser: field "role": enum UserRole has other values than at users.go:14`},
		{"enum clash", func(s *gen.Spec) { user(s).Fields[2].Enum.Name = "GetUser" }, "Go name GetUser of enum GetUser of User.role clashes with message GetUser"},
		{"enum const clash", func(s *gen.Spec) { s.Messages = append(s.Messages, &gen.Message{Name: "UserRoleAdmin"}) }, "Go name UserRoleAdmin of enum UserRole of User.role value admin clashes with message UserRoleAdmin"},
		{"max len on int", func(s *gen.Spec) { user(s).Fields[0].Validate.MaxLen = 3 }, "length limits apply to strings, bytes, lists and maps"},
		{"bad lengths", func(s *gen.Spec) { user(s).Fields[1].Validate.MinLen, user(s).Fields[1].Validate.MaxLen = 5, 3 }, "bad length limits [5, 3]"},
		{"range on string", func(s *gen.Spec) { user(s).Fields[1].Validate.Min = &one }, "range applies to numbers and lists of numbers"},
		{"range fraction on int", func(s *gen.Spec) { half := 0.5; user(s).Fields[0].Validate.Max = &half }, "range bound 0.5 is not a int64"},
		// A float32 bound beyond float32 generated a comparison that does
		// not compile ("constant -1e+300 overflows float32").
		{"float32 range", func(s *gen.Spec) {
			big := 1e300
			user(s).Fields[0].Kind, user(s).Fields[0].Validate.Max = gen.KindFloat32, &big
		}, `users.go:12: User: field "id": range bound 1e+300 is not a float32`},
		{"infinite range", func(s *gen.Spec) {
			inf := math.Inf(1)
			user(s).Fields[0].Kind, user(s).Fields[0].Validate.Max = gen.KindFloat64, &inf
		}, `users.go:12: User: field "id": range bound +Inf is not a finite number`},
		{"empty range", func(s *gen.Spec) {
			zero := 0.0
			user(s).Fields[0].Validate.Min, user(s).Fields[0].Validate.Max = &one, &zero
		}, "bad range [1, 0]: the minimum is above the maximum"},
		{"match on int", func(s *gen.Spec) { user(s).Fields[0].Validate.Match = "x" }, "match applies to strings and lists of strings"},
		{"bad regexp", func(s *gen.Spec) { user(s).Fields[1].Validate.Match = "(" }, `field "name": bad regexp "(": `},
		{"duplicate message", func(s *gen.Spec) { s.Messages[1].Name = "User" }, "Go name User of message User clashes with message User"},
		{"proto name", func(s *gen.Spec) { user(s).ProtoName = "old.User" }, `users.go:10: User: protobuf name "old.User" (schema.ProtoName) is not an identifier like "Item"`},
		{"proto name clash", func(s *gen.Spec) { s.Messages[1].ProtoName = "User" }, "users.go:20: GetUser: protobuf name User of message GetUser (schema.ProtoName) clashes with message User"},
		{"proto names clash", func(s *gen.Spec) { user(s).ProtoName, s.Messages[1].ProtoName = "Person", "Person" }, "users.go:20: GetUser: protobuf name Person of message GetUser (schema.ProtoName) clashes with message User (schema.ProtoName)"},
		{"proto name of enum", func(s *gen.Spec) { user(s).ProtoName = "UserRole" }, `users.go:14: User: field "role": protobuf name UserRole of enum UserRole of User.role clashes with message User (schema.ProtoName)`},
		{"proto name of service", func(s *gen.Spec) { s.Messages[1].ProtoName = "Users" }, "users.go:30: Users: protobuf name Users of service Users clashes with message GetUser (schema.ProtoName)"},
		{"proto name of enum value", func(s *gen.Spec) { s.Messages[1].ProtoName = "USER_ROLE_ADMIN" }, `users.go:14: User: field "role": protobuf name USER_ROLE_ADMIN of enum UserRole of User.role value admin clashes with message GetUser (schema.ProtoName)`},
		{"file clash", func(s *gen.Spec) { s.Messages = append(s.Messages, &gen.Message{Name: "UsersService"}) }, "service Users and message UsersService would both be written to users_service.yrpc.go; rename one"},
		{"file clash by snake case", func(s *gen.Spec) { s.Messages = append(s.Messages, &gen.Message{Name: "UserRoleEnum"}) }, "enum UserRole and message UserRoleEnum would both be written to user_role_enum.yrpc.go"},
		{"file descriptor clash", func(s *gen.Spec) {
			s.Messages = append(s.Messages, &gen.Message{Name: "FileDescriptor", Pos: "x.go:1"})
		},
			"x.go:1: FileDescriptor: Go name FileDescriptor of message FileDescriptor clashes with the generated file descriptor accessor"},
		{"nil service", func(s *gen.Spec) { s.Services = append(s.Services, nil) }, "nil service in spec"},
		{"service name", func(s *gen.Spec) { s.Services[0].Name = "users" }, `service name "users" is not an exported Go identifier`},
		{"service clash", func(s *gen.Spec) {
			s.Messages[1].Name = "UsersServer"
			get(s).Request = "UsersServer"
			s.Services[0].Methods[1].Request = "UsersServer"
		}, "Go name UsersServer of the generated code of service Users clashes with message UsersServer"},
		{"service and message", func(s *gen.Spec) { s.Services[0].Name = "User" }, "users.go:30: User: Go name User of service User clashes with message User"},
		{"helper clash", func(s *gen.Spec) {
			s.Services = append(s.Services, &gen.Service{Name: "UsersGet", Methods: []*gen.Method{{Name: "Handle", Request: "GetUser", Response: "User"}}})
			get(s).Name = "GetHandle"
		}, "Go name usersGetHandleHandle of the generated code of service UsersGet clashes with the generated code of service Users"},
		{"balance", func(s *gen.Spec) { s.Services[0].Balance = "fastest" }, `users.go:30: Users: unknown balancer "fastest"`},
		{"rate limit", func(s *gen.Spec) { s.Services[0].RateLimit = &gen.RateLimit{Rate: 0, Burst: 1} }, "bad rate limit 0/s, burst 1"},
		{"breaker", func(s *gen.Spec) {
			s.Services[0].Breaker = &gen.Breaker{ErrorRate: 2, MinRequests: 1, OpenFor: time.Second}
		}, "bad breaker: error rate 2"},
		{"nil method", func(s *gen.Spec) { s.Services[0].Methods = append(s.Services[0].Methods, nil) }, "users.go:30: Users: nil method"},
		{"method name", func(s *gen.Spec) { get(s).Name = "get" }, `method get: method name "get" is not an exported Go identifier`},
		{"duplicate method", func(s *gen.Spec) { s.Services[0].Methods[1].Name = "Get" }, "users.go:34: Users: method Get: is declared twice"},
		{"Into clash", func(s *gen.Spec) { s.Services[0].Methods[1].Name = "GetInto" }, `users.go:34: Users: method GetInto: clashes with the client's GetInto of unary method "Get"; rename one of them`},
		{"Into clash declared first", func(s *gen.Spec) {
			ms := s.Services[0].Methods
			ms[0], ms[1] = ms[1], ms[0]
			ms[0].Name = "GetInto"
		}, `users.go:34: Users: method GetInto: clashes with the client's GetInto of unary method "Get"`},
		{"unknown request", func(s *gen.Spec) { get(s).Request = "Nope" }, `users.go:33: Users: method Get: unknown request message "Nope"`},
		{"unknown response", func(s *gen.Spec) { get(s).Response = "Nope" }, `method Get: unknown response message "Nope"`},
		{"no response", func(s *gen.Spec) { get(s).Response = "" }, `method Get: a unary method needs a response message`},
		{"oneway response", func(s *gen.Spec) { s.Services[0].Methods[1].Response = "User" }, `method Touch: a oneway method has no response, got "User"`},
		{"hash key missing", func(s *gen.Spec) { get(s).HashKey = "nope" }, `method Get: hash key "nope" is not a field of GetUser`},
		{"hash key list", func(s *gen.Spec) { get(s).HashKey = "tags" }, `hash key "tags" must be a scalar or string field of GetUser`},
		{"negative timeout", func(s *gen.Spec) { get(s).Timeout = -time.Second }, "negative timeout -1s"},
		{"negative try timeout", func(s *gen.Spec) { get(s).TryTimeout = -time.Second }, "negative try timeout -1s"},
		{"try timeout above timeout", func(s *gen.Spec) { get(s).Timeout, get(s).TryTimeout = time.Second, 2*time.Second }, "method Get: try timeout 2s is longer than the timeout 1s"},
		{"retry tries", func(s *gen.Spec) { get(s).Retry = &gen.Retry{Tries: 0} }, "bad retry policy: tries 0"},
		{"hedge", func(s *gen.Spec) { get(s).Idempotent = false; get(s).Hedge = time.Millisecond }, "hedging (1ms) needs an idempotent method"},
		{"negative hedge", func(s *gen.Spec) { get(s).Hedge = -time.Millisecond }, "negative hedge delay -1ms"},
		{"forks", func(s *gen.Spec) { get(s).FaultMode = "forking"; get(s).Forks = 1 }, "forking needs at least 2 forks, got 1"},
		{"forking idempotent", func(s *gen.Spec) { get(s).FaultMode, get(s).Forks, get(s).Idempotent = "forking", 2, false }, "forking needs an idempotent method"},
		{"forks without forking", func(s *gen.Spec) { get(s).Forks = 2 }, `forks are set but the fault mode is ""`},
		{"fault mode", func(s *gen.Spec) { get(s).FaultMode = "panic" }, `unknown fault mode "panic"`},
		{"mock action", func(s *gen.Spec) { get(s).Mock = &gen.Mock{Action: "shrug"} }, `unknown mock action "shrug"`},
		{"mock code", func(s *gen.Spec) { get(s).Mock = &gen.Mock{Action: "fail", Code: "Oops"} }, `mock fails with unknown status code "Oops"`},
		{"mock OK", func(s *gen.Spec) { get(s).Mock = &gen.Mock{Action: "fail", Code: "OK"} }, `mock fails with unknown status code "OK"`},
		{"mock value oneway", func(s *gen.Spec) { s.Services[0].Methods[1].Mock = &gen.Mock{Action: "value", Value: "{}"} }, "method Touch: mock value needs a response message"},
		{"mock value field", func(s *gen.Spec) { get(s).Mock = &gen.Mock{Action: "value", Value: `{"nick":"x"}`} }, `method Get: mock value: message User has no field "nick"`},
		{"mock JSON syntax", func(s *gen.Spec) { get(s).Mock = &gen.Mock{Action: "value", Value: `{"id": }`} }, "mock value: invalid JSON"},
		{"mock two values", func(s *gen.Spec) { get(s).Mock = &gen.Mock{Action: "value", Value: `{} {}`} }, "mock value: invalid JSON: more than one value"},
		{"mock key twice", func(s *gen.Spec) { get(s).Mock = &gen.Mock{Action: "value", Value: `{"id": 1, "id": 2}`} }, `mock value: message User: field "id" given twice`},
		{"mock cut short", func(s *gen.Spec) { get(s).Mock = &gen.Mock{Action: "value", Value: `{"id": [1`} }, "mock value: invalid JSON: unexpected EOF"},
		{"mock not an object", func(s *gen.Spec) { get(s).Mock = &gen.Mock{Action: "value", Value: `[1]`} }, "mock value: message User: want a JSON object, got an array"},
		{"mock wrong type", func(s *gen.Spec) { get(s).Mock = &gen.Mock{Action: "value", Value: `{"id": "x"}`} }, `mock value: User.id: "x" does not fit kind int64`},
		{"mock out of range", func(s *gen.Spec) {
			user(s).Fields[0].Kind = gen.KindInt32
			get(s).Mock = &gen.Mock{Action: "value", Value: `{"id": 3000000000}`}
		}, "mock value: User.id: 3000000000 does not fit kind int32"},
		{"mock enum", func(s *gen.Spec) { get(s).Mock = &gen.Mock{Action: "value", Value: `{"role": "boss"}`} }, `mock value: User.role: enum UserRole has no value "boss"`},
		{"mock nested", func(s *gen.Spec) {
			get(s).Mock = &gen.Mock{Action: "value", Value: `{"friends": [{"id": 1}, {"idd": 2}]}`}
		}, `mock value: User.friends: [1]: message User has no field "idd"`},
		{"mock map keys", func(s *gen.Spec) {
			user(s).Fields = append(user(s).Fields, &gen.Field{Name: "by_id", Number: 5, Kind: gen.KindString, MapKey: gen.KindInt32})
			get(s).Mock = &gen.Mock{Action: "value", Value: `{"by_id": {"1": "a", "01": "b"}}`}
		}, `mock value: User.by_id: keys "01" and "1" are the same int32`},
		{"unknown method kind", func(s *gen.Spec) { get(s).Kind = "stream" }, `method Get: unknown method kind "stream"`},
		{"stream without response", func(s *gen.Spec) { get(s).Kind, get(s).Response = gen.MethodServerStream, "" }, "method Get: a server stream needs a response message"},
		{"retry on bidi", func(s *gen.Spec) { get(s).Kind, get(s).Retry = gen.MethodBidiStream, &gen.Retry{Tries: 2} }, "users.go:33: Users: method Get: a bidi stream cannot be retried: its requests are not kept once sent"},
		{"idempotent client stream", func(s *gen.Spec) { get(s).Kind = gen.MethodClientStream }, "method Get: a client stream is never retried, so it has no idempotency to declare"},
		{"hash key on client stream", func(s *gen.Spec) { get(s).Kind = gen.MethodClientStream }, "method Get: a client stream picks its instance before it has a request to hash"},
		{"mock on stream", func(s *gen.Spec) { get(s).Kind, get(s).Mock = gen.MethodServerStream, &gen.Mock{Action: "empty"} }, "method Get: a server stream cannot be mocked"},
		{"hedge on stream", func(s *gen.Spec) { get(s).Kind, get(s).Hedge = gen.MethodServerStream, time.Second }, "method Get: a server stream cannot be hedged"},
		{"fault mode on stream", func(s *gen.Spec) { get(s).Kind, get(s).FaultMode = gen.MethodServerStream, "failfast" }, "a server stream ends with its first error: fault modes apply to unary and oneway methods"},
		{"try timeout on stream", func(s *gen.Spec) { get(s).Kind, get(s).TryTimeout = gen.MethodBidiStream, time.Second }, "a bidi stream has no tries to bound: the timeout bounds the whole stream"},
		{"message size on unary", func(s *gen.Spec) { get(s).MaxMessageSize = 10 }, "method Get: a unary method has no message size limit of its own"},
		{"message size on oneway", func(s *gen.Spec) { s.Services[0].Methods[1].MaxMessageSize = 10 }, "method Touch: a oneway method has no message size limit of its own"},
		{"negative message size", func(s *gen.Spec) { get(s).Kind, get(s).MaxMessageSize = gen.MethodServerStream, -1 }, "max message size -1 is out of the range 1-2147483647"},
		{"method ID collision", func(s *gen.Spec) {
			s.Package = "p"
			s.Services[0].Name = "S"
			get(s).Name, s.Services[0].Methods[1].Name = "MMRaNcZK", "MBuCppvv"
		}, `users.go:34: S: method MBuCppvv: the method ID 0x39df7c2a of "p.S/MBuCppvv" collides with "p.S/MMRaNcZK"; rename one of them`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec()
			tc.mutate(s)
			ps := gen.Check(s)
			var lines []string
			for _, p := range ps {
				lines = append(lines, p.String())
			}
			if got := strings.Join(lines, "\n"); !strings.Contains(got, tc.want) {
				t.Errorf("Check =\n%s\nwant a problem containing %q", got, tc.want)
			}
			if diff := cmp.Diff(ps, generateProblems(t, s)); diff != "" {
				t.Errorf("Check and Generate disagree (-Check +Generate):\n%s", diff)
			}
		})
	}
}

// TestProtoNames checks the protobuf names that Check accepts: two
// messages may trade names (each Go name is the other's protobuf name), a
// message may name itself, and a clash of Go names that are also the
// protobuf names is reported once, as a Go clash.
func TestProtoNames(t *testing.T) {
	s := validSpec()
	s.Messages[0].ProtoName, s.Messages[1].ProtoName = "GetUser", "User"
	s.Messages = append(s.Messages, &gen.Message{Name: "Self", ProtoName: "Self"})
	if ps := gen.Check(s); ps != nil {
		t.Errorf("Check = %v", ps)
	}
	s = validSpec()
	s.Messages[1].Name = "User"
	ps := gen.Check(s)
	if len(ps) == 0 {
		t.Fatal("two messages named User: Check found nothing")
	}
	for _, p := range ps {
		if strings.Contains(p.Msg, "protobuf name") {
			t.Errorf("a Go clash reported again: %s", p)
		}
	}
}

// TestCheckPackage covers the one difference between Check and Generate: a
// spec without Package is a problem for Check, while Generate uses the Go
// package's name.
func TestCheckPackage(t *testing.T) {
	s := validSpec()
	s.Package = ""
	if ps := gen.Check(s); len(ps) != 1 || !strings.Contains(ps[0].Msg, "the spec has no package name") {
		t.Errorf("Check = %v", ps)
	}
	if ps := generateProblems(t, s); ps != nil {
		t.Errorf("Generate: %v", ps)
	}
	if ps := gen.Check(nil); len(ps) != 1 || ps[0].Msg != "spec is nil" {
		t.Errorf("Check(nil) = %v", ps)
	}
}

func TestCheckAllProblems(t *testing.T) {
	s := validSpec()
	s.Messages[0].Fields[1].Number = 1
	s.Services[0].Methods[0].Request = "Nope"
	_, err := gen.Generate(s, gen.Config{Package: "usersrpc"})
	var gerr *gen.Error
	if !errors.As(err, &gerr) || len(gerr.Problems) != 2 {
		t.Fatalf("Generate = %v, want 2 problems", err)
	}
	want := "gen: schema has 2 problems:\n\tusers.go:13: User: field \"name\": wire number 1 is already used by field \"id\"\n\tusers.go:33: Users: method Get: unknown request message \"Nope\""
	if err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}

// FuzzCheck feeds Check and Generate specs decoded from arbitrary JSON,
// seeded with the encoding of valid specs: neither may panic, whatever the
// spec holds (nil entries, missing enums, odd kinds), and both must report
// the same problems.
func FuzzCheck(f *testing.F) {
	for _, s := range []*gen.Spec{validSpec(), testspecs.Kitchen()} {
		seed, err := json.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(seed)
	}
	f.Add([]byte(`{"package":"p","messages":[null,{"fields":[null,{"kind":"enum"},{"kind":"message","map_key":"float"}]}],"services":[null,{"methods":[null,{"mock":{"action":"value","value":"[1]"},"hash_key":"x"}]}]}`))
	f.Add([]byte(`{"package":"p","messages":[{"name":"M","fields":[{"name":"e","number":1,"kind":"enum","enum":{"name":"E"}}]}],"services":[{"name":"S","methods":[{"name":"A","request":"M","response":"M","mock":{"action":"value","value":"{\"e\":\"x\"}"}}]}]}`))
	f.Add([]byte(`{"package":"p","messages":[{"name":"M"}],"services":[{"name":"S","methods":[{"name":"A","kind":"bidi_stream","request":"M","response":"M","retry":{"tries":2},"hash_key":"x","mock":{"action":"value","value":"{}"},"fault_mode":"forking"},{"name":"B","kind":"server_stream","request":"M"},{"name":"C","kind":"client_stream","request":"M","response":"M","max_message_size":-1}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var spec gen.Spec
		if json.Unmarshal(data, &spec) != nil || spec.Package == "" {
			return
		}
		ps := gen.Check(&spec)
		if diff := cmp.Diff(ps, generateProblems(t, &spec)); diff != "" {
			t.Errorf("Check and Generate disagree (-Check +Generate):\n%s", diff)
		}
	})
}

// TestStreams checks that a spec with valid streams of every kind passes
// Check and Generate, and that the service's file has the typed stream
// API of each (the streams golden case has the whole output).
func TestStreams(t *testing.T) {
	s := validSpec()
	s.Services[0].Methods = append(s.Services[0].Methods,
		&gen.Method{Name: "Watch", Kind: gen.MethodServerStream, Request: "GetUser", Response: "User", Pos: "users.go:35",
			Idempotent: true, Retry: &gen.Retry{Tries: 3}, HashKey: "id", Timeout: time.Minute, MaxMessageSize: 1 << 20},
		&gen.Method{Name: "Import", Kind: gen.MethodClientStream, Request: "User", Response: "GetUser", Timeout: time.Minute, MaxMessageSize: 64},
		&gen.Method{Name: "Chat", Kind: gen.MethodBidiStream, Request: "User", Response: "User", Pos: "users.go:37"})
	if ps := gen.Check(s); ps != nil {
		t.Fatalf("Check = %v", ps)
	}
	files, err := gen.Generate(s, gen.Config{Package: "usersrpc"})
	if err != nil {
		t.Fatal(err)
	}
	var svc string
	for _, f := range files {
		if f.Name == "users_service.yrpc.go" {
			svc = string(f.Content)
		}
	}
	for _, want := range []string{
		"Watch(req *GetUser, stream rt.ServerStreamingServer[User]) error",
		"Import(stream rt.ClientStreamingServer[User, GetUser]) error",
		"Chat(stream rt.BidiStreamingServer[User, User]) error",
		"Watch(ctx context.Context, req *GetUser, opts ...rt.CallOption) (rt.ServerStreamingClient[User], error)",
		"Import(ctx context.Context, opts ...rt.CallOption) (rt.ClientStreamingClient[User, GetUser], error)",
		"Chat(ctx context.Context, opts ...rt.CallOption) (rt.BidiStreamingClient[User, User], error)",
		"Stream:   rt.ServerStreaming,", "Stream:   rt.ClientStreaming,", "Stream:   rt.BidiStreaming,",
		"HandleStream: usersWatchHandle,", "MaxMessageSize: 64,",
	} {
		if !strings.Contains(svc, want) {
			t.Errorf("the service's file lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(svc)
	}
}

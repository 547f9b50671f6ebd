package cli

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/yrpc/yrpc/examples/users/userrpc"
	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/gen/load"
)

// message is a generated message: the encoder's output must decode into
// the value the JSON describes, and, where the encoding is deterministic
// (no maps), equal the generated marshaler's bytes.
type message interface {
	MarshalAppend([]byte) []byte
	Unmarshal([]byte) error
}

func ptr[T any](v T) *T { return &v }

// encodeMock encodes js through ctl's entry point, ctlMockValue, with spec
// as the loaded schema.
func encodeMock(spec *gen.Spec, service, method, js string) ([]byte, error) {
	e := &Env{Load: func(context.Context, string, load.Options) (*gen.Spec, error) { return spec, nil }}
	return e.ctlMockValue(context.Background(), "schema", service, method, js)
}

// TestEncodeMockValue encodes JSON values of every field kind of the users
// example's schema and decodes them with its generated code.
func TestEncodeMockValue(t *testing.T) {
	spec, err := load.Load(context.Background(), usersSchema, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 123000000, time.UTC)
	addr := &userrpc.Address{City: "Paris", Country: "FR"}
	for _, tc := range []struct {
		name, method, json string
		want               message
		sameBytes          bool // no maps: the bytes equal MarshalAppend's
	}{
		{"scalars", "Echo", `{"flag": true, "i32": -5, "i64": "-9007199254740993", "u32": 4000000000,
			"u64": "18446744073709551615", "s32": -7, "s64": -8, "fx32": 9, "fx64": 10, "sfx32": -11, "sfx64": -12,
			"f32": 1.5, "f64": -2.25, "text": "héllo", "data": "AQID", "color": "blue", "at": "2026-01-02T03:04:05.123Z",
			"ttl": "1.5s", "address": {"city": "Paris", "country": "FR"}, "before_reserved": 1, "afterReserved": 2, "last": -1}`,
			&userrpc.Scalars{Flag: true, I32: -5, I64: -9007199254740993, U32: 4000000000, U64: math.MaxUint64, S32: -7, S64: -8,
				Fx32: 9, Fx64: 10, Sfx32: -11, Sfx64: -12, F32: 1.5, F64: -2.25, Text: "héllo", Data: []byte{1, 2, 3},
				Color: userrpc.ColorBlue, At: at, TTL: 1500 * time.Millisecond, Address: addr, BeforeReserved: 1, AfterReserved: 2, Last: -1},
			true},
		{"zero scalars are not written", "Echo", `{"flag": false, "i32": 0, "text": "", "data": "", "color": "red",
			"at": "0001-01-01T00:00:00Z", "ttl": "0s", "f64": 0, "address": null}`, &userrpc.Scalars{}, true},
		{"negative zero and the epoch are", "Echo", `{"f64": -0.0, "at": "1970-01-01T00:00:00Z", "address": {}}`,
			&userrpc.Scalars{F64: math.Copysign(0, -1), At: time.Unix(0, 0).UTC(), Address: &userrpc.Address{}}, true},
		{"optional zeros are written", "EchoOptionals", `{"flag": false, "i32": 0, "i64": 0, "u32": 0, "u64": 0, "s32": 0,
			"s64": 0, "fx32": 0, "fx64": 0, "sfx32": 0, "sfx64": 0, "f32": 0, "f64": 0, "text": "", "data": "", "color": 0,
			"at": "0001-01-01T00:00:00Z", "ttl": "0s"}`,
			&userrpc.Optionals{Flag: ptr(false), I32: ptr[int32](0), I64: ptr[int64](0), U32: ptr[uint32](0), U64: ptr[uint64](0),
				S32: ptr[int32](0), S64: ptr[int64](0), Fx32: ptr[uint32](0), Fx64: ptr[uint64](0), Sfx32: ptr[int32](0), Sfx64: ptr[int64](0),
				F32: ptr[float32](0), F64: ptr[float64](0), Text: ptr(""), Data: []byte{}, Color: ptr(userrpc.ColorRed),
				At: ptr(time.Time{}), TTL: ptr(time.Duration(0))},
			true},
		{"one field by both names", "EchoLists", `{"unpacked_s64s": [1], "unpackedS64s": [2]}`, nil, false},
		{"lists", "EchoLists", `{"flags": [true, false], "i32s": [-1, 2], "i64s": [3], "u32s": [4], "u64s": [], "s32s": [-6],
			"s64s": [-7], "fx32s": [8], "fx64s": [9], "sfx32s": [-10], "sfx64s": [-11], "f32s": [1.25], "f64s": [-2.5, 0],
			"texts": ["a", ""], "blobs": ["AA==", ""], "colors": ["green", 2], "times": ["2026-01-02T03:04:05.123Z"],
			"durations": ["1ms", "0s"], "addresses": [{"city": "Paris", "country": "FR"}, {}], "tags": ["x"], "unpacked_i32s": [-3, 0],
			"unpackedS64s": [4], "unpacked_fx32s": [5], "unpacked_f64s": [0.5], "unpacked_flags": [true], "unpacked_colors": ["blue"]}`,
			&userrpc.Lists{Flags: []bool{true, false}, I32s: []int32{-1, 2}, I64s: []int64{3}, U32s: []uint32{4}, S32s: []int32{-6},
				S64s: []int64{-7}, Fx32s: []uint32{8}, Fx64s: []uint64{9}, Sfx32s: []int32{-10}, Sfx64s: []int64{-11}, F32s: []float32{1.25},
				F64s: []float64{-2.5, 0}, Texts: []string{"a", ""}, Blobs: [][]byte{{0}, {}}, Colors: []userrpc.Color{userrpc.ColorGreen, userrpc.ColorBlue},
				Times: []time.Time{at}, Durations: []time.Duration{time.Millisecond, 0}, Addresses: []*userrpc.Address{addr, {}}, Tags: []string{"x"},
				UnpackedI32s: []int32{-3, 0}, UnpackedS64s: []int64{4}, UnpackedFx32s: []uint32{5}, UnpackedF64s: []float64{0.5},
				UnpackedFlags: []bool{true}, UnpackedColors: []userrpc.Color{userrpc.ColorBlue}},
			true},
		{"maps", "EchoMaps", `{"by_string": {"a": "b", "": ""}, "by_bool": {"true": 1, "false": 0}, "by_i32": {"-1": "-2"},
			"by_i64": {"3": 4}, "by_u32": {"5": 6}, "by_u64": {"18446744073709551615": -7}, "by_s32": {"-8": -9}, "by_s64": {"-10": 11},
			"by_fx32": {"12": 13}, "by_fx64": {"14": -15}, "by_sfx32": {"-16": -17}, "by_sfx64": {"-18": 1.5}, "floats": {"x": -0.25},
			"flags": {"y": true}, "blobs": {"z": "AQ=="}, "colors": {"c": "green"}, "times": {"1": "2026-01-02T03:04:05.123Z"},
			"durations": {"d": "2s"}, "addresses": {"home": {"city": "Paris", "country": "FR"}}}`,
			&userrpc.Maps{ByString: map[string]string{"a": "b", "": ""}, ByBool: map[bool]int32{true: 1, false: 0}, ByI32: map[int32]int64{-1: -2},
				ByI64: map[int64]uint32{3: 4}, ByU32: map[uint32]uint64{5: 6}, ByU64: map[uint64]int32{math.MaxUint64: -7}, ByS32: map[int32]int64{-8: -9},
				ByS64: map[int64]uint32{-10: 11}, ByFx32: map[uint32]uint64{12: 13}, ByFx64: map[uint64]int32{14: -15}, BySfx32: map[int32]int64{-16: -17},
				BySfx64: map[int64]float32{-18: 1.5}, Floats: map[string]float64{"x": -0.25}, Flags: map[string]bool{"y": true},
				Blobs: map[string][]byte{"z": {1}}, Colors: map[string]userrpc.Color{"c": userrpc.ColorGreen}, Times: map[int64]time.Time{1: at},
				Durations: map[string]time.Duration{"d": 2 * time.Second}, Addresses: map[string]*userrpc.Address{"home": addr}},
			false},
		{"recursive", "Tree", `{"name": "root", "children": [{"name": "a", "children": [{"name": "b"}]}], "by_name": {"a": {"name": "a"}}}`,
			&userrpc.Node{Name: "root", Children: []*userrpc.Node{{Name: "a", Children: []*userrpc.Node{{Name: "b"}}}},
				ByName: map[string]*userrpc.Node{"a": {Name: "a"}}},
			false},
		{"enum by number, JSON names", "Get", `{"id": 7, "name": "ann", "role": 10, "createdAt": "2026-01-02T03:04:05.123Z",
			"age": 0, "labels": {"k": "v"}, "emails": ["a@b"], "session_ttl": "1h"}`,
			&userrpc.User{ID: 7, Name: "ann", Role: userrpc.UserRoleOwner, CreatedAt: at, Age: ptr[uint32](0),
				Labels: map[string]string{"k": "v"}, Emails: []string{"a@b"}, SessionTTL: time.Hour},
			false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := encodeMock(spec, "users.Users", tc.method, tc.json)
			if tc.want == nil {
				if err == nil || !strings.Contains(err.Error(), "given twice") {
					t.Fatalf("encode = %v, want a duplicate-field error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := newOf(tc.want)
			if err := got.Unmarshal(b); err != nil {
				t.Fatalf("decoding %x: %v", b, err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
			if want := tc.want.MarshalAppend(nil); tc.sameBytes && !bytes.Equal(b, want) {
				t.Errorf("bytes %x, want the generated marshaler's %x", b, want)
			}
		})
	}
}

// newOf returns a new zero message of m's type.
func newOf(m message) message {
	switch m.(type) {
	case *userrpc.Scalars:
		return &userrpc.Scalars{}
	case *userrpc.Optionals:
		return &userrpc.Optionals{}
	case *userrpc.Lists:
		return &userrpc.Lists{}
	case *userrpc.Maps:
		return &userrpc.Maps{}
	case *userrpc.Node:
		return &userrpc.Node{}
	case *userrpc.User:
		return &userrpc.User{}
	}
	panic("newOf: add the type")
}

func TestEncodeMockValueErrors(t *testing.T) {
	spec := &gen.Spec{Package: "p", Messages: []*gen.Message{
		{Name: "R", Fields: []*gen.Field{
			{Name: "n", Number: 1, Kind: gen.KindInt32},
			{Name: "c", Number: 2, Kind: gen.KindEnum, Enum: &gen.Enum{Name: "Col", Values: []gen.EnumValue{{Name: "red"}, {Name: "blue", Number: 1}}}},
			{Name: "b", Number: 3, Kind: gen.KindBytes},
			{Name: "t", Number: 4, Kind: gen.KindTime},
			{Name: "r", Number: 5, Kind: gen.KindMessage, Message: "R"},
			{Name: "l", Number: 6, Kind: gen.KindUint32, List: true},
			{Name: "m", Number: 7, Kind: gen.KindString, MapKey: gen.KindInt64},
		}},
	}, Services: []*gen.Service{{Name: "S", Methods: []*gen.Method{
		{Name: "Get", Request: "R", Response: "R"},
		{Name: "Poke", Request: "R", Kind: gen.MethodOneway},
	}}}}
	deep := strings.Repeat(`{"r": `, 70) + "{}" + strings.Repeat("}", 70)
	for _, tc := range []struct {
		service, method, json, want string
	}{
		{"p.T", "Get", `{}`, `the schema has no service "p.T" (it has "p.S")`},
		{"p.S", "Got", `{}`, `service p.S of the schema has no method "Got" (it has Get, Poke)`},
		{"p.S", "Poke", `{}`, "method Poke is oneway"},
		{"p.S", "Get", `{"x": 1}`, `message R has no field "x" (it has "n", "c", "b", "t", "r", "l", "m")`},
		{"p.S", "Get", `{"n": true}`, "R.n: kind int32 cannot hold a boolean"},
		{"p.S", "Get", `{"n": 3000000000}`, "R.n: 3000000000 does not fit kind int32"},
		{"p.S", "Get", `{"n": 1.5}`, "R.n: 1.5 does not fit kind int32"},
		{"p.S", "Get", `{"c": "purple"}`, `R.c: enum Col has no value "purple" (it has "red", "blue")`},
		{"p.S", "Get", `{"b": "!!"}`, "R.b: bytes must be base64"},
		{"p.S", "Get", `{"t": "yesterday"}`, `R.t: parsing time "yesterday"`},
		{"p.S", "Get", `{"r": {"n": "x"}}`, "R.r: R.n: kind int32 cannot hold a string"},
		{"p.S", "Get", `{"l": [1, -1]}`, "R.l: [1]: -1 does not fit kind uint32"},
		{"p.S", "Get", `{"l": 1}`, "R.l: want a JSON array, got a number"},
		{"p.S", "Get", `{"m": {"one": "x"}}`, `R.m: key "one": one does not fit kind int64`},
		{"p.S", "Get", `{"m": []}`, "R.m: want a JSON object, got an array"},
		{"p.S", "Get", `[1]`, "message R: want a JSON object, got an array"},
		{"p.S", "Get", `{} {}`, "invalid JSON: more than one value"},
		{"p.S", "Get", `{`, "invalid JSON"},
		{"p.S", "Get", deep, "nested too deeply"},
	} {
		_, err := encodeMock(spec, tc.service, tc.method, tc.json)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("encode %s %s %.40s = %v, want %q", tc.service, tc.method, tc.json, err, tc.want)
		}
	}
}

// TestMockRules runs each rule of mock JSON through both of its entry
// points: the generation check (gen.Check of the schema with the JSON as
// the method's rpc.ReturnValue) and ctl's encoding (ctlMockValue). They
// must accept the same values and refuse the others with the same
// message; what they accept must decode, with the generated code of
// examples/users, to the value the JSON describes, in the bytes that the
// generated marshaler writes for it. The rules marked "was" are where the
// two disagreed before they shared gen's reader.
func TestMockRules(t *testing.T) {
	spec, err := load.Load(context.Background(), usersSchema, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 123000000, time.UTC)
	nested := func(n int) (string, *userrpc.Node) {
		root := &userrpc.Node{}
		for x, i := root, 0; i < n; i++ {
			x.Children = []*userrpc.Node{{}}
			x = x.Children[0]
		}
		return strings.Repeat(`{"children": [`, n) + "{}" + strings.Repeat("]}", n), root
	}
	deepest, deepestNode := nested(64)
	tooDeep, _ := nested(65)
	for _, tc := range []struct {
		rule, method, json string
		want               message // the value, when the JSON is accepted
		wantErr            string  // else what both report
	}{
		{"schema name", "Get", `{"created_at": "2026-01-02T03:04:05.123Z"}`, &userrpc.User{CreatedAt: at}, ""},
		{"JSON name (was: gen refused it)", "Get", `{"createdAt": "2026-01-02T03:04:05.123Z"}`, &userrpc.User{CreatedAt: at}, ""},
		{"Go name (was: gen took it)", "Get", `{"CreatedAt": "2026-01-02T03:04:05.123Z"}`, nil, `message User has no field "CreatedAt" (it has "created_at", "updated_at", "id", `},
		{"one field by both names (was: gen took one)", "Get", `{"created_at": "2026-01-02T03:04:05Z", "createdAt": "2026-01-02T03:04:05Z"}`,
			nil, `message User: field "created_at" given twice, as "createdAt" and "created_at"`},
		{"one key twice (was: both took the last)", "Get", `{"id": 1, "name": "a", "id": 2}`, nil, `message User: field "id" given twice`},
		{"null is absent", "Get", `{"name": null, "id": 3}`, &userrpc.User{ID: 3}, ""},
		{"64-bit integers as strings (was: gen refused them)", "Echo", `{"i64": "-9007199254740993", "u64": "18446744073709551615", "s64": "-8", "fx64": "10", "sfx64": "-12"}`,
			&userrpc.Scalars{I64: -9007199254740993, U64: math.MaxUint64, S64: -8, Fx64: 10, Sfx64: -12}, ""},
		{"32-bit integers as strings (was: ctl took them)", "Echo", `{"i32": "5"}`, nil, "Scalars.i32: kind int32 cannot hold a string"},
		{"integer fraction", "Echo", `{"i64": 1.5}`, nil, "Scalars.i64: 1.5 does not fit kind int64"},
		{"integer exponent", "Echo", `{"u32": 1e3}`, nil, "Scalars.u32: 1e3 does not fit kind uint32"},
		{"integer range", "Echo", `{"u32": -1}`, nil, "Scalars.u32: -1 does not fit kind uint32"},
		{"integer string range", "Echo", `{"i64": "9223372036854775808"}`, nil, `Scalars.i64: "9223372036854775808" does not fit kind int64`},
		{"integer as a boolean", "Echo", `{"s32": true}`, nil, "Scalars.s32: kind sint32 cannot hold a boolean"},
		{"NaN and infinities as strings (was: gen refused them)", "Echo", `{"f32": "NaN", "f64": "-Infinity"}`,
			&userrpc.Scalars{F32: float32(math.NaN()), F64: math.Inf(-1)}, ""},
		{"floats as other strings (was: ctl took them)", "Echo", `{"f64": "1.5"}`, nil,
			`Scalars.f64: kind float64 cannot hold the string "1.5": only "NaN", "Infinity" and "-Infinity" may be strings`},
		{"-0.0 is written, not left out as 0", "Echo", `{"f64": -0.0}`, &userrpc.Scalars{F64: math.Copysign(0, -1)}, ""},
		{"float32 range", "Echo", `{"f32": 1e39}`, nil, "Scalars.f32: 1e39 does not fit kind float32"},
		{"bytes in padded base64", "Echo", `{"data": "AQI="}`, &userrpc.Scalars{Data: []byte{1, 2}}, ""},
		{"bytes in unpadded base64 (was: ctl took them)", "Echo", `{"data": "AQI"}`, nil, "Scalars.data: bytes must be base64 (standard, padded)"},
		{"bytes in URL-safe base64", "Echo", `{"data": "-_8="}`, nil, "Scalars.data: bytes must be base64 (standard, padded)"},
		{"enum by name", "Echo", `{"color": "blue"}`, &userrpc.Scalars{Color: userrpc.ColorBlue}, ""},
		{"enum by .proto name (was: both refused it)", "Echo", `{"color": "COLOR_GREEN"}`, &userrpc.Scalars{Color: userrpc.ColorGreen}, ""},
		{"enum by number", "Echo", `{"color": 7}`, &userrpc.Scalars{Color: 7}, ""},
		{"unknown enum name", "Echo", `{"color": "purple"}`, nil, `Scalars.color: enum Color has no value "purple" (it has "red", "green", "blue")`},
		{"enum number range", "Echo", `{"color": 2147483648}`, nil, "Scalars.color: enum Color: 2147483648 does not fit kind int32"},
		{"time with an offset", "Echo", `{"at": "2026-01-02T05:04:05.123+02:00"}`, &userrpc.Scalars{At: at}, ""},
		{"time not RFC 3339", "Echo", `{"at": "2026-01-02"}`, nil, `Scalars.at: parsing time "2026-01-02"`},
		{"duration in protobuf's form", "Echo", `{"ttl": "1.500s"}`, &userrpc.Scalars{TTL: 1500 * time.Millisecond}, ""},
		{"duration as a number", "Echo", `{"ttl": 1500}`, nil, "Scalars.ttl: kind duration cannot hold a number"},
		{"null in a list", "EchoLists", `{"i32s": [1, null]}`, nil, "Lists.i32s: [1]: kind int32 cannot hold null"},
		{"map keys", "EchoMaps", `{"by_bool": {"true": 1}, "by_u64": {"18446744073709551615": 2}}`,
			&userrpc.Maps{ByBool: map[bool]int32{true: 1}, ByU64: map[uint64]int32{math.MaxUint64: 2}}, ""},
		{"two keys, one number (was: ctl wrote both)", "EchoMaps", `{"by_i32": {"1": "2", "01": "3"}}`, nil, `Maps.by_i32: keys "01" and "1" are the same int32`},
		{"one map key twice (was: both took the last)", "EchoMaps", `{"by_string": {"a": "x", "a": "y"}}`, nil, `Maps.by_string: key "a" given twice`},
		{"map key not a number", "EchoMaps", `{"by_i64": {"x": 1}}`, nil, `Maps.by_i64: key "x": x does not fit kind int64`},
		{"not an object", "Echo", `[]`, nil, "message Scalars: want a JSON object, got an array"},
		{"text after the value (was: both took it)", "Echo", `{} }`, nil, "invalid JSON: more than one value"},
		{"nesting at the limit", "Tree", deepest, deepestNode, ""},
		{"nesting past the limit", "Tree", tooDeep, nil, "value nested too deeply"},
		{"JSON nesting past its limit", "Echo", `{"text": ` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + "}", nil, "invalid JSON: value nested too deeply"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			problems := checkMock(t, spec, tc.method, tc.json)
			b, err := encodeMock(spec, "users.Users", tc.method, tc.json)
			if tc.wantErr != "" {
				if len(problems) != 1 || err == nil {
					t.Fatalf("check: %v; ctl: %v; want both to fail", problems, err)
				}
				fromCheck, fromCtl := strings.TrimPrefix(problems[0].Msg, "mock value: "), strings.TrimPrefix(err.Error(), "gen: ")
				if fromCheck != fromCtl || !strings.Contains(fromCtl, tc.wantErr) {
					t.Errorf("check: %s\nctl:   %s\nwant the same error, containing %q", fromCheck, fromCtl, tc.wantErr)
				}
				return
			}
			if len(problems) != 0 || err != nil {
				t.Fatalf("check: %v; ctl: %v; want both to accept", problems, err)
			}
			got := newOf(tc.want)
			if err := got.Unmarshal(b); err != nil {
				t.Fatalf("decoding %x: %v", b, err)
			}
			// The values hold no map of two entries: their bytes are
			// deterministic, and comparing them (not the values, which
			// cmp would walk slowly 64 deep) also tells -0.0 from 0.
			want := tc.want.MarshalAppend(nil)
			if again := got.MarshalAppend(nil); !bytes.Equal(b, want) || !bytes.Equal(again, want) {
				t.Errorf("bytes %x, decoded and encoded again %x, want the generated marshaler's %x\n(-want +decoded):\n%s",
					b, again, want, cmp.Diff(tc.want, got, cmpopts.EquateEmpty(), cmpopts.EquateNaNs()))
			}
		})
	}
}

// checkMock returns the problems that the generation check finds in spec
// when method of users.Users returns js as its mock value.
func checkMock(t *testing.T, spec *gen.Spec, method, js string) []gen.Problem {
	t.Helper()
	for _, m := range spec.Services[0].Methods {
		if m.Name == method {
			saved := m.Mock
			defer func() { m.Mock = saved }()
			m.Mock = &gen.Mock{Action: "value", Value: js}
			return gen.Check(spec)
		}
	}
	t.Fatalf("users.Users has no method %s", method)
	return nil
}

// TestMockRoundTrip: ctl's bytes for the users example's own mock value
// (Guest's rpc.ReturnValue) are those of the generated mock value.
func TestMockRoundTrip(t *testing.T) {
	spec, err := load.Load(context.Background(), usersSchema, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var js string
	for _, m := range spec.Services[0].Methods {
		if m.Name == "Guest" {
			js = m.Mock.Value
		}
	}
	b, err := encodeMock(spec, "users.Users", "Guest", js)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range userrpc.UsersServiceDesc.Methods {
		if m.Name == "Guest" {
			if want := m.Policy.Mock.Value().MarshalAppend(nil); !bytes.Equal(b, want) || len(b) == 0 {
				t.Errorf("ctl encodes %s as %x, the generated mock value is %x", js, b, want)
			}
			return
		}
	}
	t.Fatal("userrpc has no method Guest")
}

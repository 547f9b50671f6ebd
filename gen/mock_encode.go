package gen

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/yrpc/yrpc/rt/codec"
)

// EncodeMock returns the protobuf wire encoding of a mock response of
// method of service (the full name, "package.Service") in spec, given as
// JSON: what `yrpcc ctl mock SERVICE METHOD value --json` stores in the
// registry. It reads the JSON as Check reads the schema's mock values
// (rpc.ReturnValue), with the same rules and error messages, and writes
// the bytes that the generated MarshalAppend writes for that value: fields
// in wire-number order, proto3 zero values left out unless the field is
// Optional, numeric lists packed unless Unpacked, map entries in the order
// of their JSON keys.
//
// The rules are protobuf's JSON mapping, read strictly: what protobuf's
// JSON encoders print is accepted, and little more. The value is one JSON
// object. A field is named once, by its schema name ("created_at") or its
// JSON name ("createdAt"); null means absent. Booleans are true or
// false; strings and bytes are strings, bytes in padded standard base64;
// times are RFC 3339 strings, durations Go duration strings ("1.5s",
// "2m"); 32-bit integers are JSON numbers and 64-bit ones numbers or
// decimal strings, without fractions or exponents; floats are numbers or
// one of "NaN", "Infinity" and "-Infinity"; enums are a value's schema or
// .proto name ("admin", "USER_ROLE_ADMIN") or an int32 number. A list is
// an array without nulls; a map is an object whose keys parse as the key
// kind (decimal integers, strconv.ParseBool's booleans), no two of them
// the same key. Messages nest at most 64 deep.
//
// spec must pass Check: otherwise EncodeMock returns an *Error listing its
// problems. Its other errors start with "gen: " and name the service, the
// method, or the path to the JSON value that does not fit
// ("User.address: Address.city: ..."). EncodeMock is safe for concurrent
// use: it reads spec and modifies nothing.
func EncodeMock(spec *Spec, service, method, js string) ([]byte, error) {
	if spec == nil {
		return nil, errors.New("gen: nil spec")
	}
	m, problems := check(spec, spec.Package)
	if len(problems) > 0 {
		return nil, &Error{Pkg: "gen", Problems: problems}
	}
	mm, err := m.mockedMethod(service, method)
	if err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	v, err := resolveMock(mm.resp, js)
	if err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	return appendMockMessage(nil, mm.resp, v), nil
}

// mockedMethod returns the method of m that a mock value may answer.
func (m *model) mockedMethod(service, method string) (*methodModel, error) {
	i := slices.IndexFunc(m.services, func(s *svcModel) bool { return s.full == service })
	if i < 0 {
		return nil, fmt.Errorf("the schema has no service %q (it has %s)", service, quotedNames(m.services, func(s *svcModel) string { return s.full }))
	}
	sm := m.services[i]
	j := slices.IndexFunc(sm.methods, func(mm *methodModel) bool { return mm.Name == method })
	if j < 0 {
		var known []string
		for _, mm := range sm.methods {
			known = append(known, mm.Name)
		}
		return nil, fmt.Errorf("service %s of the schema has no method %q (it has %s)", service, method, strings.Join(known, ", "))
	}
	mm := sm.methods[j]
	switch {
	case mm.oneway():
		return nil, fmt.Errorf("method %s is oneway: it has no response to mock", method)
	case mm.kind.Stream():
		return nil, fmt.Errorf("method %s is %s: streams cannot be mocked", method, kindNouns[mm.kind])
	}
	return mm, nil
}

// appendMockMessage appends the fields of v, a resolved message msg, to b
// as msg's generated appendTo does.
func appendMockMessage(b []byte, msg *msgModel, v *mockValue) []byte {
	for _, fm := range msg.byNumber {
		i := slices.IndexFunc(v.fields, func(f mockField) bool { return f.field == fm })
		if i >= 0 {
			b = appendMockField(b, fm, v.fields[i].value)
		}
	}
	return b
}

func appendMockField(b []byte, fm *fieldModel, v *mockValue) []byte {
	val := fm.value()
	switch {
	case fm.MapKey != "":
		key := value{kind: fm.MapKey}
		for _, e := range v.entries {
			entry := appendMockValue(mockTag(nil, 1, key), key, &mockValue{scalar: e.key})
			entry = appendMockValue(mockTag(entry, 2, val), val, e.value)
			b = codec.AppendBytes(mockTag(b, fm.Number, value{kind: KindBytes}), entry)
		}
	case packed(fm):
		if len(v.list) == 0 {
			return b
		}
		var body []byte
		for _, x := range v.list {
			body = appendMockValue(body, val, x)
		}
		b = codec.AppendBytes(mockTag(b, fm.Number, value{kind: KindBytes}), body)
	case fm.List:
		for _, x := range v.list {
			b = appendMockValue(mockTag(b, fm.Number, val), val, x)
		}
	case fm.Optional || fm.Kind == KindMessage || !zeroScalar(v.scalar):
		b = appendMockValue(mockTag(b, fm.Number, val), val, v)
	}
	return b
}

// zeroScalar reports whether s is a value that proto3 leaves out of a
// field without presence, as the generated present does: false, 0 (but
// not -0.0), "", empty bytes, a zero duration, Go's zero time.
func zeroScalar(s any) bool {
	switch s := s.(type) {
	case bool:
		return !s
	case int64:
		return s == 0
	case uint64:
		return s == 0
	case float64:
		return math.Float64bits(s) == 0
	case string:
		return s == ""
	case []byte:
		return len(s) == 0
	case time.Time:
		return s.IsZero()
	case time.Duration:
		return s == 0
	case enumValue:
		return s.number == 0
	}
	return false
}

func mockTag(b []byte, num int32, v value) []byte {
	return codec.AppendVarint(b, codec.Tag(num, codec.WireType(v.info().wire)))
}

// appendMockValue appends the encoding of x, a value of v, without a tag.
func appendMockValue(b []byte, v value, x *mockValue) []byte {
	if v.kind == KindMessage {
		return codec.AppendBytes(b, appendMockMessage(nil, v.msg, x))
	}
	switch s := x.scalar.(type) {
	case bool:
		return codec.AppendVarint(b, codec.EncodeBool(s))
	case enumValue:
		return codec.AppendVarint(b, uint64(int64(s.number))) // sign-extended, as protobuf does
	case string:
		return codec.AppendString(b, s)
	case []byte:
		return codec.AppendBytes(b, s)
	case time.Time:
		return codec.AppendTime(b, s)
	case time.Duration:
		return codec.AppendDuration(b, s)
	case float64:
		if v.kind == KindFloat32 {
			return codec.AppendFixed32(b, math.Float32bits(float32(s)))
		}
		return codec.AppendFixed64(b, math.Float64bits(s))
	case uint64:
		switch v.kind {
		case KindFixed32:
			return codec.AppendFixed32(b, uint32(s))
		case KindFixed64:
			return codec.AppendFixed64(b, s)
		}
		return codec.AppendVarint(b, s)
	case int64:
		switch v.kind {
		case KindSint32:
			return codec.AppendVarint(b, codec.EncodeZigZag32(int32(s)))
		case KindSint64:
			return codec.AppendVarint(b, codec.EncodeZigZag64(s))
		case KindSfixed32:
			return codec.AppendFixed32(b, uint32(int32(s)))
		case KindSfixed64:
			return codec.AppendFixed64(b, uint64(s))
		}
		return codec.AppendVarint(b, uint64(s)) // int32 sign-extended, as protobuf does
	}
	panic(fmt.Sprintf("gen: mock scalar of type %T", x.scalar))
}

package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yrpc/yrpc/gen"
	"github.com/yrpc/yrpc/rt/codec"
)

// maxMockDepth bounds the nesting of a mock value.
const maxMockDepth = 64

// encodeMockValue encodes the JSON object js as the protobuf wire form of
// the response of method of service ("pkg.Service") in spec, for `yrpcc
// ctl mock ... value --json`. Field names are the schema's ("created_at")
// or their JSON form ("createdAt"); values follow protobuf's JSON mapping:
// bytes in base64, enums by name or number, times in RFC 3339, durations
// as Go durations ("1.5s"), 64-bit integers as numbers or strings. Fields
// are written in wire-number order, without proto3's zero values (except
// optional ones), as the generated marshalers do.
func encodeMockValue(spec *gen.Spec, service, method, js string) ([]byte, error) {
	svc, names := findService(spec, service)
	if svc == nil {
		return nil, fmt.Errorf("the schema has no service %q (it has %s)", service, strings.Join(names, ", "))
	}
	var m *gen.Method
	var methods []string
	for _, x := range svc.Methods {
		methods = append(methods, x.Name)
		if x.Name == method {
			m = x
		}
	}
	switch {
	case m == nil:
		return nil, fmt.Errorf("service %s of the schema has no method %q (it has %s)", service, method, strings.Join(methods, ", "))
	case m.Kind == gen.MethodOneway || m.Response == "":
		return nil, fmt.Errorf("method %s is oneway: it has no response to mock", method)
	case m.Kind.Stream():
		return nil, fmt.Errorf("method %s is a %s: streams cannot be mocked", method, m.Kind)
	}
	enc := mockEncoder{msgs: make(map[string]*gen.Message, len(spec.Messages))}
	for _, msg := range spec.Messages {
		enc.msgs[msg.Name] = msg
	}
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("bad JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("bad JSON: more than one value")
	}
	return enc.message(nil, m.Response, v, 0)
}

// findService returns the service named pkg.Name and every such name.
func findService(spec *gen.Spec, service string) (*gen.Service, []string) {
	var names []string
	for _, s := range spec.Services {
		name := s.Name
		if spec.Package != "" {
			name = spec.Package + "." + s.Name
		}
		if name == service {
			return s, nil
		}
		names = append(names, strconv.Quote(name))
	}
	return nil, names
}

// mockEncoder writes JSON values as protobuf wire bytes by a spec.
type mockEncoder struct {
	msgs map[string]*gen.Message
}

// message appends the fields of message name, from a JSON object, to b.
func (e mockEncoder) message(b []byte, name string, v any, depth int) ([]byte, error) {
	if depth > maxMockDepth {
		return nil, errors.New("value nested too deeply")
	}
	msg := e.msgs[name]
	if msg == nil {
		return nil, fmt.Errorf("the schema has no message %q", name)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("message %s: want a JSON object, got %s", name, jsonKind(v))
	}
	values := make(map[*gen.Field]any, len(obj))
	for k, x := range obj {
		f := fieldNamed(msg, k)
		if f == nil {
			return nil, fmt.Errorf("message %s has no field %q (it has %s)", name, k, fieldNames(msg))
		}
		if _, dup := values[f]; dup {
			return nil, fmt.Errorf("message %s: field %q given twice", name, f.Name)
		}
		values[f] = x
	}
	fields := slices.Clone(msg.Fields)
	slices.SortFunc(fields, func(a, b *gen.Field) int { return int(a.Number - b.Number) })
	for _, f := range fields {
		x, ok := values[f]
		if !ok || x == nil {
			continue
		}
		var err error
		if b, err = e.field(b, f, x, depth); err != nil {
			return nil, fmt.Errorf("%s.%s: %w", name, f.Name, err)
		}
	}
	return b, nil
}

func fieldNamed(msg *gen.Message, name string) *gen.Field {
	for _, f := range msg.Fields {
		if f.Name == name || jsonName(f.Name) == name {
			return f
		}
	}
	return nil
}

func fieldNames(msg *gen.Message) string {
	names := make([]string, len(msg.Fields))
	for i, f := range msg.Fields {
		names[i] = strconv.Quote(f.Name)
	}
	return strings.Join(names, ", ")
}

// jsonName is protobuf's JSON name of a field: "created_at" -> "createdAt".
func jsonName(s string) string {
	var b strings.Builder
	up := false
	for _, r := range s {
		switch {
		case r == '_':
			up = true
		case up:
			b.WriteString(strings.ToUpper(string(r)))
			up = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// elem is the kind of a value with what the encoder needs to write it.
type elem struct {
	kind gen.Kind
	msg  string
	enum *gen.Enum
}

func (e mockEncoder) field(b []byte, f *gen.Field, x any, depth int) ([]byte, error) {
	val := elem{kind: f.Kind, msg: f.Message, enum: f.Enum}
	switch {
	case f.MapKey != "":
		obj, ok := x.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("want a JSON object, got %s", jsonKind(x))
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			entry, err := e.value(tag(nil, 1, f.MapKey), elem{kind: f.MapKey}, mapKey(f.MapKey, k), depth)
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", k, err)
			}
			if entry, err = e.value(tag(entry, 2, f.Kind), val, obj[k], depth); err != nil {
				return nil, fmt.Errorf("[%q]: %w", k, err)
			}
			b = codec.AppendBytes(tag(b, f.Number, gen.KindBytes), entry)
		}
		return b, nil
	case f.List:
		arr, ok := x.([]any)
		if !ok {
			return nil, fmt.Errorf("want a JSON array, got %s", jsonKind(x))
		}
		if packed(f) {
			var body []byte
			for i, y := range arr {
				var err error
				if body, err = e.value(body, val, y, depth); err != nil {
					return nil, fmt.Errorf("[%d]: %w", i, err)
				}
			}
			if len(arr) == 0 {
				return b, nil
			}
			return codec.AppendBytes(tag(b, f.Number, gen.KindBytes), body), nil
		}
		for i, y := range arr {
			var err error
			if b, err = e.value(tag(b, f.Number, f.Kind), val, y, depth); err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return b, nil
	}
	out, err := e.value(tag(b, f.Number, f.Kind), val, x, depth)
	if err != nil {
		return nil, err
	}
	// proto3: a plain scalar at its zero value is not written.
	if !f.Optional && f.Kind != gen.KindMessage && isZero(out[len(tag(nil, f.Number, f.Kind))+len(b):], f.Kind, x) {
		return b, nil
	}
	return out, nil
}

// mapKey turns a JSON object key into the JSON value of a key of kind k.
func mapKey(k gen.Kind, s string) any {
	switch k {
	case gen.KindString:
		return s
	case gen.KindBool:
		if b, err := strconv.ParseBool(s); err == nil {
			return b
		}
	}
	return json.Number(s)
}

// packed reports whether a list is written packed (proto3's default for
// numeric kinds).
func packed(f *gen.Field) bool {
	switch f.Kind {
	case gen.KindString, gen.KindBytes, gen.KindMessage, gen.KindTime, gen.KindDuration:
		return false
	}
	return !f.Unpacked
}

// wireType is the protobuf wire type of a kind.
func wireType(k gen.Kind) codec.WireType {
	switch k {
	case gen.KindFixed32, gen.KindSfixed32, gen.KindFloat32:
		return codec.Fixed32Type
	case gen.KindFixed64, gen.KindSfixed64, gen.KindFloat64:
		return codec.Fixed64Type
	case gen.KindString, gen.KindBytes, gen.KindMessage, gen.KindTime, gen.KindDuration:
		return codec.BytesType
	}
	return codec.VarintType
}

func tag(b []byte, num int32, k gen.Kind) []byte {
	return codec.AppendVarint(b, codec.Tag(num, wireType(k)))
}

// isZero reports whether v, the encoding of the JSON value x of kind k
// after its tag, is proto3's zero value of k: false, 0 (not -0.0), "",
// empty bytes, a zero duration, Go's zero time.
func isZero(v []byte, k gen.Kind, x any) bool {
	switch wireType(k) {
	case codec.Fixed32Type:
		return bytes.Equal(v, make([]byte, 4))
	case codec.Fixed64Type:
		return bytes.Equal(v, make([]byte, 8))
	}
	if k == gen.KindTime { // 1970-01-01T00:00:00Z is written, as empty
		s, _ := x.(string)
		t, err := time.Parse(time.RFC3339Nano, s)
		return err == nil && t.IsZero()
	}
	return len(v) == 1 && v[0] == 0 // a varint 0, or a length 0
}

// value appends the encoding of one JSON value of kind v.kind (without a
// tag) to b.
func (e mockEncoder) value(b []byte, v elem, x any, depth int) ([]byte, error) {
	switch v.kind {
	case gen.KindMessage:
		body, err := e.message(nil, v.msg, x, depth+1)
		if err != nil {
			return nil, err
		}
		return codec.AppendBytes(b, body), nil
	case gen.KindEnum:
		n, err := enumNumber(v.enum, x)
		if err != nil {
			return nil, err
		}
		return codec.AppendVarint(b, uint64(int64(n))), nil
	case gen.KindBool:
		t, ok := x.(bool)
		if !ok {
			return nil, fmt.Errorf("want true or false, got %s", jsonKind(x))
		}
		return codec.AppendVarint(b, codec.EncodeBool(t)), nil
	case gen.KindString:
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("want a string, got %s", jsonKind(x))
		}
		return codec.AppendString(b, s), nil
	case gen.KindBytes:
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("want base64 bytes, got %s", jsonKind(x))
		}
		d, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			if d, err = base64.RawStdEncoding.DecodeString(s); err != nil {
				return nil, fmt.Errorf("bytes must be base64: %w", err)
			}
		}
		return codec.AppendBytes(b, d), nil
	case gen.KindTime:
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("want an RFC 3339 time, got %s", jsonKind(x))
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, err
		}
		return codec.AppendTime(b, t), nil
	case gen.KindDuration:
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("want a duration such as \"1.5s\", got %s", jsonKind(x))
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, err
		}
		return codec.AppendDuration(b, d), nil
	case gen.KindFloat32, gen.KindFloat64:
		bits := 64
		if v.kind == gen.KindFloat32 {
			bits = 32
		}
		f, err := parseFloat(x, bits)
		if err != nil {
			return nil, err
		}
		if bits == 32 {
			return codec.AppendFixed32(b, math.Float32bits(float32(f))), nil
		}
		return codec.AppendFixed64(b, math.Float64bits(f)), nil
	}
	return e.integer(b, v.kind, x)
}

// integer appends an integer kind.
func (e mockEncoder) integer(b []byte, k gen.Kind, x any) ([]byte, error) {
	s, err := numberText(x)
	if err != nil {
		return nil, err
	}
	bad := func(err error) error { return fmt.Errorf("%s is not a %s: %w", s, k, err) }
	switch k {
	case gen.KindUint32, gen.KindUint64, gen.KindFixed32, gen.KindFixed64:
		bits := 64
		if k == gen.KindUint32 || k == gen.KindFixed32 {
			bits = 32
		}
		u, err := strconv.ParseUint(s, 10, bits)
		switch {
		case err != nil:
			return nil, bad(err)
		case k == gen.KindFixed32:
			return codec.AppendFixed32(b, uint32(u)), nil
		case k == gen.KindFixed64:
			return codec.AppendFixed64(b, u), nil
		}
		return codec.AppendVarint(b, u), nil
	}
	bits := 64
	switch k {
	case gen.KindInt32, gen.KindSint32, gen.KindSfixed32:
		bits = 32
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return nil, bad(err)
	}
	switch k {
	case gen.KindSint32:
		return codec.AppendVarint(b, codec.EncodeZigZag32(int32(n))), nil
	case gen.KindSint64:
		return codec.AppendVarint(b, codec.EncodeZigZag64(n)), nil
	case gen.KindSfixed32:
		return codec.AppendFixed32(b, uint32(int32(n))), nil
	case gen.KindSfixed64:
		return codec.AppendFixed64(b, uint64(n)), nil
	}
	return codec.AppendVarint(b, uint64(n)), nil // int32 sign-extends, as protobuf does
}

// numberText returns a JSON number, or a string holding one, as text.
func numberText(x any) (string, error) {
	switch x := x.(type) {
	case json.Number:
		return string(x), nil
	case string:
		return x, nil
	}
	return "", fmt.Errorf("want a number, got %s", jsonKind(x))
}

func parseFloat(x any, bits int) (float64, error) {
	if s, ok := x.(string); ok {
		switch s {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
	}
	s, err := numberText(x)
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(s, bits)
	if err != nil {
		return 0, fmt.Errorf("%s is not a float%d: %w", s, bits, err)
	}
	return f, nil
}

func enumNumber(en *gen.Enum, x any) (int32, error) {
	if en == nil {
		return 0, errors.New("enum without values in the schema")
	}
	switch x := x.(type) {
	case string:
		var names []string
		for _, v := range en.Values {
			if v.Name == x {
				return v.Number, nil
			}
			names = append(names, strconv.Quote(v.Name))
		}
		return 0, fmt.Errorf("enum %s has no value %q (it has %s)", en.Name, x, strings.Join(names, ", "))
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 32)
		if err != nil {
			return 0, fmt.Errorf("enum %s: %s is not an int32", en.Name, x)
		}
		return int32(n), nil
	}
	return 0, fmt.Errorf("enum %s: want a name or a number, got %s", en.Name, jsonKind(x))
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

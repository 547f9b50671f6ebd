package gen

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// mockValue is one value of a mock response, resolved from the schema's
// JSON and checked against the kind that holds it. The holder's shape says
// which part is set: fields for a message, list for a list, entries for a
// map, scalar for anything else.
type mockValue struct {
	fields  []mockField // in declaration order
	list    []*mockValue
	entries []mockEntry // in the order of their JSON keys
	// scalar is a bool, int64, uint64, float64, string, []byte, time.Time,
	// time.Duration or enumValue.
	scalar any
}

type mockField struct {
	field *fieldModel
	value *mockValue
}

type mockEntry struct {
	key   any // bool, int64, uint64 or string
	value *mockValue
}

// enumValue is an enum in a mock: the declared value at index, or, when
// index is -1, a number without a name.
type enumValue struct {
	index  int
	number int32
}

// maxMockDepth bounds the nesting of a mock value.
const maxMockDepth = 64

// resolveMock checks the JSON object js against the fields of msg and
// resolves the message it describes. Field names are the schema's (or the
// Go names); values follow protobuf's JSON mapping: bytes in base64, enums
// by name or number, times in RFC 3339, durations as Go duration strings.
func resolveMock(msg *msgModel, js string) (*mockValue, error) {
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("invalid JSON: more than one value")
	}
	return mockMessage(msg, v, 0)
}

func mockMessage(msg *msgModel, v any, depth int) (*mockValue, error) {
	if depth > maxMockDepth {
		return nil, errors.New("value nested too deeply")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("message %s: want a JSON object, got %s", msg.Name, jsonType(v))
	}
	for _, k := range sortedKeys(obj) {
		if !slices.ContainsFunc(msg.fields, func(f *fieldModel) bool { return f.Name == k || f.goName == k }) {
			return nil, fmt.Errorf("message %s has no field %q", msg.Name, k)
		}
	}
	out := &mockValue{}
	for _, fm := range msg.fields {
		x, ok := obj[fm.Name]
		if !ok {
			x, ok = obj[fm.goName]
		}
		if !ok || x == nil {
			continue
		}
		val, err := mockFieldValue(fm, x, depth)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", msg.Name, fm.Name, err)
		}
		out.fields = append(out.fields, mockField{fm, val})
	}
	return out, nil
}

func mockFieldValue(fm *fieldModel, x any, depth int) (*mockValue, error) {
	switch {
	case fm.MapKey != "":
		obj, ok := x.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("want a JSON object, got %s", jsonType(x))
		}
		out := &mockValue{}
		seen := map[any]string{}
		for _, k := range sortedKeys(obj) {
			key, err := mockMapKey(fm.MapKey, k)
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", k, err)
			}
			if prev, ok := seen[key]; ok {
				return nil, fmt.Errorf("keys %q and %q are the same %s", prev, k, fm.MapKey)
			}
			seen[key] = k
			val, err := mockElem(fm.value(), obj[k], depth)
			if err != nil {
				return nil, fmt.Errorf("[%q]: %w", k, err)
			}
			out.entries = append(out.entries, mockEntry{key, val})
		}
		return out, nil
	case fm.List:
		arr, ok := x.([]any)
		if !ok {
			return nil, fmt.Errorf("want a JSON array, got %s", jsonType(x))
		}
		out := &mockValue{}
		for i, e := range arr {
			val, err := mockElem(fm.value(), e, depth)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out.list = append(out.list, val)
		}
		return out, nil
	}
	return mockElem(fm.value(), x, depth)
}

func mockMapKey(k Kind, s string) (any, error) {
	switch k {
	case KindString:
		return s, nil
	case KindBool:
		return strconv.ParseBool(s)
	}
	return mockScalar(k, json.Number(s))
}

func mockElem(v value, x any, depth int) (*mockValue, error) {
	switch v.kind {
	case KindMessage:
		if v.msg == nil {
			return nil, errors.New("unknown message")
		}
		return mockMessage(v.msg, x, depth+1)
	case KindEnum:
		e, err := mockEnum(v.enum, x)
		return &mockValue{scalar: e}, err
	}
	s, err := mockScalar(v.kind, x)
	return &mockValue{scalar: s}, err
}

func mockEnum(e *enumModel, x any) (enumValue, error) {
	if e == nil {
		return enumValue{}, errors.New("unknown enum")
	}
	switch x := x.(type) {
	case string:
		for i, ev := range e.Values {
			if ev.Name == x && i < len(e.consts) {
				return enumValue{index: i, number: ev.Number}, nil
			}
		}
		return enumValue{}, fmt.Errorf("enum %s has no value %q", e.Name, x)
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 32)
		if err != nil {
			return enumValue{}, fmt.Errorf("enum %s: %w", e.Name, err)
		}
		return enumValue{index: -1, number: int32(n)}, nil
	}
	return enumValue{}, fmt.Errorf("enum %s: want a name or a number, got %s", e.Name, jsonType(x))
}

// mockScalar converts a JSON scalar to the Go value of kind k.
func mockScalar(k Kind, x any) (any, error) {
	str, isStr := x.(string)
	num, isNum := x.(json.Number)
	switch k {
	case KindBool:
		if b, ok := x.(bool); ok {
			return b, nil
		}
	case KindString:
		if isStr {
			return str, nil
		}
	case KindBytes:
		if isStr {
			b, err := base64.StdEncoding.DecodeString(str)
			if err != nil {
				return nil, fmt.Errorf("bytes must be base64: %w", err)
			}
			return b, nil
		}
	case KindTime:
		if isStr {
			return time.Parse(time.RFC3339Nano, str)
		}
	case KindDuration:
		if isStr {
			return time.ParseDuration(str)
		}
	case KindFloat32, KindFloat64:
		if isNum {
			f, err := strconv.ParseFloat(string(num), kindBits(k))
			if err != nil || math.IsInf(f, 0) {
				return nil, fmt.Errorf("%s does not fit kind %s", num, k)
			}
			return f, nil
		}
	case KindUint32, KindUint64, KindFixed32, KindFixed64:
		if isNum {
			u, err := strconv.ParseUint(string(num), 10, kindBits(k))
			if err != nil {
				return nil, fmt.Errorf("%s does not fit kind %s", num, k)
			}
			return u, nil
		}
	case KindInt32, KindInt64, KindSint32, KindSint64, KindSfixed32, KindSfixed64:
		if isNum {
			n, err := strconv.ParseInt(string(num), 10, kindBits(k))
			if err != nil {
				return nil, fmt.Errorf("%s does not fit kind %s", num, k)
			}
			return n, nil
		}
	default:
		return nil, fmt.Errorf("kind %q has no mock values", k)
	}
	return nil, fmt.Errorf("kind %s cannot hold %s", k, jsonType(x))
}

// kindBits is the size in bits of a number kind.
func kindBits(k Kind) int {
	switch k {
	case KindInt32, KindSint32, KindSfixed32, KindUint32, KindFixed32, KindFloat32:
		return 32
	}
	return 64
}

func sortedKeys(obj map[string]any) []string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func jsonType(v any) string {
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

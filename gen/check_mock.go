package gen

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yrpc/yrpc/gen/names"
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

// resolveMock checks the JSON text js against the fields of msg and
// resolves the message it describes, by the rules that EncodeMock
// documents. It is the one reader of mock JSON: Check runs it on the
// schema's mock values and EncodeMock on the values given to `yrpcc ctl
// mock`, so both accept the same JSON and report the same errors.
func resolveMock(msg *msgModel, js string) (*mockValue, error) {
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	v, err := readJSON(dec, 0)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: more than one value")
	}
	return mockMessage(msg, v, 0)
}

// maxJSONDepth bounds the nesting of JSON arrays and objects that
// readJSON reads. A message is two levels below the one that holds it (in
// a list or a map), so every value of messages nested maxMockDepth deep
// fits, and mockMessage reports the deeper ones.
const maxJSONDepth = 4 * maxMockDepth

// repeatedKey is the value readJSON gives a key that an object has more
// than once, for the reader of the object to refuse with its path.
type repeatedKey struct{}

// readJSON reads the next JSON value of dec as Decode into an any reads
// it (numbers as json.Number), but where an object has a key twice,
// which Decode would take the last of, it gives the key repeatedKey{}.
func readJSON(dec *json.Decoder, depth int) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	open, ok := t.(json.Delim)
	if !ok {
		return t, nil
	}
	if depth >= maxJSONDepth {
		return nil, errors.New("value nested too deeply")
	}
	var v any
	switch open {
	case '[':
		list := []any{}
		for dec.More() && err == nil {
			var x any
			x, err = readJSON(dec, depth+1)
			list = append(list, x)
		}
		v = list
	default: // '{': Token returns matched delimiters and string keys
		obj := map[string]any{}
		for dec.More() && err == nil {
			var k, x any
			if k, err = dec.Token(); err == nil {
				x, err = readJSON(dec, depth+1)
			}
			key, _ := k.(string)
			if _, twice := obj[key]; twice {
				x = repeatedKey{}
			}
			obj[key] = x
		}
		v = obj
	}
	if err == nil {
		_, err = dec.Token() // the closing delimiter
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF // as Decode says of a value cut short
	}
	return v, err
}

func mockMessage(msg *msgModel, v any, depth int) (*mockValue, error) {
	if depth > maxMockDepth {
		return nil, errors.New("value nested too deeply")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("message %s: want a JSON object, got %s", msg.Name, jsonType(v))
	}
	given := make(map[*fieldModel]string, len(obj)) // field -> its key in obj
	for _, k := range sortedKeys(obj) {
		fm := mockFieldNamed(msg, k)
		if fm == nil {
			return nil, fmt.Errorf("message %s has no field %q (it has %s)", msg.Name, k, quotedNames(msg.fields, func(f *fieldModel) string { return f.Name }))
		}
		if _, twice := obj[k].(repeatedKey); twice {
			return nil, fmt.Errorf("message %s: field %q given twice", msg.Name, k)
		}
		if prev, dup := given[fm]; dup {
			return nil, fmt.Errorf("message %s: field %q given twice, as %q and %q", msg.Name, fm.Name, prev, k)
		}
		given[fm] = k
	}
	out := &mockValue{}
	for _, fm := range msg.fields {
		k, ok := given[fm]
		if !ok || obj[k] == nil {
			continue
		}
		val, err := mockFieldValue(fm, obj[k], depth)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", msg.Name, fm.Name, err)
		}
		out.fields = append(out.fields, mockField{fm, val})
	}
	return out, nil
}

// mockFieldNamed returns the field of msg whose schema name is k, else the
// one whose JSON name is k.
func mockFieldNamed(msg *msgModel, k string) *fieldModel {
	if i := slices.IndexFunc(msg.fields, func(f *fieldModel) bool { return f.Name == k }); i >= 0 {
		return msg.fields[i]
	}
	if i := slices.IndexFunc(msg.fields, func(f *fieldModel) bool { return names.JSONName(f.Name) == k }); i >= 0 {
		return msg.fields[i]
	}
	return nil
}

// quotedNames lists the names of xs, quoted: `"a", "b"`, or "none".
func quotedNames[T any](xs []T, name func(T) string) string {
	if len(xs) == 0 {
		return "none"
	}
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(name(x))
	}
	return strings.Join(q, ", ")
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
			if _, twice := obj[k].(repeatedKey); twice {
				return nil, fmt.Errorf("key %q given twice", k)
			}
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

// mockMapKey parses a JSON object key as a map key of kind k.
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
			if (ev.Name == x || names.ProtoEnumValue(e.Name, ev.Name) == x) && i < len(e.consts) {
				return enumValue{index: i, number: ev.Number}, nil
			}
		}
		return enumValue{}, fmt.Errorf("enum %s has no value %q (it has %s)", e.Name, x, quotedNames(e.Values, func(v EnumValue) string { return v.Name }))
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 32)
		if err != nil {
			return enumValue{}, fmt.Errorf("enum %s: %s does not fit kind int32", e.Name, x)
		}
		return enumValue{index: -1, number: int32(n)}, nil
	}
	return enumValue{}, fmt.Errorf("enum %s: want a name or a number, got %s", e.Name, jsonType(x))
}

// mockScalar converts a JSON scalar to the Go value of kind k.
func mockScalar(k Kind, x any) (any, error) {
	str, isStr := x.(string)
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
				return nil, fmt.Errorf("bytes must be base64 (standard, padded): %w", err)
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
		return mockFloat(k, x)
	case KindUint32, KindUint64, KindFixed32, KindFixed64, KindInt32, KindInt64, KindSint32, KindSint64, KindSfixed32, KindSfixed64:
		return mockInteger(k, x)
	default:
		return nil, fmt.Errorf("kind %q has no mock values", k)
	}
	return nil, fmt.Errorf("kind %s cannot hold %s", k, jsonType(x))
}

// mockFloat converts a JSON number, or "NaN", "Infinity" or "-Infinity",
// to a float of kind k.
func mockFloat(k Kind, x any) (float64, error) {
	switch x := x.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), kindBits(k))
		if err != nil {
			return 0, fmt.Errorf("%s does not fit kind %s", x, k)
		}
		return f, nil
	case string:
		switch x {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
		return 0, fmt.Errorf("kind %s cannot hold the string %q: only \"NaN\", \"Infinity\" and \"-Infinity\" may be strings", k, x)
	}
	return 0, fmt.Errorf("kind %s cannot hold %s", k, jsonType(x))
}

// mockInteger converts a JSON number, or a decimal string for a 64-bit
// kind, to the int64 or uint64 of integer kind k.
func mockInteger(k Kind, x any) (any, error) {
	var text, shown string
	switch x := x.(type) {
	case json.Number:
		text, shown = string(x), string(x)
	case string:
		if kindBits(k) != 64 {
			return nil, fmt.Errorf("kind %s cannot hold a string: only 64-bit integers may be strings", k)
		}
		text, shown = x, strconv.Quote(x)
	default:
		return nil, fmt.Errorf("kind %s cannot hold %s", k, jsonType(x))
	}
	var n any
	var err error
	switch k {
	case KindUint32, KindUint64, KindFixed32, KindFixed64:
		n, err = strconv.ParseUint(text, 10, kindBits(k))
	default:
		n, err = strconv.ParseInt(text, 10, kindBits(k))
	}
	if err != nil {
		return nil, fmt.Errorf("%s does not fit kind %s", shown, k)
	}
	return n, nil
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

package gen

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/dave/jennifer/jen"
)

// mockLit is a response message built as Go source from a mock's JSON
// value: statements that declare the values Optional fields point to, and
// the composite literal.
type mockLit struct {
	pre  []jen.Code
	expr jen.Code
}

// mockValue checks the JSON object js against the fields of msg and builds
// the literal of the message it describes. Field names are the schema's;
// values follow protobuf's JSON mapping (bytes in base64, enums by name or
// number, times in RFC 3339, durations as Go or protobuf duration strings).
func (m *model) mockValue(msg *msgModel, js string) (*mockLit, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(js)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("invalid JSON: more than one value")
	}
	lit := &mockLit{}
	expr, err := lit.message(msg, v, 0, false)
	if err != nil {
		return nil, err
	}
	lit.expr = expr
	return lit, nil
}

// message returns &Msg{...}, or {...} when elide is set: a list element or
// map value, whose type the composite literal already names.
func (l *mockLit) message(msg *msgModel, v any, depth int, elide bool) (jen.Code, error) {
	if depth > 64 {
		return nil, errors.New("value nested too deeply")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("message %s: want a JSON object, got %s", msg.Name, jsonType(v))
	}
	for k := range obj {
		if findField(msg, k) == nil {
			return nil, fmt.Errorf("message %s has no field %q", msg.Name, k)
		}
	}
	var d literal // in declaration order
	for _, fm := range msg.fields {
		v, ok := obj[fm.Name]
		if !ok {
			v, ok = obj[fm.goName]
		}
		if !ok || v == nil {
			continue
		}
		code, err := l.field(fm, v, depth)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", msg.Name, fm.Name, err)
		}
		d.add(fm.goName, code)
	}
	if elide {
		return d.values(), nil
	}
	return jen.Op("&").Id(msg.Name).Add(d.values()), nil
}

func findField(msg *msgModel, name string) *fieldModel {
	for _, f := range msg.fields {
		if f.Name == name || f.goName == name {
			return f
		}
	}
	return nil
}

func (l *mockLit) field(fm *fieldModel, v any, depth int) (jen.Code, error) {
	switch {
	case fm.MapKey != "":
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("want a JSON object, got %s", jsonType(v))
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		d := jen.Dict{}
		for _, k := range keys {
			key, err := mapKey(fm.MapKey, k)
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", k, err)
			}
			val, err := l.elem(fm.value(), obj[k], depth, true)
			if err != nil {
				return nil, fmt.Errorf("[%q]: %w", k, err)
			}
			d[key] = val
		}
		return fm.goType().Values(d), nil
	case fm.List:
		arr, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("want a JSON array, got %s", jsonType(v))
		}
		var elems []jen.Code
		for i, x := range arr {
			e, err := l.elem(fm.value(), x, depth, true)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			elems = append(elems, e)
		}
		return fm.goType().Values(elems...), nil
	}
	e, err := l.elem(fm.value(), v, depth, false)
	if err != nil || !fm.pointer() {
		return e, err
	}
	name := fmt.Sprintf("v%d", len(l.pre))
	switch fm.Kind {
	case KindEnum, KindString, KindBool, KindTime, KindDuration:
		l.pre = append(l.pre, jen.Id(name).Op(":=").Add(e))
	default:
		l.pre = append(l.pre, jen.Id(name).Op(":=").Add(fm.elemType()).Call(e))
	}
	return jen.Op("&").Id(name), nil
}

func mapKey(k Kind, s string) (jen.Code, error) {
	if k == KindString {
		return jen.Lit(s), nil
	}
	if k == KindBool {
		b, err := strconv.ParseBool(s)
		return jen.Lit(b), err
	}
	return scalar(value{kind: k}, json.Number(s))
}

func (l *mockLit) elem(v value, x any, depth int, elide bool) (jen.Code, error) {
	switch v.kind {
	case KindMessage:
		return l.message(v.msg, x, depth+1, elide)
	case KindEnum:
		switch x := x.(type) {
		case string:
			for i, ev := range v.enum.Values {
				if ev.Name == x {
					return jen.Id(v.enum.consts[i]), nil
				}
			}
			return nil, fmt.Errorf("enum %s has no value %q", v.enum.Name, x)
		case json.Number:
			n, err := strconv.ParseInt(string(x), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("enum %s: %w", v.enum.Name, err)
			}
			return jen.Id(v.enum.Name).Call(jen.Lit(int(n))), nil
		}
		return nil, fmt.Errorf("enum %s: want a name or a number, got %s", v.enum.Name, jsonType(x))
	}
	return scalar(v, x)
}

// scalar converts a JSON scalar to a Go literal of kind v.kind.
func scalar(v value, x any) (jen.Code, error) {
	str, isStr := x.(string)
	num, isNum := x.(json.Number)
	switch v.kind {
	case KindBool:
		if b, ok := x.(bool); ok {
			return jen.Lit(b), nil
		}
	case KindString:
		if isStr {
			return jen.Lit(str), nil
		}
	case KindBytes:
		if isStr {
			b, err := base64.StdEncoding.DecodeString(str)
			if err != nil {
				return nil, fmt.Errorf("bytes must be base64: %w", err)
			}
			return jen.Index().Byte().Call(jen.Lit(string(b))), nil
		}
	case KindTime:
		if isStr {
			t, err := time.Parse(time.RFC3339Nano, str)
			if err != nil {
				return nil, err
			}
			return jen.Qual(timePkg, "Unix").Call(jen.Id(strconv.FormatInt(t.Unix(), 10)), jen.Lit(t.Nanosecond())).Dot("UTC").Call(), nil
		}
	case KindDuration:
		if isStr {
			d, err := time.ParseDuration(str)
			if err != nil {
				return nil, err
			}
			return durationLit(d), nil
		}
	case KindFloat32, KindFloat64:
		if isNum {
			bits := 64
			if v.kind == KindFloat32 {
				bits = 32
			}
			f, err := strconv.ParseFloat(string(num), bits)
			if err != nil || math.IsInf(f, 0) {
				return nil, fmt.Errorf("%s is not a %s", num, v.kind)
			}
			return jen.Lit(f), nil
		}
	case KindUint32, KindUint64, KindFixed32, KindFixed64:
		if isNum {
			bits := 64
			if v.kind == KindUint32 || v.kind == KindFixed32 {
				bits = 32
			}
			u, err := strconv.ParseUint(string(num), 10, bits)
			if err != nil {
				return nil, fmt.Errorf("%s is not a %s", num, v.kind)
			}
			return jen.Id(strconv.FormatUint(u, 10)), nil
		}
	default: // signed integers
		if isNum {
			bits := 64
			if v.kind == KindInt32 || v.kind == KindSint32 || v.kind == KindSfixed32 {
				bits = 32
			}
			n, err := strconv.ParseInt(string(num), 10, bits)
			if err != nil {
				return nil, fmt.Errorf("%s is not a %s", num, v.kind)
			}
			return jen.Id(strconv.FormatInt(n, 10)), nil
		}
	}
	return nil, fmt.Errorf("want a %s, got %s", v.kind, jsonType(x))
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

func (m *model) genMockValue(f *jen.File, s *svcModel, mm *methodModel) {
	name := s.lower + mm.Name + "Mock"
	f.Commentf("%s returns the mock response of %s from the schema.", name, mm.full)
	body := append(slices.Clone(mm.mock.pre), jen.Return(mm.mock.expr))
	f.Func().Id(name).Params().Qual(rtPkg, "Message").Block(body...)
	f.Line()
}

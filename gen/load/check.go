package load

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"

	"github.com/yrpc/yrpc/gen"
)

// maxNumber is protobuf's largest field number, 2^29-1.
const maxNumber = 1<<29 - 1

// generatedMethods are the methods that generated code defines on every
// message; a field with one of these Go names would clash with it.
var generatedMethods = []string{"Size", "Marshal", "MarshalAppend", "Unmarshal", "Validate", "String", "Reset"}

// Check validates spec and returns an *Error listing every problem, each
// with the schema position (when the spec has one), the type and the field,
// method or call: missing, duplicate, reserved or out-of-range wire numbers;
// names that clash in Go (user_id and UserID; a field named like a generated
// method); references to unknown messages; bad enums; hash keys that do not
// name a scalar request field; invalid policies. It returns nil for a valid
// spec. The generator may call it on specs built in memory.
func Check(spec *gen.Spec) error {
	return errorOf(check(spec, func(pos string) string { return pos }))
}

// checker holds the state of one Check run.
type checker struct {
	spec     *gen.Spec
	pos      func(string) string // display form of a spec position
	problems []Problem
	messages map[string]*gen.Message
	enums    map[string]*enumDecl
	globals  map[string]string // Go name -> what declared it
}

type enumDecl struct {
	enum  *gen.Enum
	where string
}

func check(spec *gen.Spec, pos func(string) string) []Problem {
	c := &checker{spec: spec, pos: pos, messages: map[string]*gen.Message{}, enums: map[string]*enumDecl{}, globals: map[string]string{}}
	if spec == nil {
		return []Problem{{Msg: "spec is nil"}}
	}
	if spec.Package == "" {
		c.add("", "", "the spec has no package name; annotate a type with schema.Package or give the generated package name")
	} else if !isProtoPackage(spec.Package) {
		c.add("", "", "package %q is not dot-separated identifiers", spec.Package)
	}
	for _, m := range spec.Messages {
		if m == nil {
			c.add("", "", "nil message in spec")
			continue
		}
		if !isExported(m.Name) {
			c.add(m.Pos, m.Name, "message name %q is not an exported Go identifier", m.Name)
		}
		c.global(m.Name, m.Pos, m.Name, "message "+m.Name)
		c.messages[m.Name] = m
	}
	for _, s := range spec.Services {
		if s == nil {
			c.add("", "", "nil service in spec")
			continue
		}
		if !isExported(s.Name) {
			c.add(s.Pos, s.Name, "service name %q is not an exported Go identifier", s.Name)
		}
		c.global(s.Name, s.Pos, s.Name, "service "+s.Name)
		for _, n := range []string{s.Name + "Client", s.Name + "Server", "Unimplemented" + s.Name + "Server", "New" + s.Name + "Client", "Register" + s.Name} {
			c.global(n, s.Pos, s.Name, "the generated code of service "+s.Name)
		}
	}
	for _, m := range spec.Messages {
		if m != nil {
			c.message(m)
		}
	}
	for _, s := range spec.Services {
		if s != nil {
			c.service(s)
		}
	}
	return c.problems
}

func (c *checker) add(pos, typ, format string, args ...any) {
	if pos != "" {
		pos = c.pos(pos)
	}
	c.problems = append(c.problems, Problem{Pos: pos, Type: typ, Msg: fmt.Sprintf(format, args...)})
}

// global declares a package-level Go name and reports a clash at pos for
// the schema type typ.
func (c *checker) global(name, pos, typ, what string) {
	if prev, ok := c.globals[name]; ok {
		c.add(pos, typ, "Go name %s of %s clashes with %s", name, what, prev)
		return
	}
	c.globals[name] = what
}

func (c *checker) message(m *gen.Message) {
	for _, r := range m.Reserved {
		if r < 1 || r > maxNumber {
			c.add(m.Pos, m.Name, "reserved number %d is out of the range 1-536870911", r)
		}
	}
	goNames := map[string]string{}
	numbers := map[int32]string{}
	for _, f := range m.Fields {
		if f == nil {
			c.add(m.Pos, m.Name, "nil field")
			continue
		}
		where := fmt.Sprintf("field %q", f.Name)
		if !isIdent(f.Name) {
			c.add(f.Pos, m.Name, "%s: name is not an identifier like \"created_at\"", where)
		} else {
			g := gen.GoName(f.Name)
			if prev, ok := goNames[g]; ok {
				c.add(f.Pos, m.Name, "%s and field %q both become the Go field %s", where, prev, g)
			} else {
				goNames[g] = f.Name
			}
			if slices.Contains(generatedMethods, g) {
				c.add(f.Pos, m.Name, "%s becomes the Go field %s, which clashes with the generated method %s.%s", where, g, m.Name, g)
			}
		}
		switch n := f.Number; {
		case n == 0:
			c.add(f.Pos, m.Name, "%s: missing wire number", where)
		case n < 0 || n > maxNumber:
			c.add(f.Pos, m.Name, "%s: wire number %d is out of the range 1-536870911", where, n)
		case n >= 19000 && n <= 19999:
			c.add(f.Pos, m.Name, "%s: wire number %d is in protobuf's reserved range 19000-19999", where, n)
		case slices.Contains(m.Reserved, n):
			c.add(f.Pos, m.Name, "%s: wire number %d is reserved by %s.Reserved", where, n, m.Name)
		default:
			if prev, ok := numbers[n]; ok {
				c.add(f.Pos, m.Name, "%s: wire number %d is already used by field %q", where, n, prev)
			} else {
				numbers[n] = f.Name
			}
		}
		c.field(m, f, where)
	}
}

func (c *checker) field(m *gen.Message, f *gen.Field, where string) {
	isMap := f.MapKey != ""
	if !validKind(f.Kind) {
		c.add(f.Pos, m.Name, "%s: unknown kind %q", where, f.Kind)
	}
	if isMap && f.List {
		c.add(f.Pos, m.Name, "%s: a field cannot be both a list and a map", where)
	}
	if isMap && !mapKeyKind(f.MapKey) {
		c.add(f.Pos, m.Name, "%s: map key kind %q is not an integer kind, bool or string", where, f.MapKey)
	}
	if f.Optional && (f.List || isMap) {
		c.add(f.Pos, m.Name, "%s: a list or map cannot be optional", where)
	}
	if f.Unpacked && (!f.List || !packable(f.Kind)) {
		c.add(f.Pos, m.Name, "%s: only a list of numbers, bools or enums can be unpacked", where)
	}
	switch {
	case f.Kind == gen.KindMessage && f.Message == "":
		c.add(f.Pos, m.Name, "%s: message field without a message type", where)
	case f.Kind == gen.KindMessage && c.messages[f.Message] == nil:
		c.add(f.Pos, m.Name, "%s: unknown message %q (a message is an exported type of the schema package that embeds schema.Message)", where, f.Message)
	case f.Kind != gen.KindMessage && f.Message != "":
		c.add(f.Pos, m.Name, "%s: a %s field cannot reference message %q", where, f.Kind, f.Message)
	}
	switch {
	case f.Kind == gen.KindEnum && f.Enum == nil:
		c.add(f.Pos, m.Name, "%s: enum field without an enum type", where)
	case f.Kind == gen.KindEnum:
		c.enum(m, f, where)
	case f.Enum != nil:
		c.add(f.Pos, m.Name, "%s: a %s field cannot have enum values", where, f.Kind)
	}
	c.validators(m, f, where)
}

func (c *checker) enum(m *gen.Message, f *gen.Field, where string) {
	e := f.Enum
	if !isExported(e.Name) {
		c.add(f.Pos, m.Name, "%s: enum name %q is not an exported Go identifier", where, e.Name)
		return
	}
	if len(e.Values) == 0 {
		c.add(f.Pos, m.Name, "%s: enum %s has no values; add them with Values", where, e.Name)
		return
	}
	if e.Values[0].Number != 0 {
		c.add(f.Pos, m.Name, "%s: the first value %q of enum %s is its zero value and must be numbered 0, not %d", where, e.Values[0].Name, e.Name, e.Values[0].Number)
	}
	names, numbers := map[string]bool{}, map[int32]string{}
	for _, v := range e.Values {
		if !isIdent(v.Name) {
			c.add(f.Pos, m.Name, "%s: enum value %q is not an identifier", where, v.Name)
		}
		if names[v.Name] {
			c.add(f.Pos, m.Name, "%s: enum %s declares the value %q twice", where, e.Name, v.Name)
		}
		names[v.Name] = true
		if prev, ok := numbers[v.Number]; ok {
			c.add(f.Pos, m.Name, "%s: enum %s gives the values %q and %q the same number %d", where, e.Name, prev, v.Name, v.Number)
		}
		numbers[v.Number] = v.Name
	}
	if prev, ok := c.enums[e.Name]; ok {
		if !slices.Equal(prev.enum.Values, e.Values) {
			c.add(f.Pos, m.Name, "%s: enum %s has other values than at %s", where, e.Name, prev.where)
		}
		return
	}
	c.enums[e.Name] = &enumDecl{enum: e, where: c.pos(f.Pos)}
	c.global(e.Name, f.Pos, m.Name, fmt.Sprintf("enum %s of %s.%s", e.Name, m.Name, f.Name))
}

func (c *checker) validators(m *gen.Message, f *gen.Field, where string) {
	v := f.Validate
	sized := f.List || f.MapKey != "" || f.Kind == gen.KindString || f.Kind == gen.KindBytes
	scalar := !f.List && f.MapKey == ""
	if (v.MaxLen != 0 || v.MinLen != 0) && !sized {
		c.add(f.Pos, m.Name, "%s: length limits apply to strings, bytes, lists and maps", where)
	}
	if v.MaxLen < 0 || v.MinLen < 0 || (v.MaxLen > 0 && v.MinLen > v.MaxLen) {
		c.add(f.Pos, m.Name, "%s: bad length limits [%d, %d]", where, v.MinLen, v.MaxLen)
	}
	if v.NotEmpty && !sized && f.Kind != gen.KindMessage {
		c.add(f.Pos, m.Name, "%s: not-empty applies to strings, bytes, lists, maps and messages", where)
	}
	if v.Min != nil || v.Max != nil {
		switch {
		case !scalar || !numericKind(f.Kind):
			c.add(f.Pos, m.Name, "%s: range applies to number fields", where)
		case v.Min == nil || v.Max == nil || !(*v.Min <= *v.Max):
			c.add(f.Pos, m.Name, "%s: bad range", where)
		}
	}
	if v.Match != "" {
		if !scalar || f.Kind != gen.KindString {
			c.add(f.Pos, m.Name, "%s: match applies to string fields", where)
		} else if _, err := regexp.Compile(v.Match); err != nil {
			c.add(f.Pos, m.Name, "%s: bad regexp: %v", where, err)
		}
	}
}

func (c *checker) service(s *gen.Service) {
	switch s.Balance {
	case "", "random", "round_robin", "weighted_round_robin", "least_active", "p2c", "consistent_hash":
	default:
		c.add(s.Pos, s.Name, "unknown balancer %q", s.Balance)
	}
	if r := s.RateLimit; r != nil && (!(r.Rate > 0) || r.Burst < 1) {
		c.add(s.Pos, s.Name, "bad rate limit %v/s, burst %d", r.Rate, r.Burst)
	}
	if b := s.Breaker; b != nil && (!(b.ErrorRate > 0 && b.ErrorRate <= 1) || b.MinRequests < 1 || b.OpenFor <= 0) {
		c.add(s.Pos, s.Name, "bad breaker: error rate %v, min requests %d, open for %v", b.ErrorRate, b.MinRequests, b.OpenFor)
	}
	names := map[string]bool{}
	for _, m := range s.Methods {
		if m == nil {
			c.add(s.Pos, s.Name, "nil method")
			continue
		}
		where := fmt.Sprintf("method %s", m.Name)
		if !isExported(m.Name) {
			c.add(m.Pos, s.Name, "method name %q is not an exported Go identifier", m.Name)
		}
		if names[m.Name] {
			c.add(m.Pos, s.Name, "%s is declared twice", where)
		}
		names[m.Name] = true
		c.method(s, m, where)
	}
}

func (c *checker) method(s *gen.Service, m *gen.Method, where string) {
	add := func(format string, args ...any) {
		c.add(m.Pos, s.Name, where+": "+format, args...)
	}
	req := c.messages[m.Request]
	if req == nil {
		add("unknown request message %q", m.Request)
	}
	switch {
	case m.Oneway && m.Response != "":
		add("a oneway method has no response, got %q", m.Response)
	case !m.Oneway && c.messages[m.Response] == nil:
		add("unknown response message %q", m.Response)
	}
	if m.Timeout < 0 {
		add("negative timeout %v", m.Timeout)
	}
	if m.Hedge < 0 || (m.Hedge > 0 && !m.Idempotent) {
		add("hedging (%v) needs an idempotent method", m.Hedge)
	}
	if r := m.Retry; r != nil {
		if r.Tries < 1 || r.Interval < 0 || r.MaxInterval < 0 || (r.Backoff != 0 && !(r.Backoff >= 1)) || !(r.Jitter >= 0 && r.Jitter <= 1) {
			add("bad retry policy: tries %d, interval %v, backoff %v up to %v, jitter %v", r.Tries, r.Interval, r.Backoff, r.MaxInterval, r.Jitter)
		}
	}
	switch m.FaultMode {
	case "", "failover", "failfast", "failsafe":
		if m.Forks != 0 {
			add("forks are set but the fault mode is %q", m.FaultMode)
		}
	case "forking":
		if m.Forks < 2 {
			add("forking needs at least 2 forks, got %d", m.Forks)
		}
		if !m.Idempotent {
			add("forking needs an idempotent method")
		}
	default:
		add("unknown fault mode %q", m.FaultMode)
	}
	if m.HashKey != "" && req != nil {
		f := fieldNamed(req, m.HashKey)
		switch {
		case f == nil:
			add("hash key %q is not a field of %s", m.HashKey, req.Name)
		case f.List || f.MapKey != "" || f.Kind == gen.KindMessage || f.Kind == gen.KindTime || f.Kind == "":
			add("hash key %q must be a scalar or string field of %s", m.HashKey, req.Name)
		}
	}
	if mk := m.Mock; mk != nil {
		c.mock(s, m, mk, add)
	}
}

func (c *checker) mock(s *gen.Service, m *gen.Method, mk *gen.Mock, add func(string, ...any)) {
	switch mk.Action {
	case "empty":
	case "fail":
		if !knownCode(mk.Code) {
			add("mock fails with unknown status code %q", mk.Code)
		}
	case "value":
		resp := c.messages[m.Response]
		if m.Oneway || resp == nil {
			add("mock value needs a response message")
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(mk.Value), &obj); err != nil {
			add("mock value is not a JSON object: %v", err)
			return
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if fieldNamed(resp, k) == nil {
				add("mock value sets %q, which is not a field of %s", k, resp.Name)
			}
		}
	default:
		add("unknown mock action %q", mk.Action)
	}
}

func fieldNamed(m *gen.Message, name string) *gen.Field {
	for _, f := range m.Fields {
		if f != nil && f.Name == name {
			return f
		}
	}
	return nil
}

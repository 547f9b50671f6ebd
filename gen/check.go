package gen

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/yrpc/yrpc/gen/names"
)

// maxNumber is protobuf's largest field number, 2^29-1.
const maxNumber = 1<<29 - 1

// reservedMethods are the methods that generated code defines, or keeps
// for itself, on every message; a field whose Go name is one of them would
// clash with it.
var reservedMethods = []string{"Size", "Marshal", "MarshalAppend", "Unmarshal", "UnmarshalOwned", "Validate", "String", "Reset"}

// checker holds the state of one check: the model it builds and every
// problem found on the way.
type checker struct {
	m        *model
	byName   map[string]*msgModel
	enums    map[string]*enumDecl
	globals  map[string]string    // package-level Go name -> what declares it
	protos   map[string]protoDecl // protobuf name in the package's scope -> what declares it
	files    map[string]string    // generated file name -> what it holds
	ids      map[uint32]string    // method ID -> full method name
	problems []Problem
}

// enumDecl is the first declaration of an enum.
type enumDecl struct {
	em    *enumModel
	where string // its position, or "Message.field"
}

// protoDecl is what declares a protobuf name. pinned says that the name is
// not the Go name that declare claims for the same thing (a message's
// schema.ProtoName, an enum value), so a clash of two unpinned names is
// already a clash of Go names, reported once.
type protoDecl struct {
	what   string
	pinned bool
}

// check resolves spec into a model for protobuf package pkg and checks it.
// It returns the model only when there is no problem.
func check(spec *Spec, pkg string) (*model, []Problem) {
	c := &checker{
		m:      &model{pkg: pkg},
		byName: map[string]*msgModel{}, enums: map[string]*enumDecl{},
		globals: map[string]string{}, protos: map[string]protoDecl{}, files: map[string]string{}, ids: map[uint32]string{},
	}
	if spec.Version != 0 && spec.Version != SpecVersion {
		c.add(Problem{}, "spec version %d, this generator reads version %d", spec.Version, SpecVersion)
	}
	switch {
	case pkg == "":
		c.add(Problem{}, "the spec has no package name; annotate a type of the schema with schema.Package")
	case !names.IsProtoPackage(pkg):
		c.add(Problem{}, "package %q is not dot-separated identifiers", pkg)
	}
	c.declare(Problem{}, "FileDescriptor", "the generated file descriptor accessor")
	c.declare(Problem{}, "fileDescriptor", "the generated file descriptor")
	for _, msg := range spec.Messages {
		c.declareMessage(msg)
	}
	for _, s := range spec.Services {
		c.declareService(s)
	}
	for _, mm := range c.m.msgs {
		c.fields(mm)
	}
	c.markCopies()
	c.markValidates()
	for _, sm := range c.m.services {
		c.service(sm)
	}
	if len(c.problems) > 0 {
		return nil, c.problems
	}
	for _, d := range c.enums {
		c.m.enums = append(c.m.enums, d.em)
	}
	slices.SortFunc(c.m.msgs, func(a, b *msgModel) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(c.m.enums, func(a, b *enumModel) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(c.m.services, func(a, b *svcModel) int { return cmp.Compare(a.Name, b.Name) })
	return c.m, nil
}

// add records a problem at the place at names.
func (c *checker) add(at Problem, format string, args ...any) {
	at.Msg = fmt.Sprintf(format, args...)
	c.problems = append(c.problems, at)
}

// typeAt, fieldAt and methodAt place a problem on a type, a field or a
// method; a member without a position takes its type's.
func typeAt(pos, typ string) Problem { return Problem{Pos: pos, Type: typ} }

func fieldAt(msg *Message, f *Field) Problem {
	return Problem{Pos: cmp.Or(f.Pos, msg.Pos), Type: msg.Name, Field: f.Name}
}

func methodAt(s *Service, meth *Method) Problem {
	return Problem{Pos: cmp.Or(meth.Pos, s.Pos), Type: s.Name, Method: meth.Name}
}

// declare claims a package-level Go name of the generated code for what.
func (c *checker) declare(at Problem, name, what string) {
	if prev, ok := c.globals[name]; ok {
		c.add(at, "Go name %s of %s clashes with %s", name, what, prev)
		return
	}
	c.globals[name] = what
}

// protoName claims a name of the protobuf package's scope, which holds
// its messages, enums, enum values (protobuf scopes them as C++ does) and
// services, for what.
func (c *checker) protoName(at Problem, name, what string, pinned bool) {
	if prev, ok := c.protos[name]; ok {
		if pinned || prev.pinned {
			c.add(at, "protobuf name %s of %s clashes with %s", name, what, prev.what)
		}
		return
	}
	c.protos[name] = protoDecl{what: what, pinned: pinned}
}

// file claims a generated file name for what.
func (c *checker) file(at Problem, name, what string) {
	if prev, ok := c.files[name]; ok {
		c.add(at, "%s and %s would both be written to %s; rename one", what, prev, name)
		return
	}
	c.files[name] = what
}

func (c *checker) declareMessage(msg *Message) {
	if msg == nil {
		c.add(Problem{}, "nil message in spec")
		return
	}
	at := typeAt(msg.Pos, msg.Name)
	if !names.IsExported(msg.Name) {
		c.add(at, "message name %q is not an exported Go identifier", msg.Name)
	}
	what := "message " + msg.Name
	c.declare(at, msg.Name, what)
	pname := msg.ProtobufName()
	if msg.ProtoName != "" && !names.IsIdent(msg.ProtoName) {
		c.add(at, "protobuf name %q (schema.ProtoName) is not an identifier like \"Item\"", msg.ProtoName)
	}
	if pname != msg.Name {
		c.protoName(at, pname, what+" (schema.ProtoName)", true)
	} else {
		c.protoName(at, pname, what, false)
	}
	mm := &msgModel{Message: msg, full: c.m.pkg + "." + pname, file: names.FileStem(names.Snake(msg.Name), "message") + ".yrpc.go"}
	c.file(at, mm.file, what)
	if _, ok := c.byName[msg.Name]; !ok {
		c.byName[msg.Name] = mm
	}
	c.m.msgs = append(c.m.msgs, mm)
}

// fields resolves and checks the fields of mm.
func (c *checker) fields(mm *msgModel) {
	for i, r := range mm.Reserved {
		switch {
		case r < 1 || r > maxNumber:
			c.add(typeAt(mm.Pos, mm.Name), "reserved number %d is out of the range 1-536870911", r)
		case slices.Contains(mm.Reserved[:i], r):
			// protobuf refuses overlapping reserved ranges.
			c.add(typeAt(mm.Pos, mm.Name), "reserved number %d is listed twice in %s.Reserved", r, mm.Name)
		}
	}
	goNames := map[string]string{}
	numbers := map[int32]string{}
	// scope is the message's protobuf scope: its field names and the
	// entry messages that protobuf declares in it for map fields.
	scope := map[string]string{}
	for _, f := range mm.Fields {
		if f == nil {
			c.add(typeAt(mm.Pos, mm.Name), "nil field")
			continue
		}
		at := fieldAt(mm.Message, f)
		fm := &fieldModel{Field: f, goName: names.GoName(f.Name)}
		switch prev, clash := goNames[fm.goName]; {
		case !names.IsIdent(f.Name):
			c.add(at, "name is not an identifier like \"created_at\"")
		case clash:
			c.add(at, "becomes the Go field %s, as field %q does", fm.goName, prev)
		case slices.Contains(reservedMethods, fm.goName):
			c.add(at, "becomes the Go field %s, which clashes with the generated method %s.%s", fm.goName, mm.Name, fm.goName)
		default:
			goNames[fm.goName] = f.Name
			c.scope(at, scope, f)
		}
		c.number(at, mm, f, numbers)
		c.kind(at, mm, fm)
		c.validators(at, mm, fm)
		mm.fields = append(mm.fields, fm)
	}
	mm.byNumber = slices.Clone(mm.fields)
	slices.SortFunc(mm.byNumber, func(a, b *fieldModel) int { return cmp.Compare(a.Number, b.Number) })
}

// scope claims the names that field f declares in its message's protobuf
// scope: its own name and, for a map, its entry message's ("labels" ->
// LabelsEntry). A field named like another's entry message would make a
// descriptor that protobuf refuses to load.
func (c *checker) scope(at Problem, scope map[string]string, f *Field) {
	claim := func(name, what string) {
		if prev, ok := scope[name]; ok {
			c.add(at, "protobuf name %s of %s clashes with %s; rename one", name, what, prev)
			return
		}
		scope[name] = what
	}
	claim(f.Name, fmt.Sprintf("field %q", f.Name))
	if f.MapKey != "" {
		claim(names.MapEntry(f.Name), fmt.Sprintf("the map entry message of field %q", f.Name))
	}
}

func (c *checker) number(at Problem, mm *msgModel, f *Field, numbers map[int32]string) {
	switch n := f.Number; {
	case n == 0:
		c.add(at, "missing wire number")
	case n < 0 || n > maxNumber:
		c.add(at, "wire number %d is out of the range 1-536870911", n)
	case n >= 19000 && n <= 19999:
		c.add(at, "wire number %d is in protobuf's reserved range 19000-19999", n)
	case slices.Contains(mm.Reserved, n):
		c.add(at, "wire number %d is reserved by %s.Reserved", n, mm.Name)
	default:
		if prev, ok := numbers[n]; ok {
			c.add(at, "wire number %d is already used by field %q", n, prev)
		} else {
			numbers[n] = f.Name
		}
	}
}

// kind checks the shape of a field and resolves the message or enum it
// refers to.
func (c *checker) kind(at Problem, mm *msgModel, fm *fieldModel) {
	f := fm.Field
	isMap := f.MapKey != ""
	if !knownKind(f.Kind) {
		c.add(at, "unknown kind %q", f.Kind)
	}
	if isMap && f.List {
		c.add(at, "a field cannot be both a list and a map")
	}
	if isMap && !mapKeyKind(f.MapKey) {
		c.add(at, "map key kind %q is not an integer kind, bool or string", f.MapKey)
	}
	if f.Optional && (f.List || isMap) {
		c.add(at, "a list or map cannot be optional")
	}
	if f.Unpacked && (!f.List || !packable(f.Kind)) {
		c.add(at, "only a list of numbers, bools or enums can be unpacked")
	}
	switch {
	case f.Kind == KindMessage && f.Message == "":
		c.add(at, "message field without a message type")
	case f.Kind == KindMessage:
		if fm.msg = c.byName[f.Message]; fm.msg == nil {
			c.add(at, "unknown message %q (a message is an exported type of the schema package that embeds schema.Message)", f.Message)
		}
	case f.Message != "":
		c.add(at, "a %s field cannot reference message %q", f.Kind, f.Message)
	}
	switch {
	case f.Kind == KindEnum && f.Enum == nil:
		c.add(at, "enum field without an enum type")
	case f.Kind == KindEnum:
		fm.enum = c.enum(at, mm, f)
	case f.Enum != nil:
		c.add(at, "a %s field cannot have enum values", f.Kind)
	}
}

// enum resolves the enum type of field f of mm: the first field that uses
// an enum declares it, and every other must give the same values.
func (c *checker) enum(at Problem, mm *msgModel, f *Field) *enumModel {
	e := f.Enum
	if !names.IsExported(e.Name) {
		c.add(at, "enum name %q is not an exported Go identifier", e.Name)
		return nil
	}
	if prev, ok := c.enums[e.Name]; ok {
		if !slices.Equal(prev.em.Values, e.Values) {
			c.add(at, "enum %s has other values than at %s", e.Name, prev.where)
		}
		return prev.em
	}
	em := &enumModel{Enum: e, file: names.Snake(e.Name) + "_enum.yrpc.go"}
	c.enums[e.Name] = &enumDecl{em: em, where: cmp.Or(f.Pos, mm.Name+"."+f.Name)}
	what := fmt.Sprintf("enum %s of %s.%s", e.Name, mm.Name, f.Name)
	c.declare(at, e.Name, what)
	c.declare(at, "Parse"+e.Name, what)
	c.protoName(at, e.Name, what, false)
	c.file(at, em.file, "enum "+e.Name)
	if len(e.Values) == 0 {
		c.add(at, "enum %s has no values; add them with Values", e.Name)
		return em
	}
	if first := e.Values[0]; first.Number != 0 {
		c.add(at, "the first value %q of enum %s is its zero value and must be numbered 0, not %d", first.Name, e.Name, first.Number)
	}
	seen, numbers := map[string]bool{}, map[int32]string{}
	for _, v := range e.Values {
		if !names.IsIdent(v.Name) {
			c.add(at, "enum value %q is not an identifier", v.Name)
		}
		if seen[v.Name] {
			c.add(at, "enum %s declares the value %q twice", e.Name, v.Name)
		}
		seen[v.Name] = true
		if prev, ok := numbers[v.Number]; ok {
			c.add(at, "enum %s gives the values %q and %q the same number %d", e.Name, prev, v.Name, v.Number)
		}
		numbers[v.Number] = v.Name
		em.consts = append(em.consts, e.Name+names.GoName(v.Name))
		c.declare(at, em.consts[len(em.consts)-1], what+" value "+v.Name)
		c.protoName(at, names.ProtoEnumValue(e.Name, v.Name), what+" value "+v.Name, true)
	}
	return em
}

// validators checks that the validators of a field suit its kind.
func (c *checker) validators(at Problem, mm *msgModel, fm *fieldModel) {
	v := fm.Validate
	collection := fm.List || fm.MapKey != ""
	sized := collection || fm.Kind == KindString || fm.Kind == KindBytes
	if (v.MinLen != 0 || v.MaxLen != 0) && !sized {
		c.add(at, "length limits apply to strings, bytes, lists and maps")
	}
	if v.MinLen < 0 || v.MaxLen < 0 || (v.MaxLen != 0 && v.MinLen > v.MaxLen) {
		c.add(at, "bad length limits [%d, %d]", v.MinLen, v.MaxLen)
	}
	if v.Match != "" {
		switch _, err := regexp.Compile(v.Match); {
		case fm.Kind != KindString || fm.MapKey != "":
			c.add(at, "match applies to strings and lists of strings")
		case err != nil:
			c.add(at, "bad regexp %q: %v", v.Match, err)
		default:
			c.declare(at, regexpVar(mm, fm), fmt.Sprintf("the Match pattern of %s.%s", mm.Name, fm.Name))
		}
	}
	if v.Min == nil && v.Max == nil {
		return
	}
	if fm.MapKey != "" || !numeric(fm.Kind) {
		c.add(at, "range applies to numbers and lists of numbers")
		return
	}
	for _, b := range []*float64{v.Min, v.Max} {
		switch {
		case b == nil:
		case math.IsNaN(*b):
			c.add(at, "range bound NaN is not a number")
		case math.IsInf(*b, 0):
			c.add(at, "range bound %v is not a finite number", *b)
		case fm.Kind == KindFloat32 && math.Abs(*b) > math.MaxFloat32:
			// The generated comparison would not compile.
			c.add(at, "range bound %v is not a float32", *b)
		case fm.Kind != KindFloat32 && fm.Kind != KindFloat64 && (*b != math.Trunc(*b) || !fitsInt(fm.Kind, *b)):
			c.add(at, "range bound %v is not a %s", *b, fm.Kind)
		}
	}
	if v.Min != nil && v.Max != nil && *v.Min > *v.Max {
		c.add(at, "bad range [%v, %v]: the minimum is above the maximum", *v.Min, *v.Max)
	}
}

// fitsInt reports whether f lies in the range of integer kind k (int64's
// for any other kind). The greatest int64 and uint64 round up to 2^63 and
// 2^64 as float64s: intBound makes such a bound the kind's greatest value
// again.
func fitsInt(k Kind, f float64) bool {
	lo, hi, ok := kindRange(k)
	if !ok {
		lo, hi = math.MinInt64, math.MaxInt64
	}
	return f >= lo && f <= hi
}

// markCopies sets copies on every message that holds a string or bytes,
// directly or through a nested message: their Unmarshal copies the input
// once and aliases into the copy.
func (c *checker) markCopies() {
	c.propagate(func(mm *msgModel) *bool { return &mm.copies }, func(f *fieldModel) bool {
		return f.Kind == KindString || f.Kind == KindBytes || f.MapKey == KindString
	})
}

// markValidates sets validates on every message whose Validate checks
// something, directly or through nested messages.
func (c *checker) markValidates() {
	c.propagate(func(mm *msgModel) *bool { return &mm.validates }, func(f *fieldModel) bool {
		return f.Validate != (Validators{})
	})
}

// propagate sets the flag of every message that has a field for which own
// holds, or a field of a message whose flag is set.
func (c *checker) propagate(flag func(*msgModel) *bool, own func(*fieldModel) bool) {
	for changed := true; changed; {
		changed = false
		for _, mm := range c.m.msgs {
			if *flag(mm) {
				continue
			}
			for _, f := range mm.fields {
				if own(f) || (f.msg != nil && *flag(f.msg)) {
					*flag(mm), changed = true, true
					break
				}
			}
		}
	}
}

// serviceFile is the generated file of a service: "Users" and
// "UsersService" both give "users_service.yrpc.go".
func serviceFile(name string) string {
	return strings.TrimSuffix(names.Snake(name), "_service") + "_service.yrpc.go"
}

package gen

import (
	"cmp"
	"errors"
	"fmt"
	"go/token"
	"slices"
	"strings"
)

// model is the spec resolved for emission: references followed, names
// computed and checked, everything sorted. Building it is where the
// generator finds the problems that the loader cannot know about.
type model struct {
	pkg      string // protobuf package: the method-ID namespace
	msgs     []*msgModel
	byName   map[string]*msgModel
	enums    []*enumModel
	services []*svcModel
	ids      map[uint32]string // method ID -> full method name
	errs     []error
}

type msgModel struct {
	*Message
	full      string        // "users.User", used in errors
	fields    []*fieldModel // declaration order
	byNumber  []*fieldModel // wire order
	copies    bool          // Unmarshal keeps a private copy of its input
	validates bool          // Validate checks something
}

type fieldModel struct {
	*Field
	goName string
	msg    *msgModel  // element/value message for KindMessage
	enum   *enumModel // element/value enum for KindEnum
}

type enumModel struct {
	*Enum
	consts []string // Go constant name per value
}

// fail records a problem; pos may be "".
func (m *model) fail(pos, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if pos != "" {
		msg = pos + ": " + msg
	}
	m.errs = append(m.errs, errors.New("gen: "+msg))
}

// reservedMethods are the method names of generated messages, which a field
// name must not take.
var reservedMethods = []string{"Size", "MarshalAppend", "Unmarshal", "Validate"}

func newModel(spec *Spec, cfg Config) (*model, error) {
	m := &model{pkg: spec.Package, byName: map[string]*msgModel{}, ids: map[uint32]string{}}
	if cfg.Package == "" {
		return nil, errors.New("gen: Config.Package is required")
	}
	if !token.IsIdentifier(cfg.Package) {
		return nil, fmt.Errorf("gen: package name %q is not a Go identifier", cfg.Package)
	}
	if m.pkg == "" {
		m.pkg = cfg.Package
	}
	if spec.Version != 0 && spec.Version != SpecVersion {
		return nil, fmt.Errorf("gen: spec version %d, this generator reads version %d", spec.Version, SpecVersion)
	}
	names := map[string]string{} // package-level Go identifier -> what declared it
	declare := func(pos, name, what string) {
		if !token.IsIdentifier(name) || !token.IsExported(name) {
			m.fail(pos, "%s: %q is not an exported Go identifier", what, name)
			return
		}
		if prev, ok := names[name]; ok {
			m.fail(pos, "%s: Go name %q clashes with %s", what, name, prev)
			return
		}
		names[name] = what
	}
	for _, msg := range spec.Messages {
		if msg == nil {
			m.fail("", "nil message in spec")
			continue
		}
		declare(msg.Pos, msg.Name, "message "+msg.Name)
		mm := &msgModel{Message: msg, full: m.pkg + "." + msg.Name}
		m.byName[msg.Name] = mm
		m.msgs = append(m.msgs, mm)
	}
	enums := map[string]*enumModel{}
	for _, mm := range m.msgs {
		m.resolveFields(mm, enums, declare)
	}
	for _, e := range enums {
		m.enums = append(m.enums, e)
	}
	slices.SortFunc(m.msgs, func(a, b *msgModel) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(m.enums, func(a, b *enumModel) int { return cmp.Compare(a.Name, b.Name) })
	m.markCopies()
	m.markValidates()
	for _, mm := range m.msgs {
		for _, fm := range mm.fields {
			m.checkValidators(mm, fm)
		}
	}
	for _, svc := range spec.Services {
		if svc == nil {
			m.fail("", "nil service in spec")
			continue
		}
		if s := m.resolveService(svc, declare); s != nil {
			m.services = append(m.services, s)
		}
	}
	slices.SortFunc(m.services, func(a, b *svcModel) int { return cmp.Compare(a.Name, b.Name) })
	if len(m.errs) > 0 {
		return nil, errors.Join(m.errs...)
	}
	return m, nil
}

func (m *model) resolveFields(mm *msgModel, enums map[string]*enumModel, declare func(pos, name, what string)) {
	where := "message " + mm.Name
	goNames := map[string]string{}
	numbers := map[int32]string{}
	for _, f := range mm.Fields {
		if f == nil {
			m.fail(mm.Pos, "%s: nil field", where)
			continue
		}
		fm := &fieldModel{Field: f, goName: GoName(f.Name)}
		call := fmt.Sprintf("%s: field %q", where, f.Name)
		if !token.IsIdentifier(fm.goName) {
			m.fail(f.Pos, "%s: Go name %q is not an identifier", call, fm.goName)
		}
		if slices.Contains(reservedMethods, fm.goName) {
			m.fail(f.Pos, "%s: Go name %q clashes with the generated method", call, fm.goName)
		}
		if prev, ok := goNames[fm.goName]; ok {
			m.fail(f.Pos, "%s: Go name %q clashes with field %q", call, fm.goName, prev)
		}
		goNames[fm.goName] = f.Name
		if f.Number < 1 || f.Number > 1<<29-1 || (f.Number >= 19000 && f.Number <= 19999) {
			m.fail(f.Pos, "%s: invalid wire number %d", call, f.Number)
		}
		if prev, ok := numbers[f.Number]; ok {
			m.fail(f.Pos, "%s: wire number %d already used by field %q", call, f.Number, prev)
		}
		numbers[f.Number] = f.Name
		if slices.Contains(mm.Reserved, f.Number) {
			m.fail(f.Pos, "%s: wire number %d is reserved", call, f.Number)
		}
		m.checkKind(f, call)
		switch f.Kind {
		case KindMessage:
			fm.msg = m.byName[f.Message]
			if fm.msg == nil {
				m.fail(f.Pos, "%s: unknown message %q", call, f.Message)
			}
		case KindEnum:
			fm.enum = m.resolveEnum(f, call, enums, declare)
		}
		mm.fields = append(mm.fields, fm)
	}
	mm.byNumber = slices.Clone(mm.fields)
	slices.SortFunc(mm.byNumber, func(a, b *fieldModel) int { return cmp.Compare(a.Number, b.Number) })
}

func (m *model) checkKind(f *Field, call string) {
	if _, ok := kinds[f.Kind]; !ok {
		m.fail(f.Pos, "%s: unknown kind %q", call, f.Kind)
		return
	}
	if f.MapKey != "" {
		switch f.MapKey {
		case KindBool, KindInt32, KindInt64, KindUint32, KindUint64, KindSint32, KindSint64,
			KindFixed32, KindFixed64, KindSfixed32, KindSfixed64, KindString:
		default:
			m.fail(f.Pos, "%s: map key kind %q is not an integer, bool or string", call, f.MapKey)
		}
		if f.List {
			m.fail(f.Pos, "%s: a field cannot be both a list and a map", call)
		}
	}
	if f.Optional && (f.List || f.MapKey != "") {
		m.fail(f.Pos, "%s: a list or map cannot be Optional", call)
	}
	if f.Unpacked && (!f.List || !kinds[f.Kind].packable()) {
		m.fail(f.Pos, "%s: Unpacked applies to lists of numbers, bools and enums only", call)
	}
}

func (m *model) resolveEnum(f *Field, call string, enums map[string]*enumModel, declare func(pos, name, what string)) *enumModel {
	e := f.Enum
	if e == nil {
		m.fail(f.Pos, "%s: enum field without an enum type", call)
		return nil
	}
	if prev, ok := enums[e.Name]; ok {
		if !slices.Equal(prev.Values, e.Values) {
			m.fail(f.Pos, "%s: enum %q declared again with other values", call, e.Name)
		}
		return prev
	}
	em := &enumModel{Enum: e}
	enums[e.Name] = em
	what := "enum " + e.Name
	declare(f.Pos, e.Name, what)
	declare(f.Pos, "Parse"+e.Name, what)
	if len(e.Values) == 0 || e.Values[0].Number != 0 {
		m.fail(f.Pos, "%s: enum %q: the first value must have number 0", call, e.Name)
	}
	seen := map[int32]string{}
	for _, v := range e.Values {
		c := e.Name + GoName(v.Name)
		declare(f.Pos, c, what+" value "+v.Name)
		em.consts = append(em.consts, c)
		if prev, ok := seen[v.Number]; ok {
			m.fail(f.Pos, "%s: enum %q: values %q and %q share number %d", call, e.Name, prev, v.Name, v.Number)
		}
		seen[v.Number] = v.Name
	}
	return em
}

// markCopies sets copies on every message that holds a string or bytes,
// directly or through a nested message: their Unmarshal copies the input
// once and aliases into the copy.
func (m *model) markCopies() {
	for changed := true; changed; {
		changed = false
		for _, mm := range m.msgs {
			if mm.copies {
				continue
			}
			for _, f := range mm.fields {
				if f.Kind == KindString || f.Kind == KindBytes || f.MapKey == KindString ||
					(f.msg != nil && f.msg.copies) {
					mm.copies, changed = true, true
					break
				}
			}
		}
	}
}

// snake turns a Go name into a file-name stem: "UserRole" -> "user_role".
func snake(name string) string {
	var b strings.Builder
	for i, r := range name {
		if 'A' <= r && r <= 'Z' {
			if i > 0 && !('A' <= name[i-1] && name[i-1] <= 'Z') {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

package gen

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/dave/jennifer/jen"
)

// mockLit collects the statements that declare the values Optional fields
// of a mock response point to, while the response's composite literal is
// built.
type mockLit struct {
	pre []jen.Code
}

// genMockValue emits the function that builds the mock response of mm.
func (m *model) genMockValue(f *jen.File, s *svcModel, mm *methodModel) {
	name := s.lower + mm.Name + "Mock"
	f.Commentf("%s returns the mock response of %s from the schema.", name, mm.full)
	var l mockLit
	expr := l.message(mm.resp, mm.mock, false)
	body := append(slices.Clone(l.pre), jen.Return(expr))
	f.Func().Id(name).Params().Qual(rtPkg, "Message").Block(body...)
	f.Line()
}

// message returns &Msg{...}, or {...} when elide is set: a list element or
// map value, whose type the composite literal already names.
func (l *mockLit) message(msg *msgModel, v *mockValue, elide bool) jen.Code {
	var d literal // in declaration order
	for _, mf := range v.fields {
		d.add(mf.field.goName, l.field(mf.field, mf.value))
	}
	if elide {
		return d.values()
	}
	return jen.Op("&").Id(msg.Name).Add(d.values())
}

func (l *mockLit) field(fm *fieldModel, v *mockValue) jen.Code {
	switch {
	case fm.MapKey != "":
		d := jen.Dict{}
		for _, e := range v.entries {
			d[scalarLit(value{kind: fm.MapKey}, e.key)] = l.elem(fm.value(), e.value, true)
		}
		return fm.goType().Values(d)
	case fm.List:
		var elems []jen.Code
		for _, x := range v.list {
			elems = append(elems, l.elem(fm.value(), x, true))
		}
		return fm.goType().Values(elems...)
	}
	e := l.elem(fm.value(), v, false)
	if !fm.pointer() {
		return e
	}
	name := fmt.Sprintf("v%d", len(l.pre))
	f, isFloat := v.scalar.(float64)
	switch {
	case fm.Kind == KindEnum, fm.Kind == KindString, fm.Kind == KindBool, fm.Kind == KindTime, fm.Kind == KindDuration,
		isFloat && !floatConst(f): // math.NaN() and float32(math.NaN()) are typed already
		l.pre = append(l.pre, jen.Id(name).Op(":=").Add(e))
	default:
		l.pre = append(l.pre, jen.Id(name).Op(":=").Add(fm.elemType()).Call(e))
	}
	return jen.Op("&").Id(name)
}

func (l *mockLit) elem(v value, x *mockValue, elide bool) jen.Code {
	if v.kind == KindMessage {
		return l.message(v.msg, x, elide)
	}
	return scalarLit(v, x.scalar)
}

// scalarLit renders a resolved scalar of a mock as a Go literal.
func scalarLit(v value, s any) jen.Code {
	switch s := s.(type) {
	case bool:
		return jen.Lit(s)
	case string:
		return jen.Lit(s)
	case []byte:
		return jen.Index().Byte().Call(jen.Lit(string(s)))
	case time.Time:
		return jen.Qual(timePkg, "Unix").Call(jen.Id(strconv.FormatInt(s.Unix(), 10)), jen.Lit(s.Nanosecond())).Dot("UTC").Call()
	case time.Duration:
		return durationLit(s)
	case float64:
		if floatConst(s) {
			return jen.Lit(s)
		}
		var e jen.Code // NaN, an infinity or -0.0, which Go constants cannot be
		switch {
		case math.IsNaN(s):
			e = jen.Qual(mathPkg, "NaN").Call()
		case math.IsInf(s, 0):
			e = jen.Qual(mathPkg, "Inf").Call(jen.Lit(int(math.Copysign(1, s))))
		default:
			e = jen.Qual(mathPkg, "Copysign").Call(jen.Lit(0), jen.Lit(-1))
		}
		if v.kind == KindFloat32 {
			return jen.Float32().Call(e)
		}
		return e
	case uint64:
		return jen.Id(strconv.FormatUint(s, 10))
	case int64:
		return jen.Id(strconv.FormatInt(s, 10))
	case enumValue:
		if s.index >= 0 {
			return jen.Id(v.enum.consts[s.index])
		}
		return jen.Id(v.enum.Name).Call(jen.Lit(int(s.number)))
	}
	panic(fmt.Sprintf("gen: mock scalar of type %T", s))
}

// floatConst reports whether a Go constant can hold f: it is not NaN, an
// infinity or -0.0.
func floatConst(f float64) bool {
	return !math.IsNaN(f) && !math.IsInf(f, 0) && (f != 0 || !math.Signbit(f))
}

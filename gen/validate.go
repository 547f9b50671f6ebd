package gen

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dave/jennifer/jen"
)

// regexpVar is the package-level variable of a Match validator.
func regexpVar(mm *msgModel, fm *fieldModel) string { return "re" + mm.Name + fm.goName }

func boundLit(k Kind, f float64) jen.Code {
	if k == KindFloat32 || k == KindFloat64 {
		return jen.Lit(f)
	}
	return jen.Id(intBound(k, f))
}

// kindRange returns the least and the greatest value of integer kind k
// (rounded to float64, as schema bounds are), and false for any other
// kind.
func kindRange(k Kind) (lo, hi float64, ok bool) {
	switch k {
	case KindInt32, KindSint32, KindSfixed32:
		return math.MinInt32, math.MaxInt32, true
	case KindInt64, KindSint64, KindSfixed64:
		return math.MinInt64, math.MaxInt64, true
	case KindUint32, KindFixed32:
		return 0, math.MaxUint32, true
	case KindUint64, KindFixed64:
		return 0, math.MaxUint64, true
	}
	return 0, 0, false
}

// FormatBound spells a range bound (Validators.Min or Max) of a field of
// kind k as the generated Validate's errors and yrpcc proto's comments
// show it: an integer kind's bound in digits (9007199254740992, not
// 9.007199254740992e+15; a bound rounded up to 2^63 or 2^64 as the kind's
// largest value), a float's in Go's shortest form.
func FormatBound(k Kind, f float64) string {
	if k == KindFloat32 || k == KindFloat64 {
		return fmt.Sprint(f)
	}
	return intBound(k, f)
}

// intBound is the literal of bound f of integer kind k. A float64 cannot
// hold math.MaxInt64 or math.MaxUint64: a schema's bound of either rounded
// up to 2^63 or 2^64 (check accepts no more), which stands for the kind's
// largest value.
func intBound(k Kind, f float64) string {
	unsigned64 := k == KindUint64 || k == KindFixed64
	switch {
	case f < 0:
		return strconv.FormatInt(int64(f), 10)
	case unsigned64 && f >= 1<<64:
		return strconv.FormatUint(math.MaxUint64, 10)
	case !unsigned64 && f >= 1<<63:
		return strconv.FormatInt(math.MaxInt64, 10)
	}
	return strconv.FormatUint(uint64(f), 10)
}

// genRegexps declares the compiled Match patterns of mm. They are
// immutable once compiled; the generator has compiled each pattern already.
func (m *model) genRegexps(f *jen.File, mm *msgModel) {
	for _, fm := range mm.fields {
		if fm.Validate.Match != "" {
			f.Var().Id(regexpVar(mm, fm)).Op("=").Qual("regexp", "MustCompile").Call(jen.Lit(fm.Validate.Match))
		}
	}
}

func (m *model) genValidate(f *jen.File, mm *msgModel) {
	f.Comment("Validate checks m against the validators of its schema, and the")
	f.Comment("messages it holds against theirs.")
	f.Func().Add(recv(mm)).Id("Validate").Params().Error().BlockFunc(func(g *jen.Group) {
		if !mm.validates {
			g.Return(jen.Nil())
			return
		}
		g.If(jen.Id("m").Op("==").Nil()).Block(jen.Return(jen.Nil()))
		for _, fm := range mm.fields {
			m.validateField(g, mm, fm)
		}
		g.Return(jen.Nil())
	})
	f.Line()
}

func (m *model) validateField(g *jen.Group, mm *msgModel, fm *fieldModel) {
	v := fm.Validate
	x := fieldRef(fm)
	invalid := func(reason string) jen.Code {
		return jen.Return(jen.Qual(codecPkg, "Invalid").Call(jen.Lit(mm.full), jen.Lit(fm.Name), jen.Lit(reason)))
	}
	collection := fm.List || fm.MapKey != ""
	// Presence.
	if v.NotEmpty {
		var empty jen.Code
		switch {
		case collection || fm.Kind == KindString || fm.Kind == KindBytes:
			empty = jen.Len(x.Clone()).Op("==").Lit(0)
		case fm.Optional || fm.Kind == KindMessage:
			empty = x.Clone().Op("==").Nil()
		case fm.Kind == KindTime:
			empty = x.Clone().Dot("IsZero").Call()
		case fm.Kind == KindBool:
			empty = jen.Op("!").Add(x.Clone())
		default:
			empty = x.Clone().Op("==").Lit(0)
		}
		g.If(empty).Block(invalid("must not be empty"))
	}
	// Length of a collection or of bytes; strings count runes below.
	if (collection || fm.Kind == KindBytes) && (v.MinLen > 0 || v.MaxLen > 0) {
		if v.MinLen > 0 {
			g.If(jen.Len(x.Clone()).Op("<").Lit(v.MinLen)).Block(invalid(fmt.Sprintf("must have at least %d %s", v.MinLen, unit(fm))))
		}
		if v.MaxLen > 0 {
			g.If(jen.Len(x.Clone()).Op(">").Lit(v.MaxLen)).Block(invalid(fmt.Sprintf("must have at most %d %s", v.MaxLen, unit(fm))))
		}
	}
	// Checks of each value: the field itself, or each list element.
	var checks []jen.Code
	val := jen.Id("v")
	switch {
	case fm.pointer():
		val = jen.Op("*").Add(fieldRef(fm))
	case !collection:
		val = fieldRef(fm)
	}
	if fm.Kind == KindString && !collection && (v.MinLen > 0 || v.MaxLen > 0) {
		count := jen.Qual("unicode/utf8", "RuneCountInString").Call(val.Clone())
		if v.MinLen > 0 {
			checks = append(checks, jen.If(count.Clone().Op("<").Lit(v.MinLen)).Block(invalid(fmt.Sprintf("must have at least %d characters", v.MinLen))))
		}
		if v.MaxLen > 0 {
			checks = append(checks, jen.If(count.Clone().Op(">").Lit(v.MaxLen)).Block(invalid(fmt.Sprintf("must have at most %d characters", v.MaxLen))))
		}
	}
	if v.Match != "" {
		checks = append(checks, jen.If(jen.Op("!").Id(regexpVar(mm, fm)).Dot("MatchString").Call(val.Clone())).Block(
			invalid("must match "+strconv.Quote(v.Match))))
	}
	// A bound that every value of the kind meets (0 for an unsigned
	// kind, math.MaxInt64 for an int64) checks nothing: no comparison
	// that is always false is generated for it.
	lo, hi, integer := kindRange(fm.Kind)
	if v.Min != nil && !(integer && *v.Min <= lo) {
		checks = append(checks, jen.If(val.Clone().Op("<").Add(boundLit(fm.Kind, *v.Min))).Block(invalid("must be at least "+FormatBound(fm.Kind, *v.Min))))
	}
	if v.Max != nil && !(integer && *v.Max >= hi) {
		checks = append(checks, jen.If(val.Clone().Op(">").Add(boundLit(fm.Kind, *v.Max))).Block(invalid("must be at most "+FormatBound(fm.Kind, *v.Max))))
	}
	if fm.msg != nil && fm.msg.validates {
		checks = append(checks, jen.If(jen.Err().Op(":=").Add(val.Clone()).Dot("Validate").Call(), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())))
	}
	if len(checks) == 0 {
		return
	}
	switch {
	case fm.MapKey != "":
		g.For(jen.List(jen.Id("_"), jen.Id("v")).Op(":=").Range().Add(x.Clone())).Block(checks...)
	case fm.List:
		g.For(jen.List(jen.Id("_"), jen.Id("v")).Op(":=").Range().Add(x.Clone())).Block(checks...)
	case fm.pointer():
		g.If(x.Clone().Op("!=").Nil()).Block(checks...)
	default:
		for _, c := range checks {
			g.Add(c)
		}
	}
}

func unit(fm *fieldModel) string {
	switch {
	case fm.MapKey != "":
		return "entries"
	case fm.List:
		return "elements"
	}
	return "bytes"
}

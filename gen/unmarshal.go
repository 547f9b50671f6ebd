package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

func (m *model) genUnmarshal(f *jen.File, mm *msgModel) {
	f.Comment("Unmarshal resets m and decodes the protobuf encoding in b into it.")
	f.Comment("Unknown fields are skipped.")
	if mm.copies {
		f.Comment("Strings and byte slices of the result share one private copy of b.")
	}
	f.Func().Add(recv(mm)).Id("Unmarshal").Params(jen.Id("b").Index().Byte()).Error().BlockFunc(func(g *jen.Group) {
		g.Op("*").Id("m").Op("=").Id(mm.Name).Values()
		if mm.copies {
			g.If(jen.Len(jen.Id("b")).Op("==").Lit(0)).Block(jen.Return(jen.Nil()))
			g.Id("own").Op(":=").Make(jen.Index().Byte(), jen.Len(jen.Id("b")))
			g.Copy(jen.Id("own"), jen.Id("b"))
			g.Return(jen.Id("m").Dot("unmarshal").Call(jen.Id("own"), jen.Lit(0)))
		} else {
			g.Return(jen.Id("m").Dot("unmarshal").Call(jen.Id("b"), jen.Lit(0)))
		}
	})
	f.Line()

	f.Comment("UnmarshalOwned is Unmarshal for a b that m may keep: strings and byte")
	f.Comment("slices of the result may share b, so b must not change afterwards.")
	f.Func().Add(recv(mm)).Id("UnmarshalOwned").Params(jen.Id("b").Index().Byte()).Error().Block(
		jen.Op("*").Id("m").Op("=").Id(mm.Name).Values(),
		jen.Return(jen.Id("m").Dot("unmarshal").Call(jen.Id("b"), jen.Lit(0))),
	)
	f.Line()

	top := decoder{buf: "b", idx: "i", msg: mm.full}
	f.Comment("unmarshal decodes b into m, merging with what m holds; depth counts")
	f.Comment("the enclosing messages. b is never modified and may be aliased.")
	f.Func().Add(recv(mm)).Id("unmarshal").Params(jen.Id("b").Index().Byte(), jen.Id("depth").Int()).Error().BlockFunc(func(g *jen.Group) {
		g.If(jen.Id("depth").Op(">").Qual(codecPkg, "MaxDepth")).Block(top.fail(jen.Qual(codecPkg, "CodeDepth")))
		g.For(jen.Id("i").Op(":=").Lit(0), jen.Id("i").Op("<").Len(jen.Id("b")), jen.Empty()).BlockFunc(func(g *jen.Group) {
			top.consumeTag(g)
			g.Switch(jen.Id("tag")).BlockFunc(func(g *jen.Group) {
				for _, fm := range mm.byNumber {
					d := top
					d.field = fm.Name
					m.unmarshalField(g, d, fm)
				}
				g.Default().Block(
					jen.Id("n").Op(":=").Qual(codecPkg, "Skip").Call(jen.Id("b").Index(jen.Id("i").Op(":")), jen.Id("tag")),
					jen.If(jen.Id("n").Op("<").Lit(0)).Block(top.fail(jen.Id("n"))),
					jen.Id("i").Op("+=").Id("n"),
				)
			})
		})
		g.Return(jen.Nil())
	})
	f.Line()
}

// caseTag returns the switch case of fm's tag with wire type w; body starts
// with a comment naming the field.
func caseTag(g *jen.Group, fm *fieldModel, w wireType, what string, body []jen.Code) {
	comment := jen.Comment(fmt.Sprintf("%s = %d, %s", fm.Name, fm.Number, what))
	g.Case(tagLit(tagValue(fm.Number, w))).Block(append([]jen.Code{comment}, body...)...)
}

// kindName names the kind of one value of fm in comments: "int32",
// "message Node", "enum Color".
func kindName(fm *fieldModel) string {
	switch fm.Kind {
	case KindMessage:
		return "message " + fm.Message
	case KindEnum:
		return "enum " + fm.Enum.Name
	}
	return string(fm.Kind)
}

// unmarshalField emits the switch cases that decode fm.
func (m *model) unmarshalField(g *jen.Group, d decoder, fm *fieldModel) {
	v := fm.value()
	w := v.info().wire
	x := fieldRef(fm)
	ref := func() *jen.Statement { return fieldRef(fm) }
	switch {
	case fm.MapKey != "":
		caseTag(g, fm, wireBytes, "map entry", m.unmarshalMapEntry(d, fm))
	case fm.List && v.info().packable():
		caseTag(g, fm, w, "one "+string(fm.Kind), d.decode(v, appendTo(ref)))
		caseTag(g, fm, wireBytes, "packed "+string(fm.Kind)+"s", m.unmarshalPacked(d, fm))
	case fm.List:
		caseTag(g, fm, w, "one "+kindName(fm), d.decode(v, appendTo(ref)))
	case fm.Kind == KindMessage:
		// A message that occurs twice is merged, as protobuf does.
		s := d.span()
		s = append(s,
			jen.If(x.Clone().Op("==").Nil()).Block(x.Clone().Op("=").New(jen.Id(fm.Message))),
			jen.If(jen.Err().Op(":=").Add(x.Clone()).Dot("unmarshal").Call(
				jen.Id(d.buf).Index(jen.Id(d.idx).Op(":").Add(d.spanEnd())), jen.Id("depth").Op("+").Lit(1)),
				jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
			jen.Id(d.idx).Op("+=").Int().Call(jen.Id("l")))
		caseTag(g, fm, w, kindName(fm), s)
	case fm.pointer():
		caseTag(g, fm, w, "optional "+kindName(fm), d.decode(v, func(val jen.Code) []jen.Code {
			return []jen.Code{jen.Id("v").Op(":=").Add(val), x.Clone().Op("=").Op("&").Id("v")}
		}))
	default:
		caseTag(g, fm, w, kindName(fm), d.decode(v, assignTo(ref)))
	}
}

// unmarshalPacked decodes a packed run of scalars. The slice grows at most
// once: its new capacity is the element count, which the run's length
// bounds.
func (m *model) unmarshalPacked(d decoder, fm *fieldModel) []jen.Code {
	v := fm.value()
	x := fieldRef(fm)
	s := d.span()
	s = append(s,
		jen.Id("data").Op(":=").Id(d.buf).Index(jen.Id(d.idx).Op(":").Add(d.spanEnd())),
		jen.Id(d.idx).Op("+=").Int().Call(jen.Id("l")))
	var count jen.Code
	switch v.info().wire {
	case wireFixed32, wireFixed64:
		width := 4
		if v.info().wire == wireFixed64 {
			width = 8
		}
		s = append(s, jen.If(jen.Len(jen.Id("data")).Op("%").Lit(width).Op("!=").Lit(0)).Block(
			d.fail(jen.Qual(codecPkg, "CodeLength"))))
		count = jen.Len(jen.Id("data")).Op("/").Lit(width)
	default:
		count = jen.Qual(codecPkg, "CountVarints").Call(jen.Id("data"))
	}
	inner := decoder{buf: "data", idx: "j", msg: d.msg, field: d.field}
	s = append(s,
		x.Clone().Op("=").Qual("slices", "Grow").Call(x.Clone(), count),
		jen.For(jen.Id("j").Op(":=").Lit(0), jen.Id("j").Op("<").Len(jen.Id("data")), jen.Empty()).Block(
			inner.decode(v, appendTo(func() *jen.Statement { return fieldRef(fm) }))...))
	return s
}

// unmarshalMapEntry decodes one map entry: a message with the key as field
// 1 and the value as field 2, either of which may be absent (zero).
func (m *model) unmarshalMapEntry(d decoder, fm *fieldModel) []jen.Code {
	key := value{kind: fm.MapKey}
	v := fm.value()
	x := fieldRef(fm)
	s := d.span()
	s = append(s,
		jen.Id("data").Op(":=").Id(d.buf).Index(jen.Id(d.idx).Op(":").Add(d.spanEnd())),
		jen.Id(d.idx).Op("+=").Int().Call(jen.Id("l")),
		jen.Var().Id("k").Add(kinds[fm.MapKey].goType()),
		jen.Var().Id("v").Add(fm.elemType()))
	inner := decoder{buf: "data", idx: "j", msg: d.msg, field: d.field}
	loop := inner.consume("t", "ConsumeVarint")
	loop = append(loop, jen.Switch(jen.Id("t")).Block(
		jen.Case(tagLit(tagValue(1, key.info().wire))).Block(inner.decode(key, assignTo(func() *jen.Statement { return jen.Id("k") }))...),
		jen.Case(tagLit(tagValue(2, v.info().wire))).Block(inner.decode(v, assignTo(func() *jen.Statement { return jen.Id("v") }))...),
		jen.Default().Block(
			jen.Id("n").Op("=").Qual(codecPkg, "Skip").Call(jen.Id("data").Index(jen.Id("j").Op(":")), jen.Id("t")),
			jen.If(jen.Id("n").Op("<").Lit(0)).Block(inner.fail(jen.Id("n"))),
			jen.Id("j").Op("+=").Id("n"),
		),
	))
	s = append(s, jen.For(jen.Id("j").Op(":=").Lit(0), jen.Id("j").Op("<").Len(jen.Id("data")), jen.Empty()).Block(loop...))
	if fm.Kind == KindMessage {
		s = append(s, jen.If(jen.Id("v").Op("==").Nil()).Block(jen.Id("v").Op("=").New(jen.Id(fm.Message))))
	}
	s = append(s,
		jen.If(x.Clone().Op("==").Nil()).Block(x.Clone().Op("=").Make(fm.goType())),
		x.Clone().Index(jen.Id("k")).Op("=").Id("v"))
	return s
}

package gen

import (
	"strings"

	"github.com/dave/jennifer/jen"
)

// docComment turns a schema comment into Go doc-comment text that starts with
// name, as Go style asks.
func docComment(name, text, fallback string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return name + " " + fallback
	}
	if strings.HasPrefix(text, name+" ") {
		return text
	}
	return name + ": " + text
}

// commenter is a *jen.File or a *jen.Group.
type commenter interface {
	Comment(string) *jen.Statement
}

// comment writes text as line comments, one per line: jennifer would
// render a multi-line comment as a block comment.
func comment(c commenter, text string) {
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		c.Comment(strings.TrimRight(line, " \t"))
	}
}

// genMessage emits the struct of mm and its codec and Validate methods.
func (m *model) genMessage(f *jen.File, mm *msgModel) {
	comment(f, docComment(mm.Name, mm.Comment, "is a message of "+m.pkg+"."))
	f.Type().Id(mm.Name).StructFunc(func(g *jen.Group) {
		for _, fm := range mm.fields {
			if c := strings.TrimSpace(fm.Comment); c != "" {
				comment(g, c)
			}
			if fm.Deprecated {
				if fm.Comment != "" {
					g.Comment("")
				}
				g.Comment("Deprecated: do not use.")
			}
			g.Id(fm.goName).Add(fm.goType())
		}
	})
	f.Line()
	m.genSize(f, mm)
	m.genMarshal(f, mm)
	m.genUnmarshal(f, mm)
	m.genValidate(f, mm)
}

func recv(mm *msgModel) *jen.Statement { return jen.Params(jen.Id("m").Op("*").Id(mm.Name)) }

func fieldRef(fm *fieldModel) *jen.Statement { return jen.Id("m").Dot(fm.goName) }

// present is the condition under which a singular field is written: proto3
// omits zero values unless the field has presence.
func present(fm *fieldModel) jen.Code {
	x := fieldRef(fm)
	if fm.Optional || fm.Kind == KindMessage {
		return x.Op("!=").Nil()
	}
	switch fm.Kind {
	case KindBool:
		return x
	case KindString, KindBytes:
		return jen.Len(x).Op(">").Lit(0)
	case KindTime:
		return jen.Op("!").Add(x).Dot("IsZero").Call()
	case KindFloat32, KindFloat64:
		// -0.0 is written, as google.golang.org/protobuf does.
		return kinds[fm.Kind].enc(x).(*jen.Statement).Op("!=").Lit(0)
	}
	return x.Op("!=").Lit(0)
}

// singular is the value of a singular field (dereferenced when a pointer).
func singular(fm *fieldModel) *jen.Statement {
	if fm.pointer() {
		return jen.Op("*").Add(fieldRef(fm))
	}
	return fieldRef(fm)
}

// packed reports whether a list is written in packed form.
func packed(fm *fieldModel) bool {
	return fm.List && kinds[fm.Kind].packable() && !fm.Unpacked
}

// packedSize returns statements that set l to the packed payload size.
func packedSize(fm *fieldModel) []jen.Code {
	v := fm.value()
	if w := v.width(); w > 0 {
		return []jen.Code{jen.Id("l").Op(":=").Len(fieldRef(fm)).Op("*").Lit(w)}
	}
	return []jen.Code{
		jen.Id("l").Op(":=").Lit(0),
		jen.For(jen.List(jen.Id("_"), jen.Id("v")).Op(":=").Range().Add(fieldRef(fm))).Block(
			jen.Id("l").Op("+=").Add(v.size(jen.Id("v")))),
	}
}

// mapEntrySize is the size of one map entry's body for key k and value v.
func mapEntrySize(fm *fieldModel) jen.Code {
	return jen.Lit(2).Op("+").Add(value{kind: fm.MapKey}.size(jen.Id("k"))).Op("+").Add(fm.value().size(jen.Id("v")))
}

func (m *model) genSize(f *jen.File, mm *msgModel) {
	f.Comment("Size returns the encoded size of m in bytes.")
	f.Func().Add(recv(mm)).Id("Size").Params().Params(jen.Id("n").Int()).BlockFunc(func(g *jen.Group) {
		g.If(jen.Id("m").Op("==").Nil()).Block(jen.Return(jen.Lit(0)))
		for _, fm := range mm.byNumber {
			tag := len(tagBytes(fm.Number, 0))
			v := fm.value()
			x := fieldRef(fm)
			switch {
			case fm.MapKey != "" && (value{kind: fm.MapKey}).width() > 0 && v.width() > 0:
				entry := 2 + value{kind: fm.MapKey}.width() + v.width() // < 128: a 1-byte length
				g.Id("n").Op("+=").Len(x).Op("*").Lit(tag + 1 + entry)
			case fm.MapKey != "":
				vars := jen.List(jen.Id("k"), jen.Id("v"))
				switch {
				case v.width() > 0:
					vars = jen.Id("k")
				case (value{kind: fm.MapKey}).width() > 0:
					vars = jen.List(jen.Id("_"), jen.Id("v"))
				}
				g.For(vars.Op(":=").Range().Add(x)).Block(
					jen.Id("n").Op("+=").Lit(tag).Op("+").Qual(codecPkg, "SizeBytes").Call(mapEntrySize(fm)))
			case packed(fm):
				g.If(jen.Len(x).Op(">").Lit(0)).Block(append(packedSize(fm),
					jen.Id("n").Op("+=").Lit(tag).Op("+").Qual(codecPkg, "SizeBytes").Call(jen.Id("l")))...)
			case fm.List && v.width() > 0:
				g.Id("n").Op("+=").Len(x).Op("*").Lit(tag + v.width())
			case fm.List:
				g.For(jen.List(jen.Id("_"), jen.Id("v")).Op(":=").Range().Add(x)).Block(
					jen.Id("n").Op("+=").Lit(tag).Op("+").Add(v.size(jen.Id("v"))))
			default:
				g.If(present(fm)).Block(jen.Id("n").Op("+=").Lit(tag).Op("+").Add(v.size(singular(fm))))
			}
		}
		g.Return(jen.Id("n"))
	})
	f.Line()
}

func appendTag(num int32, w wireType) jen.Code {
	return jen.Id("b").Op("=").Append(append([]jen.Code{jen.Id("b")}, tagBytes(num, w)...)...)
}

func (m *model) genMarshal(f *jen.File, mm *msgModel) {
	f.Comment("MarshalAppend appends the protobuf encoding of m to b. When b has no")
	f.Comment("spare capacity it grows b once, to fit; otherwise it appends in place")
	f.Comment("(a reused buffer with room costs no allocation and no Size pass).")
	f.Func().Add(recv(mm)).Id("MarshalAppend").Params(jen.Id("b").Index().Byte()).Index().Byte().Block(
		jen.If(jen.Cap(jen.Id("b")).Op("==").Len(jen.Id("b"))).Block(
			jen.Id("b").Op("=").Qual("slices", "Grow").Call(jen.Id("b"), jen.Id("m").Dot("Size").Call())),
		jen.Return(jen.Id("m").Dot("appendTo").Call(jen.Id("b"))),
	)
	f.Line()
	f.Comment("appendTo appends the encoding of m to b, which nested messages")
	f.Comment("share with their parent.")
	f.Func().Add(recv(mm)).Id("appendTo").Params(jen.Id("b").Index().Byte()).Index().Byte().BlockFunc(func(g *jen.Group) {
		g.If(jen.Id("m").Op("==").Nil()).Block(jen.Return(jen.Id("b")))
		for _, fm := range mm.byNumber {
			m.marshalField(g, fm)
		}
		g.Return(jen.Id("b"))
	})
	f.Line()
}

func (m *model) marshalField(g *jen.Group, fm *fieldModel) {
	v := fm.value()
	x := fieldRef(fm)
	w := v.info().wire
	switch {
	case fm.MapKey != "":
		key := value{kind: fm.MapKey}
		body := []jen.Code{
			appendTag(fm.Number, wireBytes),
			jen.Id("b").Op("=").Qual(codecPkg, "AppendVarint").Call(jen.Id("b"), jen.Uint64().Call(mapEntrySize(fm))),
			appendTag(1, key.info().wire),
		}
		body = append(body, key.appendTo(jen.Id("k"))...)
		body = append(body, appendTag(2, w))
		body = append(body, v.appendTo(jen.Id("v"))...)
		g.For(jen.List(jen.Id("k"), jen.Id("v")).Op(":=").Range().Add(x)).Block(body...)
	case packed(fm):
		body := []jen.Code{appendTag(fm.Number, wireBytes)}
		body = append(body, packedSize(fm)...)
		body = append(body,
			jen.Id("b").Op("=").Qual(codecPkg, "AppendVarint").Call(jen.Id("b"), jen.Uint64().Call(jen.Id("l"))),
			jen.For(jen.List(jen.Id("_"), jen.Id("v")).Op(":=").Range().Add(x)).Block(v.appendTo(jen.Id("v"))...))
		g.If(jen.Len(x).Op(">").Lit(0)).Block(body...)
	case fm.List:
		g.For(jen.List(jen.Id("_"), jen.Id("v")).Op(":=").Range().Add(x)).Block(
			append([]jen.Code{appendTag(fm.Number, w)}, v.appendTo(jen.Id("v"))...)...)
	case fm.Kind == KindBool && !fm.Optional:
		g.If(present(fm)).Block(jen.Id("b").Op("=").Append(append([]jen.Code{jen.Id("b")}, append(tagBytes(fm.Number, w), jen.Lit(1))...)...))
	default:
		g.If(present(fm)).Block(append([]jen.Code{appendTag(fm.Number, w)}, v.appendTo(singular(fm))...)...)
	}
}

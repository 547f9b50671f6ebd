package gen

import (
	"github.com/dave/jennifer/jen"
)

// genEnum emits a named int32 type with a constant per value, String and a
// Parse function.
func (m *model) genEnum(f *jen.File, e *enumModel) {
	f.Commentf("%s is an enum of %s. Values that this code does not know", e.Name, m.pkg)
	f.Comment("decode and encode unchanged; String prints them as numbers.")
	f.Type().Id(e.Name).Int32()
	f.Line()
	f.Commentf("Values of %s.", e.Name)
	f.Const().DefsFunc(func(g *jen.Group) {
		for i, v := range e.Values {
			g.Id(e.consts[i]).Id(e.Name).Op("=").Lit(int(v.Number))
		}
	})
	f.Line()
	f.Comment("String returns the schema name of e, or \"" + e.Name + "(n)\" for a value")
	f.Comment("without a name.")
	f.Func().Params(jen.Id("e").Id(e.Name)).Id("String").Params().String().Block(
		jen.Switch(jen.Id("e")).BlockFunc(func(g *jen.Group) {
			for i, v := range e.Values {
				g.Case(jen.Id(e.consts[i])).Block(jen.Return(jen.Lit(v.Name)))
			}
		}),
		jen.Return(jen.Lit(e.Name+"(").Op("+").Qual("strconv", "Itoa").Call(jen.Int().Call(jen.Id("e"))).Op("+").Lit(")")),
	)
	f.Line()
	f.Commentf("Parse%s returns the %s value named s, as String prints it.", e.Name, e.Name)
	f.Func().Id("Parse"+e.Name).Params(jen.Id("s").String()).Params(jen.Id(e.Name), jen.Error()).Block(
		jen.Switch(jen.Id("s")).BlockFunc(func(g *jen.Group) {
			for i, v := range e.Values {
				g.Case(jen.Lit(v.Name)).Block(jen.Return(jen.Id(e.consts[i]), jen.Nil()))
			}
		}),
		jen.Return(jen.Lit(0), jen.Qual("fmt", "Errorf").Call(jen.Lit(m.pkg+": unknown "+e.Name+" %q"), jen.Id("s"))),
	)
	f.Line()
}

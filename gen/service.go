package gen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

func ctxParam() jen.Code { return jen.Id("ctx").Qual("context", "Context") }

// genService emits the descriptor, dispatch, server interface, registration
// and client stub of one service.
func (m *model) genService(f *jen.File, s *svcModel) {
	m.genServerInterface(f, s)
	m.genDesc(f, s)
	m.genClient(f, s)
}

func (m *model) genServerInterface(f *jen.File, s *svcModel) {
	iface := s.Name + "Server"
	f.Comment(docComment(iface, "", fmt.Sprintf("is the server API of %s. Implementations embed", s.full)))
	f.Commentf("Unimplemented%s to stay compatible with methods added later.", iface)
	if c := strings.TrimSpace(s.Comment); c != "" {
		f.Comment("")
		comment(f, c)
	}
	f.Type().Id(iface).InterfaceFunc(func(g *jen.Group) {
		for _, mm := range s.methods {
			if c := strings.TrimSpace(mm.Comment); c != "" {
				comment(g, c)
			}
			if mm.kind.Stream() {
				g.Id(mm.Name).Add(streamParams(mm, true)).Error()
				continue
			}
			g.Id(mm.Name).Params(ctxParam(), jen.Id("req").Op("*").Id(mm.Request)).Add(results(mm))
		}
	})
	f.Line()
	un := "Unimplemented" + iface
	f.Commentf("%s answers every method with an Unimplemented error. Its", un)
	f.Comment("zero value is ready to use and safe for concurrent use.")
	f.Type().Id(un).Struct()
	f.Line()
	for _, mm := range s.methods {
		f.Commentf("%s returns an Unimplemented error.", mm.Name)
		errExpr := jen.Qual(rtPkg, "Errorf").Call(jen.Qual(rtPkg, "Unimplemented"), jen.Lit("method "+mm.full+" is not implemented"))
		switch {
		case mm.kind.Stream():
			f.Func().Params(jen.Id(un)).Id(mm.Name).Add(streamParams(mm, false)).Error().Block(jen.Return(errExpr))
		case mm.oneway():
			f.Func().Params(jen.Id(un)).Id(mm.Name).Params(jen.Qual("context", "Context"), jen.Op("*").Id(mm.Request)).Add(results(mm)).Block(jen.Return(errExpr))
		default:
			f.Func().Params(jen.Id(un)).Id(mm.Name).Params(jen.Qual("context", "Context"), jen.Op("*").Id(mm.Request)).Add(results(mm)).Block(jen.Return(jen.Nil(), errExpr))
		}
		f.Line()
	}
	f.Commentf("Register%s registers impl as the %s service of s.", s.Name, s.full)
	f.Func().Id("Register"+s.Name).Params(jen.Id("s").Qual(rtPkg, "Registrar"), jen.Id("impl").Id(iface)).Block(
		jen.Id("s").Dot("RegisterService").Call(jen.Op("&").Id(s.Name+"ServiceDesc"), jen.Id("impl")))
	f.Line()
}

func results(mm *methodModel) jen.Code {
	if mm.oneway() {
		return jen.Error()
	}
	return jen.Params(jen.Op("*").Id(mm.Response), jen.Error())
}

// literal collects the key: value pairs of a composite literal in the
// order they are added (jen.Dict would sort them).
type literal []jen.Code

func (l *literal) add(key string, val jen.Code) { *l = append(*l, jen.Id(key).Op(":").Add(val)) }

// values renders {k: v, ...} with one pair per line.
func (l literal) values() *jen.Statement {
	return jen.CustomFunc(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, func(g *jen.Group) {
		for _, c := range l {
			g.Add(c)
		}
	})
}

func (m *model) genDesc(f *jen.File, s *svcModel) {
	desc := s.Name + "ServiceDesc"
	f.Commentf("%s describes %s: its policies from the schema and its", desc, s.full)
	f.Comment("method-index dispatch table. Nothing modifies it.")
	var d literal
	d.add("Name", jen.Lit(s.full))
	if s.Group != "" {
		d.add("Group", jen.Lit(s.Group))
	}
	if s.Version != "" {
		d.add("Version", jen.Lit(s.Version))
	}
	d.add("Methods", jen.Index().Qual(rtPkg, "MethodDesc").CustomFunc(
		jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, func(g *jen.Group) {
			for _, mm := range s.methods {
				g.Add(m.methodDesc(s, mm).values())
			}
		}))
	d.add("MethodIndex", jen.Id(s.lower+"MethodIndex"))
	if p := servicePolicy(s); p != nil {
		d.add("Policy", p)
	}
	d.add("FileDescriptor", jen.Id("fileDescriptor"))
	f.Var().Id(desc).Op("=").Qual(rtPkg, "ServiceDesc").Add(d.values())
	f.Line()
	f.Commentf("%sMethodIndex maps a method ID from the wire to its index in", s.lower)
	f.Commentf("%s.Methods, or -1.", desc)
	f.Func().Id(s.lower+"MethodIndex").Params(jen.Id("id").Uint32()).Int().Block(
		jen.Switch(jen.Id("id")).BlockFunc(func(g *jen.Group) {
			for i, mm := range s.methods {
				g.Case(jen.Id(fmt.Sprintf("%#08x", mm.id))).Block(jen.Comment(mm.full), jen.Return(jen.Lit(i)))
			}
		}),
		jen.Return(jen.Lit(-1)),
	)
	f.Line()
	for _, mm := range s.methods {
		if mm.kind.Stream() {
			m.genStreamHandle(f, s, mm)
		} else {
			m.genHandle(f, s, mm)
		}
		if mm.hashKey != nil {
			m.genHashKey(f, s, mm)
		}
		if mm.mock != nil {
			m.genMockValue(f, s, mm)
		}
	}
}

func servicePolicy(s *svcModel) jen.Code {
	var d literal
	if r := s.RateLimit; r != nil {
		var rl literal
		rl.add("Rate", jen.Lit(r.Rate))
		rl.add("Burst", jen.Lit(r.Burst))
		d.add("RateLimit", jen.Qual(rtPkg, "RateLimitPolicy").Add(rl.values()))
	}
	if b := s.Breaker; b != nil {
		var bl literal
		bl.add("ErrorRate", jen.Lit(b.ErrorRate))
		bl.add("MinRequests", jen.Lit(b.MinRequests))
		if b.OpenFor != 0 {
			bl.add("OpenFor", durationLit(b.OpenFor))
		}
		d.add("Breaker", jen.Qual(rtPkg, "BreakerPolicy").Add(bl.values()))
	}
	if s.Balance != "" {
		d.add("Balance", jen.Lit(s.Balance))
	}
	if len(s.Allow) > 0 {
		d.add("Allow", stringsLit(s.Allow))
	}
	if len(d) == 0 {
		return nil
	}
	return jen.Qual(rtPkg, "ServicePolicy").Add(d.values())
}

func (m *model) methodDesc(s *svcModel, mm *methodModel) literal {
	var d literal
	d.add("Name", jen.Lit(mm.Name))
	d.add("FullName", jen.Lit(mm.full))
	d.add("ID", jen.Id(fmt.Sprintf("%#08x", mm.id)))
	if mm.oneway() {
		d.add("Oneway", jen.True())
	}
	if k := streamKinds[mm.kind]; k != "" {
		d.add("Stream", jen.Qual(rtPkg, k))
	}
	if p := m.methodPolicy(s, mm); len(p) > 0 {
		d.add("Policy", jen.Qual(rtPkg, "MethodPolicy").Add(p.values()))
	}
	d.add("NewRequest", jen.Func().Params().Qual(rtPkg, "Message").Block(jen.Return(jen.New(jen.Id(mm.Request)))))
	if !mm.oneway() {
		d.add("NewResponse", jen.Func().Params().Qual(rtPkg, "Message").Block(jen.Return(jen.New(jen.Id(mm.Response)))))
		if !mm.kind.Stream() {
			d.add("NewResponseWithRoom", jen.Qual(rtPkg, "WithRoom").Index(jen.Id(mm.Response)))
		}
	}
	if mm.kind.Stream() {
		d.add("HandleStream", jen.Id(s.lower+mm.Name+"Handle"))
	} else {
		d.add("Handle", jen.Id(s.lower+mm.Name+"Handle"))
	}
	if mm.hashKey != nil {
		d.add("HashKey", jen.Id(s.lower+mm.Name+"HashKey"))
	}
	return d
}

func (m *model) methodPolicy(s *svcModel, mm *methodModel) literal {
	var d literal
	if mm.Timeout != 0 {
		d.add("Timeout", durationLit(mm.Timeout))
	}
	if mm.TryTimeout != 0 {
		d.add("TryTimeout", durationLit(mm.TryTimeout))
	}
	if mm.Idempotent {
		d.add("Idempotent", jen.True())
	}
	if r := mm.Retry; r != nil {
		var rl literal
		rl.add("Tries", jen.Lit(r.Tries))
		if r.Interval != 0 {
			rl.add("Interval", durationLit(r.Interval))
		}
		if r.Backoff != 0 {
			rl.add("Backoff", jen.Lit(r.Backoff))
		}
		if r.MaxInterval != 0 {
			rl.add("MaxInterval", durationLit(r.MaxInterval))
		}
		if r.Jitter != 0 {
			rl.add("Jitter", jen.Lit(r.Jitter))
		}
		d.add("Retry", jen.Qual(rtPkg, "RetryPolicy").Add(rl.values()))
	}
	if mk := mm.Mock; mk != nil {
		var ml literal
		mode := "MockOnFailure"
		if mk.Force {
			mode = "MockForce"
		}
		ml.add("Mode", jen.Qual(rtPkg, mode))
		switch mk.Action {
		case "empty":
			ml.add("Action", jen.Qual(rtPkg, "MockReturnEmpty"))
		case "value":
			ml.add("Action", jen.Qual(rtPkg, "MockReturnValue"))
			ml.add("Value", jen.Id(s.lower+mm.Name+"Mock"))
		case "fail":
			ml.add("Action", jen.Qual(rtPkg, "MockFail"))
			ml.add("Code", jen.Qual(rtPkg, mk.Code))
			if mk.Message != "" {
				ml.add("Message", jen.Lit(mk.Message))
			}
		}
		d.add("Mock", jen.Qual(rtPkg, "MockPolicy").Add(ml.values()))
	}
	if fm := faultModes[mm.FaultMode]; fm != "" {
		d.add("FaultMode", jen.Qual(rtPkg, fm))
	}
	if mm.Forks != 0 {
		d.add("Forks", jen.Lit(mm.Forks))
	}
	if mm.Hedge != 0 {
		d.add("Hedge", durationLit(mm.Hedge))
	}
	if mm.MaxMessageSize != 0 {
		d.add("MaxMessageSize", jen.Lit(mm.MaxMessageSize))
	}
	if len(mm.Allow) > 0 {
		d.add("Allow", stringsLit(mm.Allow))
	}
	if r := mm.ClientRateLimit; r != nil {
		var rl literal
		rl.add("Rate", jen.Lit(r.Rate))
		rl.add("Burst", jen.Lit(r.Burst))
		d.add("ClientRateLimit", jen.Qual(rtPkg, "RateLimitPolicy").Add(rl.values()))
	}
	return d
}

// stringsLit is a []string literal of ss.
func stringsLit(ss []string) jen.Code {
	vals := make([]jen.Code, len(ss))
	for i, s := range ss {
		vals[i] = jen.Lit(s)
	}
	return jen.Index().String().Values(vals...)
}

func (m *model) genHandle(f *jen.File, s *svcModel, mm *methodModel) {
	name := s.lower + mm.Name + "Handle"
	f.Commentf("%s calls %s.%s with a request made by NewRequest.", name, s.Name+"Server", mm.Name)
	call := jen.Id("impl").Assert(jen.Id(s.Name+"Server")).Dot(mm.Name).Call(jen.Id("ctx"), jen.Id("req").Assert(jen.Op("*").Id(mm.Request)))
	params := jen.Params(jen.Id("impl").Any(), ctxParam(), jen.Id("req").Qual(rtPkg, "Message"))
	out := jen.Params(jen.Qual(rtPkg, "Message"), jen.Error())
	if mm.oneway() {
		f.Func().Id(name).Add(params).Add(out).Block(jen.Return(jen.Nil(), call))
		f.Line()
		return
	}
	f.Func().Id(name).Add(params).Add(out).Block(
		jen.List(jen.Id("resp"), jen.Err()).Op(":=").Add(call),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		jen.If(jen.Id("resp").Op("==").Nil()).Block(jen.Return(jen.Nil(),
			jen.Qual(rtPkg, "Errorf").Call(jen.Qual(rtPkg, "Internal"), jen.Lit(mm.full+": the handler returned a nil response")))),
		jen.Return(jen.Id("resp"), jen.Nil()),
	)
	f.Line()
}

func (m *model) genHashKey(f *jen.File, s *svcModel, mm *methodModel) {
	name := s.lower + mm.Name + "HashKey"
	fm := mm.hashKey
	f.Commentf("%s appends the %q field of the request to dst; a nil", name, fm.Name)
	f.Comment("request hashes as an empty one, as it is sent.")
	field := jen.Id("m").Dot(fm.goName)
	x := jen.Id("x")
	if fm.pointer() {
		x = jen.Op("*").Id("x")
	}
	var app jen.Code
	switch fm.Kind {
	case KindString, KindBytes:
		app = jen.Append(jen.Id("dst"), jen.Add(x).Op("..."))
	case KindBool:
		app = jen.Qual("strconv", "AppendBool").Call(jen.Id("dst"), x)
	case KindUint32, KindUint64, KindFixed32, KindFixed64:
		app = jen.Qual("strconv", "AppendUint").Call(jen.Id("dst"), jen.Uint64().Call(x), jen.Lit(10))
	case KindFloat32, KindFloat64:
		app = jen.Qual("strconv", "AppendFloat").Call(jen.Id("dst"), jen.Float64().Call(x), jen.LitRune('g'), jen.Lit(-1), jen.Lit(64))
	default:
		app = jen.Qual("strconv", "AppendInt").Call(jen.Id("dst"), jen.Int64().Call(x), jen.Lit(10))
	}
	body := []jen.Code{
		jen.List(jen.Id("m"), jen.Id("_")).Op(":=").Id("req").Assert(jen.Op("*").Id(mm.Request)),
		jen.If(jen.Id("m").Op("==").Nil()).Block(jen.Id("m").Op("=").New(jen.Id(mm.Request))),
		jen.Id("x").Op(":=").Add(field),
	}
	if fm.pointer() {
		body = append(body, jen.If(jen.Id("x").Op("==").Nil()).Block(jen.Return(jen.Id("dst"))))
	}
	body = append(body, jen.Return(app))
	f.Func().Id(name).Params(jen.Id("req").Qual(rtPkg, "Message"), jen.Id("dst").Index().Byte()).Index().Byte().Block(body...)
	f.Line()
}

func (m *model) genClient(f *jen.File, s *svcModel) {
	cl := s.Name + "Client"
	f.Commentf("%s calls %s through an rt.Invoker. Make it with", cl, s.full)
	f.Commentf("New%s; it is safe for concurrent use when its Invoker is.", cl)
	f.Type().Id(cl).Struct(jen.Id("c").Qual(rtPkg, "Invoker"))
	f.Line()
	f.Commentf("New%s returns a client that calls %s through c.", cl, s.full)
	f.Func().Id("New" + cl).Params(jen.Id("c").Qual(rtPkg, "Invoker")).Op("*").Id(cl).Block(
		jen.Return(jen.Op("&").Id(cl).Values(jen.Dict{jen.Id("c"): jen.Id("c")})))
	f.Line()
	for i, mm := range s.methods {
		invoke := func(resp jen.Code) jen.Code {
			return jen.Return(jen.Id("c").Dot("c").Dot("Invoke").Call(jen.Id("ctx"), jen.Op("&").Id(s.Name+"ServiceDesc"), jen.Lit(i), jen.Id("req"), resp, jen.Id("opts").Op("...")))
		}
		if c := strings.TrimSpace(mm.Comment); c != "" {
			comment(f, docComment(mm.Name, c, ""))
		} else {
			f.Commentf("%s calls %s.", mm.Name, mm.full)
		}
		if mm.kind.Stream() {
			f.Comment("")
			for _, line := range streamUsage[mm.kind] {
				f.Comment(line)
			}
			m.genStreamCall(f, s, i, mm)
			continue
		}
		params := jen.Params(ctxParam(), jen.Id("req").Op("*").Id(mm.Request), jen.Id("opts").Op("...").Qual(rtPkg, "CallOption"))
		if mm.oneway() {
			f.Func().Params(jen.Id("c").Op("*").Id(cl)).Id(mm.Name).Add(params).Error().Block(invoke(jen.Nil()))
			f.Line()
			continue
		}
		into := mm.into()
		// rt.InvokeNew makes the response once the answer's size is known,
		// with room for its bytes: one allocation per call.
		f.Func().Params(jen.Id("c").Op("*").Id(cl)).Id(mm.Name).Add(params).Add(results(mm)).Block(
			jen.List(jen.Id("resp"), jen.Err()).Op(":=").Qual(rtPkg, "InvokeNew").Call(jen.Id("ctx"), jen.Id("c").Dot("c"), jen.Op("&").Id(s.Name+"ServiceDesc"), jen.Lit(i), jen.Id("req"), jen.Id("opts").Op("...")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Return(jen.Id("resp").Assert(jen.Op("*").Id(mm.Response)), jen.Nil()),
		)
		f.Line()
		f.Commentf("%s is %s decoding the answer into resp, a message that the", into, mm.Name)
		f.Comment("caller owns and may reuse from call to call: then only the answer's")
		f.Comment("bytes are allocated.")
		f.Comment("The call resets resp; it leaves the strings, slices and messages of an")
		f.Comment("earlier answer as they were. resp must not be used by anything else")
		f.Commentf("until %s returns; on error its contents are unspecified. A nil resp", into)
		f.Comment("fails with InvalidArgument, and nothing is sent.")
		f.Func().Params(jen.Id("c").Op("*").Id(cl)).Id(into).Params(ctxParam(), jen.Id("req").Op("*").Id(mm.Request),
			jen.Id("resp").Op("*").Id(mm.Response), jen.Id("opts").Op("...").Qual(rtPkg, "CallOption")).Error().Block(
			jen.If(jen.Id("resp").Op("==").Nil()).Block(
				jen.Return(jen.Qual(rtPkg, "Errorf").Call(jen.Qual(rtPkg, "InvalidArgument"), jen.Lit(mm.full+": nil response message (not sent)")))),
			invoke(jen.Id("resp")))
		f.Line()
	}
}

package gen

import (
	"github.com/dave/jennifer/jen"
)

// streamKinds maps the stream kinds to the prefix their names share in rt:
// the rt.StreamKind constant (rt.ServerStreaming) and the typed stream
// interfaces (rt.ServerStreamingClient, rt.ServerStreamingServer).
var streamKinds = map[MethodKind]string{
	MethodServerStream: "ServerStreaming",
	MethodClientStream: "ClientStreaming",
	MethodBidiStream:   "BidiStreaming",
}

// streamType is the typed stream of a stream method that rt declares for
// side ("Client" or "Server"): rt.ServerStreamingServer[Res] for a server
// stream, rt.ClientStreamingClient[Req, Res] for a client stream, ...
func streamType(mm *methodModel, side string) *jen.Statement {
	args := []jen.Code{jen.Id(mm.Response)}
	if mm.kind.ClientStreams() {
		args = []jen.Code{jen.Id(mm.Request), jen.Id(mm.Response)}
	}
	return jen.Qual(rtPkg, streamKinds[mm.kind]+side).Types(args...)
}

// streamParams are the parameters of a stream method in the server
// interface: the request of a server stream, then the typed stream.
func streamParams(mm *methodModel, named bool) *jen.Statement {
	req, stream := jen.Op("*").Id(mm.Request), streamType(mm, "Server")
	if named {
		req, stream = jen.Id("req").Add(req), jen.Id("stream").Add(stream)
	}
	if mm.kind == MethodServerStream {
		return jen.Params(req, stream)
	}
	return jen.Params(stream)
}

// genericStream is &rt.Generic<side>Stream[Req, Res]{<side>Streamer: v}:
// the rt wrapper that gives v, an untyped stream, the typed methods.
func genericStream(mm *methodModel, side, v string) *jen.Statement {
	return jen.Op("&").Qual(rtPkg, "Generic"+side+"Stream").Types(jen.Id(mm.Request), jen.Id(mm.Response)).
		Values(jen.Dict{jen.Id(side + "Streamer"): jen.Id(v)})
}

// genStreamHandle emits the HandleStream function of a stream method: it
// wraps the server's stream in the typed stream and calls the method; for
// a server stream it first receives the one request.
func (m *model) genStreamHandle(f *jen.File, s *svcModel, mm *methodModel) {
	name := s.lower + mm.Name + "Handle"
	iface := s.Name + "Server"
	typed := genericStream(mm, "Server", "ss")
	params := jen.Params(jen.Id("impl").Any(), jen.Id("ss").Qual(rtPkg, "ServerStreamer"))
	if mm.kind != MethodServerStream {
		f.Commentf("%s calls %s.%s with the typed stream.", name, iface, mm.Name)
		f.Func().Id(name).Add(params).Error().Block(
			jen.Return(jen.Id("impl").Assert(jen.Id(iface)).Dot(mm.Name).Call(typed)))
		f.Line()
		return
	}
	f.Commentf("%s receives the one request of a %s stream and", name, mm.full)
	f.Commentf("calls %s.%s with it and the typed stream.", iface, mm.Name)
	f.Func().Id(name).Add(params).Error().Block(
		jen.Id("req").Op(":=").New(jen.Id(mm.Request)),
		jen.If(jen.Err().Op(":=").Id("ss").Dot("RecvMsg").Call(jen.Id("req")), jen.Err().Op("!=").Nil()).Block(
			jen.If(jen.Err().Op("==").Qual("io", "EOF")).Block(
				jen.Return(jen.Qual(rtPkg, "Errorf").Call(jen.Qual(rtPkg, "InvalidArgument"), jen.Lit(mm.full+": the client sent no request")))),
			jen.Return(jen.Err()),
		),
		jen.Return(jen.Id("impl").Assert(jen.Id(iface)).Dot(mm.Name).Call(jen.Id("req"), typed)),
	)
	f.Line()
}

// streamUsage is the second paragraph of a stream method's doc in the
// client.
var streamUsage = map[MethodKind][]string{
	MethodServerStream: {
		"It opens the stream, sends req and half-closes it: Recv returns the",
		"responses, then io.EOF once the server ended the stream with success.",
		"Cancel ctx or read to the end to release the stream.",
	},
	MethodClientStream: {
		"Send the requests on the stream it opens, then CloseAndRecv for the",
		"one response. Cancel ctx to abandon the stream.",
	},
	MethodBidiStream: {
		"Send and Recv on the stream it opens may run on two goroutines;",
		"CloseSend ends the requests, Recv returns io.EOF once the server",
		"ended the stream with success. Cancel ctx or read to the end to",
		"release the stream.",
	},
}

// genStreamCall emits the client method of stream method mm, method
// number i of the service.
func (m *model) genStreamCall(f *jen.File, s *svcModel, i int, mm *methodModel) {
	cl := s.Name + "Client"
	params := []jen.Code{ctxParam()}
	if mm.kind == MethodServerStream {
		params = append(params, jen.Id("req").Op("*").Id(mm.Request))
	}
	params = append(params, jen.Id("opts").Op("...").Qual(rtPkg, "CallOption"))
	typed := genericStream(mm, "Client", "cs")
	var body []jen.Code
	if mm.hashKey != nil {
		// The runtime takes a stream's hash key from rt.WithHashKey only:
		// the request is not known to it when the stream opens. The
		// caller's options come after it and win. A request without a
		// key (nil: an unset optional or empty field) goes without one,
		// as a unary call's does.
		body = append(body, jen.If(
			jen.Id("key").Op(":=").Id(s.lower+mm.Name+"HashKey").Call(jen.Id("req"), jen.Nil()),
			jen.Id("key").Op("!=").Nil(),
		).Block(jen.Id("opts").Op("=").Append(
			jen.Index().Qual(rtPkg, "CallOption").Values(jen.Qual(rtPkg, "WithHashKey").Call(jen.String().Call(jen.Id("key")))),
			jen.Id("opts").Op("..."))))
	}
	body = append(body,
		jen.List(jen.Id("cs"), jen.Err()).Op(":=").Id("c").Dot("c").Dot("NewStream").Call(
			jen.Id("ctx"), jen.Op("&").Id(s.Name+"ServiceDesc"), jen.Lit(i), jen.Id("opts").Op("...")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
	)
	if mm.kind == MethodServerStream {
		body = append(body,
			jen.Id("s").Op(":=").Add(typed),
			jen.If(jen.Err().Op(":=").Id("s").Dot("Send").Call(jen.Id("req")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.If(jen.Err().Op(":=").Id("s").Dot("CloseSend").Call(), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Return(jen.Id("s"), jen.Nil()),
		)
	} else {
		body = append(body, jen.Return(typed, jen.Nil()))
	}
	f.Func().Params(jen.Id("c").Op("*").Id(cl)).Id(mm.Name).Params(params...).
		Params(streamType(mm, "Client"), jen.Error()).Block(body...)
	f.Line()
}

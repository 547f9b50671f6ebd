package rt_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/codec"
)

// checkedMsg is msg with a Validate: "invalid" fails it.
type checkedMsg struct{ msg }

func (m *checkedMsg) Validate() error {
	if m.S == "invalid" {
		return codec.Invalid("grpctest.Checked", "s", "must not be \"invalid\"")
	}
	return nil
}

// probeDesc is a hand-written service for the gRPC tests, with streams
// served through HandleStream (so that they do not depend on yrpc's own
// stream runtime). Its method IDs are not FNV hashes of the names, as
// hand-written descriptors may have.
var probeDesc = rt.ServiceDesc{
	Name: "grpctest.Probe",
	Methods: []rt.MethodDesc{
		unaryProbe("Meta", 0x2001, probeMeta),
		{
			Name: "Checked", FullName: "grpctest.Probe/Checked", ID: 0x2002,
			NewRequest:  func() rt.Message { return new(checkedMsg) },
			NewResponse: func() rt.Message { return new(msg) },
			Handle: func(_ any, _ context.Context, req rt.Message) (rt.Message, error) {
				return &req.(*checkedMsg).msg, nil
			},
		},
		unaryProbe("Details", 0x2003, func(context.Context, *msg) (*msg, error) {
			return nil, &rt.Error{Code: rt.FailedPrecondition, Message: "with details",
				Details: []rt.ErrorDetail{{TypeURL: "type.googleapis.com/test.Detail", Value: []byte{0x08, 0x2a}}}}
		}),
		unaryProbe("Deadline", 0x2004, func(ctx context.Context, _ *msg) (*msg, error) {
			d, ok := ctx.Deadline()
			if !ok {
				return &msg{S: "none"}, nil
			}
			return &msg{S: time.Until(d).String()}, nil
		}),
		unaryProbe("Peer", 0x2005, func(ctx context.Context, _ *msg) (*msg, error) {
			p, ok := rt.PeerFrom(ctx)
			if !ok {
				return nil, rt.Errorf(rt.Internal, "no peer")
			}
			return &msg{S: fmt.Sprintf("tls=%v spiffe=%s principal=%s addr=%v", p.TLS != nil, p.SPIFFEID, p.Principal, p.Addr != nil)}, nil
		}),
		{
			Name: "List", FullName: "grpctest.Probe/List", ID: 0x2006, Stream: rt.ServerStreaming,
			NewRequest: func() rt.Message { return new(msg) }, NewResponse: func() rt.Message { return new(msg) },
			HandleStream: func(_ any, ss rt.ServerStreamer) error { return probeList(ss) },
		},
		{
			Name: "Sum", FullName: "grpctest.Probe/Sum", ID: 0x2007, Stream: rt.ClientStreaming,
			NewRequest: func() rt.Message { return new(checkedMsg) }, NewResponse: func() rt.Message { return new(msg) },
			HandleStream: func(_ any, ss rt.ServerStreamer) error { return probeSum(ss) },
		},
		{
			Name: "Chat", FullName: "grpctest.Probe/Chat", ID: 0x2008, Stream: rt.BidiStreaming,
			NewRequest: func() rt.Message { return new(msg) }, NewResponse: func() rt.Message { return new(msg) },
			HandleStream: func(_ any, ss rt.ServerStreamer) error { return probeChat(ss) },
		},
	},
	MethodIndex: func(id uint32) int {
		if id >= 0x2001 && id <= 0x2008 {
			return int(id - 0x2001)
		}
		return -1
	},
}

func unaryProbe(name string, id uint32, f func(context.Context, *msg) (*msg, error)) rt.MethodDesc {
	return rt.MethodDesc{
		Name: name, FullName: "grpctest.Probe/" + name, ID: id,
		NewRequest:  func() rt.Message { return new(msg) },
		NewResponse: func() rt.Message { return new(msg) },
		Handle: func(_ any, ctx context.Context, req rt.Message) (rt.Message, error) {
			return f(ctx, req.(*msg))
		},
	}
}

// probeMeta answers the request metadata as sorted "k=v" lines, and sends
// back as response metadata the pairs "k=v" of the request's lines; with a
// line "fail=CODE" it fails with that code instead, the metadata set.
func probeMeta(ctx context.Context, req *msg) (*msg, error) {
	md := rt.IncomingMetadata(ctx)
	var lines []string
	for i := 0; i+1 < len(md); i += 2 {
		lines = append(lines, md[i]+"="+md[i+1])
	}
	slices.Sort(lines)
	fail := rt.OK
	for _, l := range strings.Split(req.S, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			rt.SetResponseMetadata(ctx, k, v)
			if k == "fail" {
				n, _ := strconv.Atoi(v)
				fail = rt.Code(n)
			}
		}
	}
	if fail != rt.OK {
		return nil, rt.Errorf(fail, "failed as asked")
	}
	return &msg{S: strings.Join(lines, "\n")}, nil
}

// probeList answers "N" with N messages "0", "1", ...; "N:fail" ends with
// an Aborted error after them. The response metadata "list=headers" goes
// in the headers, the trailer "list-count=N" in the trailers.
func probeList(ss rt.ServerStreamer) error {
	var req msg
	if err := ss.RecvMsg(&req); err != nil {
		return err
	}
	ns, fail := strings.CutSuffix(req.S, ":fail")
	n, err := strconv.Atoi(ns)
	if err != nil {
		return rt.Errorf(rt.InvalidArgument, "not a number: %q", req.S)
	}
	rt.SetResponseMetadata(ss.Context(), "list", "headers")
	for i := range n {
		if err := ss.SendMsg(&msg{S: strconv.Itoa(i)}); err != nil {
			return err
		}
	}
	ss.SetTrailer(rt.MD{"list-count", ns})
	if fail {
		return rt.Errorf(rt.Aborted, "failed after %d", n)
	}
	return nil
}

// probeSum joins the messages of a client stream with "+".
func probeSum(ss rt.ServerStreamer) error {
	var parts []string
	for {
		var m checkedMsg
		err := ss.RecvMsg(&m)
		if err == io.EOF {
			return ss.SendMsg(&msg{S: strings.Join(parts, "+")})
		}
		if err != nil {
			return err
		}
		parts = append(parts, m.S)
	}
}

// probeChat echoes each message as "echo:" + it; "bye" ends the stream
// from the server's side, "fail" with an error.
func probeChat(ss rt.ServerStreamer) error {
	for {
		var m msg
		err := ss.RecvMsg(&m)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		case m.S == "bye":
			return nil
		case m.S == "fail":
			return rt.Errorf(rt.DataLoss, "chat failed")
		}
		if err := ss.SendMsg(&msg{S: "echo:" + m.S}); err != nil {
			return err
		}
	}
}

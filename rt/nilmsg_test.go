package rt_test

import (
	"testing"

	"github.com/yrpc/yrpc/rt"
)

// nilProbeDesc has one bidi method whose handler tries SendMsg(nil) and
// RecvMsg(nil), and sends back the two errors' codes.
var nilProbeDesc = rt.ServiceDesc{
	Name: "test.NilProbe",
	Methods: []rt.MethodDesc{{
		Name: "Probe", FullName: "test.NilProbe/Probe", ID: 0x3001, Stream: rt.BidiStreaming,
		NewRequest:  func() rt.Message { return new(msg) },
		NewResponse: func() rt.Message { return new(msg) },
		HandleStream: func(_ any, ss rt.ServerStreamer) error {
			send, recv := ss.SendMsg(nil), ss.RecvMsg(nil)
			if err := ss.SendMsg(&msg{S: rt.CodeOf(send).String()}); err != nil {
				return err
			}
			return ss.SendMsg(&msg{S: rt.CodeOf(recv).String()})
		},
	}},
	MethodIndex: func(id uint32) int {
		if id == 0x3001 {
			return 0
		}
		return -1
	},
}

// TestStreamNilMessages: SendMsg and RecvMsg with a nil message fail with
// InvalidArgument, on a client stream and on a server stream over yrpc
// and over gRPC, and the stream goes on.
func TestStreamNilMessages(t *testing.T) {
	register := func(s *rt.Server) { s.RegisterService(&nilProbeDesc, struct{}{}) }
	e := newEnvWith(t, register, nil)
	cs, err := e.cli.NewStream(ctxT(t), &nilProbeDesc, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(nil); rt.CodeOf(err) != rt.InvalidArgument {
		t.Errorf("client SendMsg(nil) = %v, want InvalidArgument", err)
	}
	if err := cs.RecvMsg(nil); rt.CodeOf(err) != rt.InvalidArgument {
		t.Errorf("client RecvMsg(nil) = %v, want InvalidArgument", err)
	}
	for _, what := range []string{"SendMsg(nil)", "RecvMsg(nil)"} {
		var m msg
		if err := cs.RecvMsg(&m); err != nil || m.S != "InvalidArgument" {
			t.Errorf("yrpc server %s: %q, %v; want InvalidArgument", what, m.S, err)
		}
	}

	g := newGRPCEnvWith(t, register)
	s := g.g.stream(t, ctxT(t), "/test.NilProbe/Probe", nil)
	for _, what := range []string{"SendMsg(nil)", "RecvMsg(nil)"} {
		if got, err := s.recv(); err != nil || got != "InvalidArgument" {
			t.Errorf("gRPC server %s: %q, %v; want InvalidArgument", what, got, err)
		}
	}
}

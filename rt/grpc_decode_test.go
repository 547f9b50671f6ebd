package rt_test

import (
	"context"
	"testing"

	"github.com/yrpc/yrpc/rt"
)

// gateMsg is msg whose decoding of "hold" waits for its gate: a request
// that takes long to decode (a large or gzipped one), for as long as the
// test wants.
type gateMsg struct {
	msg
	g *decodeGate
}

type decodeGate struct {
	decoding chan struct{} // closed when a "hold" request starts decoding
	release  chan struct{} // closed by the test to let it finish
}

func (m *gateMsg) Unmarshal(b []byte) error {
	if string(b) == "hold" {
		close(m.g.decoding)
		<-m.g.release
	}
	return m.msg.Unmarshal(b)
}

// gateDesc serves Hold, whose request decodes through a gate, and Wait,
// whose handler waits until the test lets it answer.
func gateDesc(g *decodeGate, started, answer chan struct{}) *rt.ServiceDesc {
	echo := func(_ any, _ context.Context, req rt.Message) (rt.Message, error) { return req, nil }
	return &rt.ServiceDesc{
		Name: "grpctest.Gate",
		Methods: []rt.MethodDesc{
			{Name: "Hold", FullName: "grpctest.Gate/Hold", ID: 0x3001,
				NewRequest: func() rt.Message { return &gateMsg{g: g} }, NewResponse: func() rt.Message { return new(msg) },
				Handle: func(_ any, _ context.Context, req rt.Message) (rt.Message, error) { return &req.(*gateMsg).msg, nil }},
			{Name: "Wait", FullName: "grpctest.Gate/Wait", ID: 0x3002,
				NewRequest: func() rt.Message { return new(msg) }, NewResponse: func() rt.Message { return new(msg) },
				Handle: func(impl any, ctx context.Context, req rt.Message) (rt.Message, error) {
					close(started)
					<-answer
					return echo(impl, ctx, req)
				}},
		},
		MethodIndex: func(id uint32) int { return int(id) - 0x3001 },
	}
}

// A gRPC request that takes long to decode holds up only itself: the
// answers of the connection's other calls go out meanwhile. (The request
// was decoded under the connection's lock, which every call's answer
// takes, so they waited for it.)
func TestGRPCDecodeHoldsNoOtherCall(t *testing.T) {
	g := &decodeGate{decoding: make(chan struct{}), release: make(chan struct{})}
	started, answer := make(chan struct{}), make(chan struct{})
	e := newGRPCEnvWith(t, func(s *rt.Server) { s.RegisterService(gateDesc(g, started, answer), struct{}{}) })
	hc := dialH2(t, e.addr)
	released := false
	release := func() {
		if !released {
			released = true
			close(g.release)
		}
	}
	defer release() // a failed test must not leave the server's reader waiting

	hc.write(message(hc.request(nil, 1, "/grpctest.Gate/Wait", false), 1, true, "waited"))
	<-started // stream 1's handler runs; the server reads on without it
	hc.write(message(hc.request(nil, 3, "/grpctest.Gate/Hold", false), 3, true, "hold"))
	<-g.decoding
	close(answer)
	r := hc.read(1, nil)
	if got := r.messages(t); r.status() != "0" || len(got) != 1 || got[0] != "waited" {
		t.Errorf("stream 1: status %q, messages %q", r.status(), got)
	}
	release()
	r = hc.read(3, nil)
	if got := r.messages(t); r.status() != "0" || len(got) != 1 || got[0] != "hold" {
		t.Errorf("stream 3: status %q, messages %q", r.status(), got)
	}
}

package rt_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/rt"
)

// A call whose context ended before it was sent is not sent: the caller
// gets Canceled (or DeadlineExceeded) and no handler runs for it, as
// streams already behave. Before, a unary call with a canceled context
// went out and ran on the provider for no one, and a oneway call even
// reported success.
func TestCallCanceledBeforeSendingIsNotSent(t *testing.T) {
	e := newEnv(t, nil)
	if _, err := call(ctxT(t), e.cli, &testDesc, 0, "warm"); err != nil {
		t.Fatal(err)
	}
	before := e.impl.calls.Load()
	ctx, cancel := context.WithCancel(ctxT(t))
	cancel()
	_, err := call(ctx, e.cli, &testDesc, 0, "canceled")
	if rt.CodeOf(err) != rt.Canceled || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "test.Echo/Echo") {
		t.Errorf("unary call with a canceled context: %v, want Canceled naming the method", err)
	}
	err = e.cli.Invoke(ctx, &testDesc, 1, &msg{S: "canceled"}, nil)
	if rt.CodeOf(err) != rt.Canceled || !strings.Contains(err.Error(), "test.Echo/Fire") {
		t.Errorf("oneway call with a canceled context: %v, want Canceled naming the method", err)
	}
	// The server reads a connection's frames in order: once this call
	// is answered and nothing is in flight, any request sent before it
	// has run.
	if _, err := call(ctxT(t), e.cli, &testDesc, 0, "sync"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { return e.srv.Stats().InFlight == 0 })
	if n := e.impl.calls.Load() - before; n != 1 {
		t.Errorf("the handler ran %d times, want once (the last call only)", n)
	}
	select {
	case s := <-e.impl.oneways:
		t.Errorf("the oneway handler ran (%q) for a call canceled before it was sent", s)
	default:
	}
}

// Response metadata keys starting with "yrpc-" are the runtime's: a
// handler (here an interceptor forwarding an upstream's answer whole,
// refusal marker included) cannot mark its failed call as refused unrun,
// which made clients send a non-idempotent call to every provider in
// turn, nor as mocked. Its own keys go through.
func TestHandlerCannotSpoofReservedResponseMetadata(t *testing.T) {
	forward := func(ctx context.Context, req rt.Message, info *rt.CallInfo, next rt.Handler) (rt.Message, error) {
		_, _ = next(ctx, req)
		upstream := rt.MD{"yrpc-refused", "1", "yrpc-mock", "forced", "upstream", "busy"}
		rt.SetResponseMetadata(ctx, upstream...)
		return nil, rt.Errorf(rt.Unavailable, "upstream refused the call")
	}
	c := newClusterServing(t, 3, func(int, *testImpl) {}, func(int) []rt.ServerOption {
		return []rt.ServerOption{rt.WithServerInterceptors(forward)}
	})
	var md rt.MD
	_, err := call(ctxT(t), c.cli, &testDesc, 0, "x", rt.ResponseMetadata(&md))
	if rt.CodeOf(err) != rt.Unavailable || !rt.IsRemote(err) {
		t.Fatalf("err = %v, want the handler's Unavailable", err)
	}
	if n := c.executions(); n != 1 {
		t.Errorf("the non-idempotent call ran %d times, want 1", n)
	}
	if md.Get("yrpc-refused") != "" || md.Get("yrpc-mock") != "" || md.Get("upstream") != "busy" {
		t.Errorf("response metadata %v: want upstream=busy and no yrpc- key", md)
	}
}

// An answer over the limits the client announced fails that call alone,
// with ResourceExhausted naming the method and the limit; the connection
// stays up for the next calls.
func TestAnswerOverClientLimitsNamesMethod(t *testing.T) {
	e := newEnv(t, nil, rt.WithMaxFrameSize(64<<10), rt.WithMaxMetadataSize(1024))
	for _, c := range []struct {
		name  string
		ctx   context.Context
		req   string
		limit string
	}{
		{"body", ctxT(t), "reply:" + strings.Repeat("y", 100<<10), "65536"},
		{"metadata", rt.WithMetadata(ctxT(t), "k", strings.Repeat("v", 2000)), "md", "1024"},
	} {
		_, err := call(c.ctx, e.cli, &testDesc, 0, c.req)
		if rt.CodeOf(err) != rt.ResourceExhausted || !strings.Contains(err.Error(), "test.Echo/Echo") || !strings.Contains(err.Error(), c.limit) {
			t.Errorf("%s over the client's limit: %v, want ResourceExhausted naming test.Echo/Echo and %s", c.name, err, c.limit)
		}
		if got, err := call(ctxT(t), e.cli, &testDesc, 0, "next"); err != nil || got != "next" {
			t.Fatalf("after the %s over the limit: %q, %v", c.name, got, err)
		}
	}
	if n := e.srv.Stats().Conns; n != 1 {
		t.Errorf("server has %d connections, want the client's one", n)
	}
}

// A oneway method called as a unary one (a client whose schema predates
// the method's becoming oneway) runs and answers an empty message, as it
// answers gRPC clients google.protobuf.Empty; it answered Internal after
// running the handler.
func TestOnewayMethodCalledAsUnary(t *testing.T) {
	impl := newTestImpl()
	srv := rt.NewServer()
	srv.RegisterService(&testDesc, impl)
	cli := aliasClient(t, serve(t, srv))
	unary := testDesc
	unary.Methods = append([]rt.MethodDesc(nil), testDesc.Methods...)
	fire := &unary.Methods[1]
	fire.Oneway = false
	fire.NewResponse = func() rt.Message { return new(msg) }
	resp := &msg{S: "stale"}
	if err := cli.Invoke(ctxT(t), &unary, 1, &msg{S: "fired"}, resp); err != nil || resp.S != "" {
		t.Fatalf("a oneway method called as unary: %v, answer %q; want an empty answer", err, resp.S)
	}
	if got := <-impl.oneways; got != "fired" {
		t.Fatalf("the handler got %q", got)
	}
}

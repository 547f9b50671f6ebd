package otel_test

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	yotel "github.com/yrpc/yrpc/contrib/otel"
	"github.com/yrpc/yrpc/examples/feed/feedrpc"
	"github.com/yrpc/yrpc/rt"
)

var subscribeInfo = &rt.CallInfo{Service: &feedrpc.FeedServiceDesc, Method: &feedrpc.FeedServiceDesc.Methods[1]}

// errSignalCtx closes called the first time Err returns an error: then
// whoever watched the context for its end has looked at it.
type errSignalCtx struct {
	context.Context
	once   sync.Once
	called chan struct{}
}

func (c *errSignalCtx) Err() error {
	err := c.Context.Err()
	if err != nil {
		c.once.Do(func() { close(c.called) })
	}
	return err
}

// endingStream is a client stream whose RecvMsg, as rt's does at the end
// of a stream, cancels the stream's context, then returns recv once the
// interceptor has seen the context end.
type endingStream struct {
	rt.ClientStreamer // nil: only the methods below are called
	ctx               *errSignalCtx
	cancel            context.CancelFunc
	recv              error
}

func (s *endingStream) Context() context.Context { return s.ctx }

func (s *endingStream) RecvMsg(rt.Message) error {
	s.cancel()
	select {
	case <-s.ctx.called:
	case <-time.After(10 * time.Second):
	}
	return s.recv
}

// TestStreamContextEndsInRecv checks that a stream's context ending while
// RecvMsg waits leaves the status to what RecvMsg returns: rt cancels the
// context when RecvMsg sees io.EOF, which is no cancellation; and a message
// received after the end ends the span with the context's status.
func TestStreamContextEndsInRecv(t *testing.T) {
	tests := []struct {
		name string
		recv error
		code string
	}{
		{"eof", io.EOF, "OK"},
		{"error", rt.Errorf(rt.Unavailable, "gone"), "UNAVAILABLE"},
		{"message", nil, "CANCELLED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tel := newTelemetry()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			fake := &endingStream{ctx: &errSignalCtx{Context: ctx, called: make(chan struct{})}, cancel: cancel, recv: tt.recv}
			ci := yotel.NewStreamClientInterceptor(tel.options(""))
			cs, err := ci(context.Background(), subscribeInfo, func(context.Context, *rt.CallInfo) (rt.ClientStreamer, error) { return fake, nil })
			if err != nil {
				t.Fatal(err)
			}
			if err := cs.RecvMsg(new(feedrpc.Event)); err != tt.recv {
				t.Fatalf("RecvMsg = %v, want %v", err, tt.recv)
			}
			c, _ := waitSpans(t, tel, 1, 0)
			if got := attrs(c)["rpc.response.status_code"].AsString(); got != tt.code {
				t.Errorf("client span status code %s, want %s", got, tt.code)
			}
		})
	}
}

// TestStreamOpenFails checks that a stream that fails to open gets its
// client span, ended with the error's status.
func TestStreamOpenFails(t *testing.T) {
	tel := newTelemetry()
	ci := yotel.NewStreamClientInterceptor(tel.options(""))
	fail := rt.Errorf(rt.Unavailable, "no provider")
	cs, err := ci(context.Background(), subscribeInfo, func(context.Context, *rt.CallInfo) (rt.ClientStreamer, error) { return nil, fail })
	if cs != nil || err != fail {
		t.Fatalf("interceptor = %v, %v; want nil, the error", cs, err)
	}
	cs0 := tel.spansOf(trace.SpanKindClient)
	if len(cs0) != 1 {
		t.Fatalf("%d client spans, want 1", len(cs0))
	}
	checkSide(t, "client", cs0[0], map[attribute.Key]any{"rpc.method": "feed.Feed/Subscribe", "rpc.response.status_code": "UNAVAILABLE"}, true, "UNAVAILABLE", "none")
}

// sinkStream is a server stream that takes every message.
type sinkStream struct {
	rt.ServerStreamer // nil: only the methods below are called
}

func (sinkStream) Context() context.Context { return context.Background() }
func (sinkStream) SendMsg(rt.Message) error { return nil }

func TestNoMessageEvents(t *testing.T) {
	for _, off := range []bool{false, true} {
		tel := newTelemetry()
		o := tel.options("")
		o.NoMessageEvents = off
		si := yotel.NewStreamServerInterceptor(o)
		err := si(sinkStream{}, subscribeInfo, func(ss rt.ServerStreamer) error {
			return ss.SendMsg(&feedrpc.Event{Topic: "t"})
		})
		if err != nil {
			t.Fatal(err)
		}
		ss := tel.spansOf(trace.SpanKindServer)
		if len(ss) != 1 {
			t.Fatalf("%d server spans, want 1", len(ss))
		}
		want := 1
		if off {
			want = 0
		}
		if got := len(messages(t, "server", ss[0])); got != want {
			t.Errorf("NoMessageEvents %v: %d message events, want %d", off, got, want)
		}
	}
}

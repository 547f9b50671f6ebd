package otel_test

import (
	"context"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	yotel "github.com/yrpc/yrpc/contrib/otel"
	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/rt"
)

func TestCarrier(t *testing.T) {
	tests := []struct {
		name string
		md   rt.MD
		key  string
		want string
		keys []string
	}{
		{"empty", nil, "traceparent", "", []string{}},
		{"one", rt.Pairs("traceparent", "a"), "traceparent", "a", []string{"traceparent"}},
		{"last wins", rt.Pairs("traceparent", "a", "x", "1", "traceparent", "b"), "traceparent", "b", []string{"traceparent", "x"}},
		{"missing", rt.Pairs("x", "1"), "tracestate", "", []string{"x"}},
		{"case-sensitive", rt.Pairs("Traceparent", "a"), "traceparent", "", []string{"Traceparent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := yotel.Carrier(tt.md)
			if got := c.Get(tt.key); got != tt.want {
				t.Errorf("Get(%q) = %q, want %q", tt.key, got, tt.want)
			}
			if got := c.Keys(); !slices.Equal(got, tt.keys) {
				t.Errorf("Keys() = %q, want %q", got, tt.keys)
			}
			c.Set(tt.key, "set")
			if got := c.Get(tt.key); got != "set" {
				t.Errorf("Get after Set = %q, want set", got)
			}
		})
	}
}

// TestInjectAppends checks that the client interceptor sends the trace
// context after the caller's own metadata, and that a Carrier over what it
// sent yields the client span even when the caller copied an older
// traceparent in.
func TestInjectAppends(t *testing.T) {
	tel := newTelemetry()
	ci := yotel.NewClientInterceptor(tel.options(""))
	info := &rt.CallInfo{Service: &greeterrpc.GreeterServiceDesc, Method: &greeterrpc.GreeterServiceDesc.Methods[0]}
	stale := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	ctx := rt.WithMetadata(context.Background(), "app", "shop", "traceparent", stale)

	var sent rt.MD
	var serverParent trace.SpanContext
	err := ci(ctx, info, nil, nil, func(ctx context.Context, info *rt.CallInfo, req, resp rt.Message) error {
		sent = rt.OutgoingMetadata(ctx)
		// What the server interceptor extracts from the same metadata.
		c := yotel.Carrier(sent)
		serverParent = trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), &c))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sent.Get("app") != "shop" || len(sent.Values("traceparent")) != 2 {
		t.Fatalf("sent metadata %v, want the caller's pairs then the client span's traceparent", sent)
	}
	cs := tel.spansOf(trace.SpanKindClient)
	if len(cs) != 1 {
		t.Fatalf("%d client spans, want 1", len(cs))
	}
	if serverParent.SpanID() != cs[0].SpanContext().SpanID() {
		t.Errorf("the server would see parent %s, want the client span %s (the stale traceparent won)", serverParent.SpanID(), cs[0].SpanContext().SpanID())
	}
}

// TestCodeOutsideRT checks the attributes of a status code rt does not
// define (a newer peer's): its number, and a failure on both sides.
func TestCodeOutsideRT(t *testing.T) {
	tel := newTelemetry()
	info := &rt.CallInfo{Service: &greeterrpc.GreeterServiceDesc, Method: &greeterrpc.GreeterServiceDesc.Methods[0]}
	fail := &rt.Error{Code: 42, Message: "from the future"}
	ci, si := yotel.NewClientInterceptor(tel.options("")), yotel.NewServerInterceptor(tel.options(""))
	_ = ci(context.Background(), info, nil, nil, func(context.Context, *rt.CallInfo, rt.Message, rt.Message) error { return fail })
	_, _ = si(context.Background(), nil, info, func(context.Context, rt.Message) (rt.Message, error) { return nil, fail })
	for _, k := range []trace.SpanKind{trace.SpanKindClient, trace.SpanKindServer} {
		ss := tel.spansOf(k)
		if len(ss) != 1 {
			t.Fatalf("%d %s spans, want 1", len(ss), k)
		}
		checkSide(t, k.String(), ss[0], map[attribute.Key]any{"rpc.response.status_code": "42"}, true, "42", "none")
	}
}

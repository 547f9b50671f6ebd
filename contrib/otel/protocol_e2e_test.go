package otel_test

import (
	"context"
	"io"
	"net"
	"slices"
	"strconv"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	yotel "github.com/yrpc/yrpc/contrib/otel"
	"github.com/yrpc/yrpc/examples/feed/feedrpc"
	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/rt"
)

// A server span, and the server's duration histogram, say rpc.system.name
// "grpc" for a call or stream that came over the gRPC endpoint and "yrpc"
// for one over yrpc's wire; client spans say "yrpc" either way.
func TestServerSystemFollowsProtocol(t *testing.T) {
	tel := newTelemetry()
	o := tel.options("")
	cli, addr := serve(t, []rt.ServerOption{
		rt.WithServerInterceptors(yotel.NewServerInterceptor(o)),
		rt.WithStreamServerInterceptors(yotel.NewStreamServerInterceptor(o)),
	}, func(srv *rt.Server) {
		greeterrpc.RegisterGreeter(srv, greeter{})
		feedrpc.RegisterFeed(srv, feed{})
	}, func(string) []rt.ClientOption { return nil })
	grpcCli, err := rt.NewClient(rt.WithAddrs("grpc://" + addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { grpcCli.Close() })

	unary := func(c *rt.Client) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := greeterrpc.NewGreeterClient(c).SayHello(ctx, &greeterrpc.HelloRequest{Name: "x"})
			return err
		}
	}
	stream := func(c *rt.Client) func(context.Context) error {
		return func(ctx context.Context) error {
			s, err := feedrpc.NewFeedClient(c).Subscribe(ctx, &feedrpc.Subscription{Topic: "t", From: 2})
			if err != nil {
				return err
			}
			for {
				if _, err := s.Recv(); err != nil {
					if err == io.EOF {
						return nil
					}
					return err
				}
			}
		}
	}
	tests := []struct {
		name   string
		do     func(context.Context) error
		method string
		want   string
	}{
		{"yrpc unary", unary(cli), "greeter.Greeter/SayHello", "yrpc"},
		{"grpc unary", unary(grpcCli), "greeter.Greeter/SayHello", "grpc"},
		{"yrpc stream", stream(cli), "feed.Feed/Subscribe", "yrpc"},
		{"grpc stream", stream(grpcCli), "feed.Feed/Subscribe", "grpc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tel.spans.Reset()
			if err := tt.do(context.Background()); err != nil {
				t.Fatal(err)
			}
			_, s := waitSpans(t, tel, 0, 1)
			checkAttrs(t, "server", s, map[attribute.Key]any{"rpc.system.name": tt.want, "rpc.method": tt.method})
		})
	}

	counts := serverDurationCounts(t, tel, "rpc.system.name", "rpc.method")
	for _, k := range []string{"yrpc greeter.Greeter/SayHello", "grpc greeter.Greeter/SayHello", "yrpc feed.Feed/Subscribe", "grpc feed.Feed/Subscribe"} {
		if counts[k] != 1 {
			t.Errorf("rpc.server.call.duration counts %v, want 1 of %q", counts, k)
		}
	}
}

// A client call or stream to a provider reached over gRPC (a grpc://
// address) keeps rpc.system.name "yrpc" on its span, the client's, and
// says "grpc" on its try's event, with the provider's address.
func TestClientAttemptOverGRPC(t *testing.T) {
	tel := newTelemetry()
	_, addr := serve(t, nil, func(srv *rt.Server) {
		greeterrpc.RegisterGreeter(srv, greeter{})
		feedrpc.RegisterFeed(srv, feed{})
	}, func(string) []rt.ClientOption { return nil })
	grpcCli, err := rt.NewClient(rt.WithAddrs("grpc://"+addr),
		rt.WithClientInterceptors(yotel.NewClientInterceptor(tel.options(""))),
		rt.WithStreamClientInterceptors(yotel.NewStreamClientInterceptor(tel.options(""))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { grpcCli.Close() })
	if _, err := greeterrpc.NewGreeterClient(grpcCli).SayHello(context.Background(), &greeterrpc.HelloRequest{Name: "x"}); err != nil {
		t.Fatal(err)
	}
	c, _ := waitSpans(t, tel, 1, 0)
	host, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	checkAttrs(t, "client", c, map[attribute.Key]any{"rpc.system.name": "yrpc", "network.peer.address": host, "network.peer.port": int64(port)})
	checkAttempts(t, c, attempt{1, "grpc", host, port, "OK"})

	tel.spans.Reset()
	s, err := feedrpc.NewFeedClient(grpcCli).Subscribe(context.Background(), &feedrpc.Subscription{Topic: "t", From: 2})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := s.Recv(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	c, _ = waitSpans(t, tel, 1, 0)
	checkAttrs(t, "client stream", c, map[attribute.Key]any{"rpc.system.name": "yrpc", "network.peer.address": host, "network.peer.port": int64(port)})
	var tries []sdktrace.Event
	for _, ev := range c.Events() {
		if ev.Name == yotel.AttemptEvent {
			tries = append(tries, ev)
		}
	}
	if len(tries) != 1 || !slices.Contains(tries[0].Attributes, attribute.String("rpc.system.name", "grpc")) {
		t.Errorf("client stream span's try events: %+v; want one, over grpc", tries)
	}
}

// A call that failed over gets an event per try, and network.peer.* of
// the provider that answered.
func TestClientAttemptsOfAFailover(t *testing.T) {
	tel := newTelemetry()
	_, addr := serve(t, nil, func(srv *rt.Server) { greeterrpc.RegisterGreeter(srv, greeter{}) },
		func(string) []rt.ClientOption { return nil })
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := lis.Addr().String()
	lis.Close() // nothing listens there now: a dial is refused, the call not sent
	cli, err := rt.NewClient(rt.WithAddrs(closed, addr),
		rt.WithClientInterceptors(yotel.NewClientInterceptor(tel.options(""))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	host, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	chost, cportStr, _ := net.SplitHostPort(closed)
	cport, _ := strconv.Atoi(cportStr)
	// Until a call picks the closed address first (at random: 200 calls
	// miss it with odds of 1 in 10^60).
	for range 200 {
		tel.spans.Reset()
		if _, err := greeterrpc.NewGreeterClient(cli).SayHello(context.Background(), &greeterrpc.HelloRequest{Name: "x"}); err != nil {
			t.Fatal(err)
		}
		c, _ := waitSpans(t, tel, 1, 0)
		if len(c.Events()) == 0 {
			continue
		}
		checkAttrs(t, "client", c, map[attribute.Key]any{"network.peer.address": host, "network.peer.port": int64(port), "rpc.response.status_code": "OK"})
		checkAttempts(t, c, attempt{1, "yrpc", chost, cport, "UNAVAILABLE"}, attempt{2, "yrpc", host, port, "OK"})
		return
	}
	t.Fatal("no call tried the closed address")
}

package otel_test

import (
	"context"
	"io"
	"testing"

	"go.opentelemetry.io/otel/attribute"

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

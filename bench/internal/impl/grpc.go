package impl

import (
	"context"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/yrpc/yrpc/bench/benchpb"
	"github.com/yrpc/yrpc/bench/internal/harness"
	"github.com/yrpc/yrpc/bench/internal/workload"
)

func grpcImpl() *Impl {
	return &Impl{
		Name:  "grpc",
		Label: "gRPC-Go " + moduleVersion("google.golang.org/grpc"),
		Serve: serveGRPC,
		Dial:  dialGRPC,
	}
}

type grpcHello struct {
	benchpb.UnimplementedHelloServer
}

func (grpcHello) Say(_ context.Context, req *benchpb.BenchmarkMessage) (*benchpb.BenchmarkMessage, error) {
	return workload.Answer(req), nil
}

// grpcTLSImpl is gRPC over TLS: the transport credentials of
// credentials.NewTLS (which adds the "h2" ALPN protocol).
func grpcTLSImpl() *Impl {
	return &Impl{
		Name:  "grpc-tls",
		Label: "gRPC-Go " + moduleVersion("google.golang.org/grpc") + " + TLS",
		TLS:   true,
		Serve: serveGRPC,
		Dial:  dialGRPC,
	}
}

func serveGRPC(ctx context.Context, lis net.Listener, o Options) error {
	var opts []grpc.ServerOption
	if o.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(o.TLS)))
	}
	s := grpc.NewServer(opts...)
	benchpb.RegisterHelloServer(s, grpcHello{})
	return serveUntil(ctx, func() error { return s.Serve(lis) }, s.Stop)
}

type grpcClient struct {
	conn *grpc.ClientConn
	hc   benchpb.HelloClient
	reqs []*benchpb.BenchmarkMessage
}

func dialGRPC(_ context.Context, addr string, o Options) (harness.Client, error) {
	addr, reqs, err := prepare("grpc", addr, o)
	if err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if o.TLS != nil {
		creds = credentials.NewTLS(o.TLS)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, err
	}
	return &grpcClient{conn: conn, hc: benchpb.NewHelloClient(conn), reqs: reqs}, nil
}

func (g *grpcClient) Call(ctx context.Context, w int) error {
	resp, err := g.hc.Say(ctx, g.reqs[w])
	if err != nil {
		return err
	}
	return workload.Check(resp, g.reqs[w])
}

func (g *grpcClient) Close() error { return g.conn.Close() }

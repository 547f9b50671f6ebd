//go:build yrpc

package impl

import (
	"context"
	"crypto/tls"
	"net"

	"github.com/yrpc/yrpc/examples/hello/hellorpc"
	"github.com/yrpc/yrpc/rt"

	"github.com/yrpc/yrpc/bench/internal/harness"
	"github.com/yrpc/yrpc/bench/internal/streamrpc"
	"github.com/yrpc/yrpc/bench/internal/workload"
)

// groupedYRPC returns yrpc's grouped rows (see Grouped): its feed and echo
// streams on one rt.Client; gRPC-Go's client calling a default yrpc
// server (grpcc/yrpc, the gRPC endpoint on the same port as yrpc's); and
// yrpc's own client on that server (native/yrpc, the same as the "yrpc"
// row) and on a server with gRPC off (native/yrpc-grpcoff).
func groupedYRPC() (feed, echo, others []*Impl) {
	label := "yrpc " + moduleVersion("github.com/yrpc/yrpc")
	return []*Impl{{Name: "feed/yrpc", Label: label + " server stream", Serve: serveYRPCStreams, Dial: dialYRPCFeed}},
		[]*Impl{{Name: "echo/yrpc", Label: label + " bidi stream", Serve: serveYRPCStreams, Dial: dialYRPCEcho}},
		[]*Impl{
			{Name: "grpcc/yrpc", Label: "gRPC-Go " + moduleVersion("google.golang.org/grpc") + " client → " + label + " (gRPC on the yrpc port)",
				Serve: serveYRPC, Dial: dialGRPC},
			{Name: "native/yrpc", Label: label + " (gRPC on the same port)", Serve: serveYRPC, Dial: dialYRPC},
			{Name: "native/yrpc-grpcoff", Label: label + " + WithGRPC(GRPCOff)", Serve: serveYRPCGRPCOff, Dial: dialYRPC},
		}
}

// serveYRPCGRPCOff serves Hello with the gRPC endpoint off.
func serveYRPCGRPCOff(ctx context.Context, lis net.Listener, cfg *tls.Config) error {
	return serveYRPCWith(ctx, lis, cfg, rt.WithGRPC(rt.GRPCOff))
}

type yrpcStreams struct {
	streamrpc.UnimplementedStreamsServer
	reply *streamrpc.BenchmarkMessage
}

func (y yrpcStreams) Feed(req *streamrpc.BenchmarkMessage, s rt.ServerStreamingServer[streamrpc.BenchmarkMessage]) error {
	return feedServe(req.Field22, y.reply, s.Send)
}

func (yrpcStreams) Echo(s rt.BidiStreamingServer[streamrpc.BenchmarkMessage, streamrpc.BenchmarkMessage]) error {
	return echoServe(s.Recv, s.Send, func(m *streamrpc.BenchmarkMessage) *streamrpc.BenchmarkMessage {
		m.Field1 = workload.ReplyField1
		m.Field2 = workload.ReplyField2
		return m
	})
}

// The stream rows use streamrpc's BenchmarkMessage, generated from the
// same fields as hellorpc's: the two convert into each other.

func newYRPCStreamRequest() *streamrpc.BenchmarkMessage {
	return (*streamrpc.BenchmarkMessage)(newYRPCRequest())
}

func checkYRPCStream(m *streamrpc.BenchmarkMessage) error {
	return checkYRPC((*hellorpc.BenchmarkMessage)(m))
}

func serveYRPCStreams(ctx context.Context, lis net.Listener, _ *tls.Config) error {
	reply := newYRPCStreamRequest()
	reply.Field1 = workload.ReplyField1
	reply.Field2 = workload.ReplyField2
	srv := rt.NewServer()
	streamrpc.RegisterStreams(srv, yrpcStreams{reply: reply})
	return serveYRPCServer(ctx, srv, lis)
}

func dialYRPCStreams(addr string) (*rt.Client, *streamrpc.StreamsClient, error) {
	cli, err := rt.NewClient(rt.WithAddrs(addr))
	if err != nil {
		return nil, nil, err
	}
	return cli, streamrpc.NewStreamsClient(cli), nil
}

func dialYRPCFeed(_ context.Context, addr string, _ int, _ *tls.Config) (harness.Client, error) {
	cli, sc, err := dialYRPCStreams(addr)
	if err != nil {
		return nil, err
	}
	return &feedClient[streamrpc.BenchmarkMessage]{
		open: func(ctx context.Context, _ int, n int64) (recver[streamrpc.BenchmarkMessage], error) {
			req := newYRPCStreamRequest()
			req.Field22 = n
			return sc.Feed(ctx, req)
		},
		check: checkYRPCStream,
		close: cli.Close,
	}, nil
}

func dialYRPCEcho(_ context.Context, addr string, c int, _ *tls.Config) (harness.Client, error) {
	cli, sc, err := dialYRPCStreams(addr)
	if err != nil {
		return nil, err
	}
	reqs := make([]*streamrpc.BenchmarkMessage, max(c, 1))
	for i := range reqs {
		reqs[i] = newYRPCStreamRequest()
	}
	return dialEcho(c, reqs, checkYRPCStream, func(ctx context.Context, _ int) (bidi[streamrpc.BenchmarkMessage], error) {
		return sc.Echo(ctx)
	}, cli.Close)
}

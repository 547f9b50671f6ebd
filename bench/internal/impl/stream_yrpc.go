//go:build yrpc

package impl

import (
	"context"
	"fmt"
	"math"
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
				Serve: serveYRPC(yrpcConfig{}), Dial: dialGRPC},
			{Name: "native/yrpc", Label: label + " (gRPC on the same port)", Balanced: true,
				Serve: serveYRPC(yrpcConfig{}), Dial: dialYRPC(yrpcConfig{})},
			{Name: "native/yrpc-grpcoff", Label: label + " + WithGRPC(GRPCOff)", Balanced: true,
				Serve: serveYRPC(yrpcConfig{grpcOff: true}), Dial: dialYRPC(yrpcConfig{})},
		}
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

// yrpcStreamRequests returns the workers' requests (yrpcRequests).
func yrpcStreamRequests(o Options) ([]*streamrpc.BenchmarkMessage, error) {
	hreqs, err := yrpcRequests(o)
	if err != nil {
		return nil, err
	}
	reqs := make([]*streamrpc.BenchmarkMessage, len(hreqs))
	for i, r := range hreqs {
		reqs[i] = (*streamrpc.BenchmarkMessage)(r)
	}
	return reqs, nil
}

func checkYRPCStream(reply, req *streamrpc.BenchmarkMessage) error {
	return checkYRPC((*hellorpc.BenchmarkMessage)(reply), (*hellorpc.BenchmarkMessage)(req))
}

// serveYRPCStreams serves Streams; the feed sends the answer to a request
// of o.Size bytes.
func serveYRPCStreams(ctx context.Context, lis net.Listener, o Options) error {
	srv := rt.NewServer()
	if err := registerYRPCStreams(srv, o); err != nil {
		return err
	}
	return serveYRPCServer(ctx, srv, lis)
}

// registerYRPCStreams registers Streams with srv; the feed sends the
// answer to a request of o.Size bytes.
func registerYRPCStreams(srv *rt.Server, o Options) error {
	reqs, err := yrpcStreamRequests(Options{Size: o.Size})
	if err != nil {
		return err
	}
	reply := reqs[0]
	reply.Field1 = workload.ReplyField1
	reply.Field2 = workload.ReplyField2
	streamrpc.RegisterStreams(srv, yrpcStreams{reply: reply})
	return nil
}

// stalledFeed opens an endless feed on cli's connection and stops reading
// it after its first message: the server's sender then waits for credit
// with the stream's window (64 KiB) in flight, which the calls that share
// the connection must not feel (yrpc-stalled). Closing cli ends it.
func stalledFeed(cli *rt.Client, o Options) error {
	reqs, err := yrpcStreamRequests(Options{Size: o.Size})
	if err != nil {
		return err
	}
	reqs[0].Field22 = math.MaxInt64
	s, err := streamrpc.NewStreamsClient(cli).Feed(context.Background(), reqs[0])
	if err != nil {
		return fmt.Errorf("impl: yrpc-stalled: open the feed: %w", err)
	}
	if _, err := s.Recv(); err != nil {
		return fmt.Errorf("impl: yrpc-stalled: the feed's first message: %w", err)
	}
	return nil
}

// dialYRPCStreams prepares name's client: an rt.Client of addr and the
// workers' requests.
func dialYRPCStreams(name, addr string, o Options) (*rt.Client, *streamrpc.StreamsClient, []*streamrpc.BenchmarkMessage, error) {
	addr, err := oneAddr(name, addr)
	if err != nil {
		return nil, nil, nil, err
	}
	reqs, err := yrpcStreamRequests(o)
	if err != nil {
		return nil, nil, nil, err
	}
	cli, err := rt.NewClient(rt.WithAddrs(addr))
	if err != nil {
		return nil, nil, nil, err
	}
	return cli, streamrpc.NewStreamsClient(cli), reqs, nil
}

func dialYRPCFeed(_ context.Context, addr string, o Options) (harness.Client, error) {
	cli, sc, reqs, err := dialYRPCStreams("feed/yrpc", addr, o)
	if err != nil {
		return nil, err
	}
	return &feedClient[streamrpc.BenchmarkMessage]{
		reqs: reqs,
		open: func(ctx context.Context, w int, n int64) (recver[streamrpc.BenchmarkMessage], error) {
			reqs[w].Field22 = n
			return sc.Feed(ctx, reqs[w])
		},
		check: checkYRPCStream,
		close: cli.Close,
	}, nil
}

func dialYRPCEcho(_ context.Context, addr string, o Options) (harness.Client, error) {
	cli, sc, reqs, err := dialYRPCStreams("echo/yrpc", addr, o)
	if err != nil {
		return nil, err
	}
	return dialEcho(reqs, checkYRPCStream, func(ctx context.Context, _ int) (bidi[streamrpc.BenchmarkMessage], error) {
		return sc.Echo(ctx)
	}, cli.Close)
}

package impl

import (
	"context"
	"crypto/tls"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"storj.io/drpc/drpcconn"
	"storj.io/drpc/drpcmux"
	"storj.io/drpc/drpcserver"

	"github.com/yrpc/yrpc/bench/benchpb"
	"github.com/yrpc/yrpc/bench/internal/harness"
	"github.com/yrpc/yrpc/bench/internal/workload"
)

// The peers' stream rows: gRPC-Go with every stream on one ClientConn,
// drpc with a connection per stream (a drpc connection carries one stream
// at a time).

func grpcFeedImpl() *Impl {
	return &Impl{Name: "feed/grpc", Label: "gRPC-Go " + moduleVersion("google.golang.org/grpc") + " server stream",
		Serve: serveGRPCStreams, Dial: dialGRPCFeed}
}

func grpcEchoImpl() *Impl {
	return &Impl{Name: "echo/grpc", Label: "gRPC-Go " + moduleVersion("google.golang.org/grpc") + " bidi stream",
		Serve: serveGRPCStreams, Dial: dialGRPCEcho}
}

func drpcFeedImpl() *Impl {
	return &Impl{Name: "feed/drpc", Label: "drpc " + moduleVersion("storj.io/drpc") + " server stream",
		Serve: serveDRPCStreams, Dial: dialDRPCFeed}
}

func drpcEchoImpl() *Impl {
	return &Impl{Name: "echo/drpc", Label: "drpc " + moduleVersion("storj.io/drpc") + " bidi stream",
		Serve: serveDRPCStreams, Dial: dialDRPCEcho}
}

// benchReply is the message the feed servers send: the benchmark reply,
// built once per server and only read.
func benchReply() *benchpb.BenchmarkMessage { return workload.Answer(workload.NewRequest()) }

// feedRequest asks for n messages in field22.
func feedRequest(n int64) *benchpb.BenchmarkMessage {
	req := workload.NewRequest()
	req.Field22 = n
	return req
}

type grpcStreams struct {
	benchpb.UnimplementedStreamsServer
	reply *benchpb.BenchmarkMessage
}

func (g grpcStreams) Feed(req *benchpb.BenchmarkMessage, s grpc.ServerStreamingServer[benchpb.BenchmarkMessage]) error {
	return feedServe(req.Field22, g.reply, s.Send)
}

func (grpcStreams) Echo(s grpc.BidiStreamingServer[benchpb.BenchmarkMessage, benchpb.BenchmarkMessage]) error {
	return echoServe(s.Recv, s.Send, workload.Answer)
}

func serveGRPCStreams(ctx context.Context, lis net.Listener, _ *tls.Config) error {
	s := grpc.NewServer()
	benchpb.RegisterStreamsServer(s, grpcStreams{reply: benchReply()})
	return serveUntil(ctx, func() error { return s.Serve(lis) }, s.Stop)
}

func dialGRPCStreams(addr string) (*grpc.ClientConn, benchpb.StreamsClient, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, nil, err
	}
	return conn, benchpb.NewStreamsClient(conn), nil
}

func dialGRPCFeed(_ context.Context, addr string, _ int, _ *tls.Config) (harness.Client, error) {
	conn, sc, err := dialGRPCStreams(addr)
	if err != nil {
		return nil, err
	}
	return &feedClient[benchpb.BenchmarkMessage]{
		open: func(ctx context.Context, _ int, n int64) (recver[benchpb.BenchmarkMessage], error) {
			return sc.Feed(ctx, feedRequest(n))
		},
		check: workload.Check,
		close: conn.Close,
	}, nil
}

func dialGRPCEcho(_ context.Context, addr string, c int, _ *tls.Config) (harness.Client, error) {
	conn, sc, err := dialGRPCStreams(addr)
	if err != nil {
		return nil, err
	}
	return dialEcho(c, requests(c), workload.Check, func(ctx context.Context, _ int) (bidi[benchpb.BenchmarkMessage], error) {
		return sc.Echo(ctx)
	}, conn.Close)
}

type drpcStreams struct {
	benchpb.DRPCStreamsUnimplementedServer
	reply *benchpb.BenchmarkMessage
}

func (d *drpcStreams) Feed(req *benchpb.BenchmarkMessage, s benchpb.DRPCStreams_FeedStream) error {
	return feedServe(req.Field22, d.reply, s.Send)
}

func (*drpcStreams) Echo(s benchpb.DRPCStreams_EchoStream) error {
	return echoServe(s.Recv, s.Send, workload.Answer)
}

func serveDRPCStreams(ctx context.Context, lis net.Listener, _ *tls.Config) error {
	mux := drpcmux.New()
	if err := benchpb.DRPCRegisterStreams(mux, &drpcStreams{reply: benchReply()}); err != nil {
		return err
	}
	return drpcserver.New(mux).Serve(ctx, lis)
}

// dialDRPCConns dials a drpc connection per worker.
func dialDRPCConns(ctx context.Context, addr string, c int) ([]*drpcconn.Conn, error) {
	var conns []*drpcconn.Conn
	var dialer net.Dialer
	for range max(c, 1) {
		raw, err := dialer.DialContext(ctx, "tcp", addr)
		if err != nil {
			_ = closeAll(conns)
			return nil, err
		}
		conns = append(conns, drpcconn.New(raw))
	}
	return conns, nil
}

func dialDRPCFeed(ctx context.Context, addr string, c int, _ *tls.Config) (harness.Client, error) {
	conns, err := dialDRPCConns(ctx, addr, c)
	if err != nil {
		return nil, err
	}
	return &feedClient[benchpb.BenchmarkMessage]{
		open: func(ctx context.Context, w int, n int64) (recver[benchpb.BenchmarkMessage], error) {
			return benchpb.NewDRPCStreamsClient(conns[w]).Feed(ctx, feedRequest(n))
		},
		check: workload.Check,
		close: func() error { return closeAll(conns) },
	}, nil
}

func dialDRPCEcho(ctx context.Context, addr string, c int, _ *tls.Config) (harness.Client, error) {
	conns, err := dialDRPCConns(ctx, addr, c)
	if err != nil {
		return nil, err
	}
	return dialEcho(c, requests(c), workload.Check, func(ctx context.Context, w int) (bidi[benchpb.BenchmarkMessage], error) {
		return benchpb.NewDRPCStreamsClient(conns[w]).Echo(ctx)
	}, func() error { return closeAll(conns) })
}

package impl

import (
	"context"
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
	return &Impl{Name: "feed/drpc", Label: "drpc " + moduleVersion("storj.io/drpc") + " server stream", ConnPerWorker: true,
		Serve: serveDRPCStreams, Dial: dialDRPCFeed}
}

func drpcEchoImpl() *Impl {
	return &Impl{Name: "echo/drpc", Label: "drpc " + moduleVersion("storj.io/drpc") + " bidi stream", ConnPerWorker: true,
		Serve: serveDRPCStreams, Dial: dialDRPCEcho}
}

// The feed streams' requests are the workers' requests of a call, with
// the number of messages asked for in field22.

// feedReply is the message the feed servers send: the answer to a request
// of o.Size bytes, built once per server and only read.
func feedReply(o Options) (*benchpb.BenchmarkMessage, error) {
	m, err := workload.NewSized(o.Size)
	if err != nil {
		return nil, err
	}
	return workload.Answer(m), nil
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

func serveGRPCStreams(ctx context.Context, lis net.Listener, o Options) error {
	reply, err := feedReply(o)
	if err != nil {
		return err
	}
	s := grpc.NewServer()
	benchpb.RegisterStreamsServer(s, grpcStreams{reply: reply})
	return serveUntil(ctx, func() error { return s.Serve(lis) }, s.Stop)
}

// dialGRPCStreams prepares name's client: one ClientConn to addr and the
// workers' requests.
func dialGRPCStreams(name, addr string, o Options) (*grpc.ClientConn, benchpb.StreamsClient, []*benchpb.BenchmarkMessage, error) {
	addr, reqs, err := prepare(name, addr, o)
	if err != nil {
		return nil, nil, nil, err
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, nil, nil, err
	}
	return conn, benchpb.NewStreamsClient(conn), reqs, nil
}

func dialGRPCFeed(_ context.Context, addr string, o Options) (harness.Client, error) {
	conn, sc, reqs, err := dialGRPCStreams("feed/grpc", addr, o)
	if err != nil {
		return nil, err
	}
	return &feedClient[benchpb.BenchmarkMessage]{
		reqs: reqs,
		open: func(ctx context.Context, w int, n int64) (recver[benchpb.BenchmarkMessage], error) {
			reqs[w].Field22 = n
			return sc.Feed(ctx, reqs[w])
		},
		check: workload.Check,
		close: conn.Close,
	}, nil
}

func dialGRPCEcho(_ context.Context, addr string, o Options) (harness.Client, error) {
	conn, sc, reqs, err := dialGRPCStreams("echo/grpc", addr, o)
	if err != nil {
		return nil, err
	}
	return dialEcho(reqs, workload.Check, func(ctx context.Context, _ int) (bidi[benchpb.BenchmarkMessage], error) {
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

func serveDRPCStreams(ctx context.Context, lis net.Listener, o Options) error {
	reply, err := feedReply(o)
	if err != nil {
		return err
	}
	mux := drpcmux.New()
	if err := benchpb.DRPCRegisterStreams(mux, &drpcStreams{reply: reply}); err != nil {
		return err
	}
	return drpcserver.New(mux).Serve(ctx, lis)
}

// dialDRPCConns dials n drpc connections to addr, one per worker.
func dialDRPCConns(ctx context.Context, addr string, n int) ([]*drpcconn.Conn, error) {
	var conns []*drpcconn.Conn
	var dialer net.Dialer
	for range n {
		raw, err := dialer.DialContext(ctx, "tcp", addr)
		if err != nil {
			_ = closeAll(conns)
			return nil, err
		}
		conns = append(conns, drpcconn.New(raw))
	}
	return conns, nil
}

// dialDRPCStreams prepares name's client: a connection per worker to addr
// and the workers' requests.
func dialDRPCStreams(ctx context.Context, name, addr string, o Options) ([]*drpcconn.Conn, []*benchpb.BenchmarkMessage, error) {
	addr, reqs, err := prepare(name, addr, o)
	if err != nil {
		return nil, nil, err
	}
	conns, err := dialDRPCConns(ctx, addr, len(reqs))
	return conns, reqs, err
}

func dialDRPCFeed(ctx context.Context, addr string, o Options) (harness.Client, error) {
	conns, reqs, err := dialDRPCStreams(ctx, "feed/drpc", addr, o)
	if err != nil {
		return nil, err
	}
	return &feedClient[benchpb.BenchmarkMessage]{
		reqs: reqs,
		open: func(ctx context.Context, w int, n int64) (recver[benchpb.BenchmarkMessage], error) {
			reqs[w].Field22 = n
			return benchpb.NewDRPCStreamsClient(conns[w]).Feed(ctx, reqs[w])
		},
		check: workload.Check,
		close: func() error { return closeAll(conns) },
	}, nil
}

func dialDRPCEcho(ctx context.Context, addr string, o Options) (harness.Client, error) {
	conns, reqs, err := dialDRPCStreams(ctx, "echo/drpc", addr, o)
	if err != nil {
		return nil, err
	}
	return dialEcho(reqs, workload.Check, func(ctx context.Context, w int) (bidi[benchpb.BenchmarkMessage], error) {
		return benchpb.NewDRPCStreamsClient(conns[w]).Echo(ctx)
	}, func() error { return closeAll(conns) })
}

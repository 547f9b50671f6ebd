package impl

import (
	"context"
	"net"

	"storj.io/drpc/drpcconn"
	"storj.io/drpc/drpcmux"
	"storj.io/drpc/drpcserver"

	"github.com/yrpc/yrpc/bench/benchpb"
	"github.com/yrpc/yrpc/bench/internal/harness"
	"github.com/yrpc/yrpc/bench/internal/workload"
)

func drpcImpl() *Impl {
	return &Impl{
		Name:  "drpc",
		Label: "drpc " + moduleVersion("storj.io/drpc"),
		Serve: serveDRPC,
		Dial:  dialDRPC,
		// A drpc connection carries one call at a time.
		ConnPerWorker: true,
	}
}

type drpcHello struct{}

func (drpcHello) Say(_ context.Context, req *benchpb.BenchmarkMessage) (*benchpb.BenchmarkMessage, error) {
	return workload.Answer(req), nil
}

func serveDRPC(ctx context.Context, lis net.Listener, _ Options) error {
	mux := drpcmux.New()
	if err := benchpb.DRPCRegisterHello(mux, drpcHello{}); err != nil {
		return err
	}
	// Serve returns nil once ctx ends, after closing lis.
	return drpcserver.New(mux).Serve(ctx, lis)
}

// drpcClient has a connection per worker: a drpc connection carries one
// call at a time.
type drpcClient struct {
	conns []*drpcconn.Conn
	hcs   []benchpb.DRPCHelloClient
	reqs  []*benchpb.BenchmarkMessage
}

func dialDRPC(ctx context.Context, addr string, o Options) (harness.Client, error) {
	addr, reqs, err := prepare("drpc", addr, o)
	if err != nil {
		return nil, err
	}
	conns, err := dialDRPCConns(ctx, addr, len(reqs))
	if err != nil {
		return nil, err
	}
	d := &drpcClient{conns: conns, reqs: reqs}
	for _, conn := range conns {
		d.hcs = append(d.hcs, benchpb.NewDRPCHelloClient(conn))
	}
	return d, nil
}

func (d *drpcClient) Call(ctx context.Context, w int) error {
	resp, err := d.hcs[w].Say(ctx, d.reqs[w])
	if err != nil {
		return err
	}
	return workload.Check(resp, d.reqs[w])
}

func (d *drpcClient) Close() error { return closeAll(d.conns) }

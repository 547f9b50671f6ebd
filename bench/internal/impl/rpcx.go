package impl

import (
	"context"
	"net"

	"github.com/smallnest/rpcx/client"
	"github.com/smallnest/rpcx/protocol"
	"github.com/smallnest/rpcx/server"

	"github.com/yrpc/yrpc/bench/benchpb"
	"github.com/yrpc/yrpc/bench/internal/harness"
	"github.com/yrpc/yrpc/bench/internal/workload"
)

func rpcxImpl() *Impl {
	return &Impl{
		Name:  "rpcx",
		Label: "rpcx " + moduleVersion("github.com/smallnest/rpcx"),
		Serve: serveRPCX,
		Dial:  dialRPCX,
	}
}

// RPCXHello is the rpcx service; rpcx finds Say by reflection, so the type
// and the method are exported.
type RPCXHello struct{}

// Say answers the workload.
func (RPCXHello) Say(_ context.Context, req, reply *benchpb.BenchmarkMessage) error {
	workload.Copy(reply, workload.Answer(req))
	return nil
}

func serveRPCX(ctx context.Context, lis net.Listener, _ Options) error {
	s := server.NewServer()
	if err := s.RegisterName("Hello", RPCXHello{}, ""); err != nil {
		return err
	}
	return serveUntil(ctx, func() error { return s.ServeListener("tcp", lis) }, func() { _ = s.Close() })
}

type rpcxClient struct {
	xc   client.XClient
	reqs []*benchpb.BenchmarkMessage
}

func dialRPCX(_ context.Context, addr string, o Options) (harness.Client, error) {
	addr, reqs, err := prepare("rpcx", addr, o)
	if err != nil {
		return nil, err
	}
	d, err := client.NewPeer2PeerDiscovery("tcp@"+addr, "")
	if err != nil {
		return nil, err
	}
	opt := client.DefaultOption
	opt.SerializeType = protocol.ProtoBuffer
	xc := client.NewXClient("Hello", client.Failtry, client.RandomSelect, d, opt)
	return &rpcxClient{xc: xc, reqs: reqs}, nil
}

func (r *rpcxClient) Call(ctx context.Context, w int) error {
	resp := new(benchpb.BenchmarkMessage)
	if err := r.xc.Call(ctx, "Say", r.reqs[w], resp); err != nil {
		return err
	}
	return workload.Check(resp, r.reqs[w])
}

func (r *rpcxClient) Close() error { return r.xc.Close() }

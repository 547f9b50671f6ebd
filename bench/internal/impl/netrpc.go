package impl

import (
	"context"
	"net"
	"net/rpc"
	"runtime"
	"strings"

	"github.com/yrpc/yrpc/bench/benchpb"
	"github.com/yrpc/yrpc/bench/internal/harness"
	"github.com/yrpc/yrpc/bench/internal/workload"
)

func netrpcImpl() *Impl {
	return &Impl{
		Name:  "netrpc",
		Label: "net/rpc " + strings.TrimPrefix(runtime.Version(), "go"),
		Serve: serveNetRPC,
		Dial:  dialNetRPC,
	}
}

// NetRPCHello is the net/rpc service; net/rpc finds Say by reflection, so
// the type and the method are exported.
type NetRPCHello struct{}

// Say answers the workload.
func (NetRPCHello) Say(req, reply *benchpb.BenchmarkMessage) error {
	workload.Copy(reply, workload.Answer(req))
	return nil
}

func serveNetRPC(ctx context.Context, lis net.Listener, _ Options) error {
	s := rpc.NewServer()
	if err := s.RegisterName("Hello", NetRPCHello{}); err != nil {
		return err
	}
	// serveTCP is rpc.Server.Accept without its log line on close.
	return serveTCP(ctx, lis, func(c net.Conn) { s.ServeConn(c) })
}

type netrpcClient struct {
	c    *rpc.Client
	reqs []*benchpb.BenchmarkMessage
}

func dialNetRPC(_ context.Context, addr string, o Options) (harness.Client, error) {
	addr, reqs, err := prepare("netrpc", addr, o)
	if err != nil {
		return nil, err
	}
	cl, err := rpc.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &netrpcClient{c: cl, reqs: reqs}, nil
}

// Call uses rpc.Client.Call, which has no context: the way net/rpc is used.
func (n *netrpcClient) Call(_ context.Context, w int) error {
	resp := new(benchpb.BenchmarkMessage)
	if err := n.c.Call("Hello.Say", n.reqs[w], resp); err != nil {
		return err
	}
	return workload.Check(resp, n.reqs[w])
}

func (n *netrpcClient) Close() error { return n.c.Close() }

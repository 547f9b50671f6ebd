//go:build yrpc

package impl

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/yrpc/yrpc/bench/benchpb"
	"github.com/yrpc/yrpc/examples/hello/hellorpc"
	"github.com/yrpc/yrpc/rt"
)

// TestYRPCClientCallsGRPCGo: yrpc's generated Hello client, on an
// rt.Client given a grpc:// address, calls gRPC-Go's server of the same
// service (bench.Hello/Say): the answer decodes, a deadline already spent
// is DeadlineExceeded, and a method gRPC-Go does not serve is its
// Unimplemented.
func TestYRPCClientCallsGRPCGo(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	benchpb.RegisterHelloServer(s, grpcHello{})
	go s.Serve(lis)
	defer s.Stop()
	cli, err := rt.NewClient(rt.WithAddrs("grpc://" + lis.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reqs, err := yrpcRequests(Options{})
	if err != nil {
		t.Fatal(err)
	}
	req := reqs[0]
	resp, err := hellorpc.NewHelloClient(cli).Say(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkYRPC(resp, req); err != nil {
		t.Error(err)
	}
	_, err = hellorpc.NewHelloClient(cli).Say(ctx, req, rt.WithCallTimeout(time.Nanosecond))
	if rt.CodeOf(err) != rt.DeadlineExceeded {
		t.Errorf("spent deadline: %v", err)
	}
	nope := hellorpc.HelloServiceDesc
	nope.Methods = append([]rt.MethodDesc(nil), nope.Methods...)
	nope.Methods[0].FullName = "bench.Hello/Nope"
	if err := cli.Invoke(ctx, &nope, 0, req, new(hellorpc.BenchmarkMessage)); rt.CodeOf(err) != rt.Unimplemented || !rt.IsRemote(err) {
		t.Errorf("unknown method: %v", err)
	}
}

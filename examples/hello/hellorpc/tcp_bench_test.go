package hellorpc_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/yrpc/yrpc/examples/hello/hellorpc"
	"github.com/yrpc/yrpc/rt"
)

type benchHello struct {
	hellorpc.UnimplementedHelloServer
}

func (benchHello) Say(_ context.Context, req *hellorpc.BenchmarkMessage) (*hellorpc.BenchmarkMessage, error) {
	req.Field1, req.Field2 = "OK", 100
	return req, nil
}

func tcpEnv(b testing.TB) (*hellorpc.HelloClient, func()) {
	srv := rt.NewServer()
	hellorpc.RegisterHello(srv, benchHello{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(context.Background(), lis)
	cli, err := rt.NewClient(rt.WithAddrs(lis.Addr().String()))
	if err != nil {
		b.Fatal(err)
	}
	return hellorpc.NewHelloClient(cli), func() { cli.Close(); srv.Close() }
}

func BenchmarkSayTCP(b *testing.B) {
	hc, stop := tcpEnv(b)
	defer stop()
	var req hellorpc.BenchmarkMessage
	fill(&req)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := hc.Say(ctx, &req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSayTCPParallel(b *testing.B) {
	hc, stop := tcpEnv(b)
	defer stop()
	b.SetParallelism(32)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var req hellorpc.BenchmarkMessage
		fill(&req)
		ctx := context.Background()
		for pb.Next() {
			if _, err := hc.Say(ctx, &req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkSayTCPCancelCtx(b *testing.B) {
	hc, stop := tcpEnv(b)
	defer stop()
	var req hellorpc.BenchmarkMessage
	fill(&req)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := hc.Say(ctx, &req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSayTCPTimeoutCtx gives each call its own context, as
// ctx, cancel := context.WithTimeout(parent, d); defer cancel() does.
func BenchmarkSayTCPTimeoutCtx(b *testing.B) {
	hc, stop := tcpEnv(b)
	defer stop()
	var req hellorpc.BenchmarkMessage
	fill(&req)
	b.ReportAllocs()
	for b.Loop() {
		if err := sayWithin(hc, &req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSayTCPTimeoutCtxParallel(b *testing.B) {
	hc, stop := tcpEnv(b)
	defer stop()
	b.SetParallelism(32)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var req hellorpc.BenchmarkMessage
		fill(&req)
		for pb.Next() {
			if err := sayWithin(hc, &req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func sayWithin(hc *hellorpc.HelloClient, req *hellorpc.BenchmarkMessage) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := hc.Say(ctx, req)
	return err
}

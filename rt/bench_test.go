package rt_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/rt"
)

func benchEnv(b *testing.B) (*rt.Client, func()) {
	srv := rt.NewServer()
	srv.RegisterService(&testDesc, newTestImpl())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(context.Background(), lis)
	cli, err := rt.NewClient(rt.WithAddrs(lis.Addr().String()))
	if err != nil {
		b.Fatal(err)
	}
	return cli, func() { cli.Close(); srv.Close() }
}

// BenchmarkUnary measures one call at a time over loopback TCP, client and
// server in this process, with a 581-byte body.
func BenchmarkUnary(b *testing.B) {
	cli, stop := benchEnv(b)
	defer stop()
	req, resp := &msg{S: strings.Repeat("x", 581)}, new(msg)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := cli.Invoke(ctx, &testDesc, 0, req, resp); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnaryOwned is BenchmarkUnary with messages that decode as
// generated ones do (they implement rt.OwnedUnmarshaler), and a handler
// that answers with its request.
func BenchmarkUnaryOwned(b *testing.B) {
	cli := aliasEnv(b, nil)
	req, resp := &aliasMsg{S: strings.Repeat("x", 581)}, new(aliasMsg)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := cli.Invoke(ctx, &aliasDesc, 0, req, resp); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnaryParallel measures many concurrent callers sharing a client.
func BenchmarkUnaryParallel(b *testing.B) {
	cli, stop := benchEnv(b)
	defer stop()
	b.SetParallelism(32)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req, resp := &msg{S: strings.Repeat("x", 581)}, new(msg)
		ctx := context.Background()
		for pb.Next() {
			if err := cli.Invoke(ctx, &testDesc, 0, req, resp); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkUnaryOwnedParallel is BenchmarkUnaryParallel with the messages
// of BenchmarkUnaryOwned.
func BenchmarkUnaryOwnedParallel(b *testing.B) {
	unaryOwnedParallel(b, context.Background())
}

// BenchmarkUnaryOwnedParallelSharedContext is BenchmarkUnaryOwnedParallel
// with one cancelable context for every caller, as a worker pool under
// signal.NotifyContext has: it should cost no more than
// context.Background (see ctxWatch in rt/internal/conn).
func BenchmarkUnaryOwnedParallelSharedContext(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	unaryOwnedParallel(b, ctx)
}

// unaryOwnedParallel runs 32 callers per processor with ctx, each calling
// with the messages of BenchmarkUnaryOwned.
func unaryOwnedParallel(b *testing.B, ctx context.Context) {
	cli := aliasEnv(b, nil)
	b.SetParallelism(32)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req, resp := &aliasMsg{S: strings.Repeat("x", 581)}, new(aliasMsg)
		for pb.Next() {
			if err := cli.Invoke(ctx, &aliasDesc, 0, req, resp); err != nil {
				b.Fatal(err)
			}
		}
	})
}

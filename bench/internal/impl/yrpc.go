//go:build yrpc

package impl

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/yrpc/yrpc/examples/hello/hellorpc"
	"github.com/yrpc/yrpc/rt"

	"github.com/yrpc/yrpc/bench/internal/harness"
	"github.com/yrpc/yrpc/bench/internal/workload"
)

// extra returns the yrpc adapters, built with the "yrpc" tag: plaintext
// with the default options, plaintext with rt.WithRequestReuse(true) on
// the server (yrpc-reuse), plaintext with the client decoding into a
// response message of each worker's, reused call after call, through the
// generated SayInto (yrpc-into), and over TLS (rt.WithTLS on both sides).
func extra() (plain, secure []*Impl) {
	label := "yrpc " + moduleVersion("github.com/yrpc/yrpc")
	return []*Impl{
			{Name: "yrpc", Label: label, Serve: serveYRPC, Dial: dialYRPC},
			{Name: "yrpc-reuse", Label: label + " + WithRequestReuse", Serve: serveYRPCReuse, Dial: dialYRPC},
			{Name: "yrpc-into", Label: label + " + SayInto", Serve: serveYRPC, Dial: dialYRPCInto},
		},
		[]*Impl{{Name: "yrpc-tls", Label: label + " + TLS", TLS: true, Serve: serveYRPC, Dial: dialYRPC}}
}

type yrpcHello struct {
	hellorpc.UnimplementedHelloServer
}

func (yrpcHello) Say(_ context.Context, req *hellorpc.BenchmarkMessage) (*hellorpc.BenchmarkMessage, error) {
	req.Field1 = workload.ReplyField1
	req.Field2 = workload.ReplyField2
	return req, nil
}

// yrpcShutdown bounds the graceful shutdown once the harness is done.
const yrpcShutdown = 5 * time.Second

func serveYRPC(ctx context.Context, lis net.Listener, cfg *tls.Config) error {
	return serveYRPCWith(ctx, lis, cfg)
}

// serveYRPCReuse serves with request messages reused: the handler, which
// answers with its request, keeps nothing of it.
func serveYRPCReuse(ctx context.Context, lis net.Listener, cfg *tls.Config) error {
	return serveYRPCWith(ctx, lis, cfg, rt.WithRequestReuse(true))
}

func serveYRPCWith(ctx context.Context, lis net.Listener, cfg *tls.Config, opts ...rt.ServerOption) error {
	if cfg != nil {
		opts = append(opts, rt.WithTLS(cfg))
	}
	srv := rt.NewServer(opts...)
	hellorpc.RegisterHello(srv, yrpcHello{})
	return serveYRPCServer(ctx, srv, lis)
}

// serveYRPCServer serves srv on lis until ctx ends, then shuts it down.
func serveYRPCServer(ctx context.Context, srv *rt.Server, lis net.Listener) error {
	return serveUntil(ctx, func() error { return srv.Serve(context.WithoutCancel(ctx), lis) }, func() {
		sctx, cancel := context.WithTimeout(context.Background(), yrpcShutdown)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close()
		}
	})
}

type yrpcClient struct {
	cli  *rt.Client
	hc   *hellorpc.HelloClient
	reqs []*hellorpc.BenchmarkMessage
	// resps are the workers' responses for SayInto; nil: Say allocates
	// each call's.
	resps []*hellorpc.BenchmarkMessage
}

func dialYRPC(ctx context.Context, addr string, c int, cfg *tls.Config) (harness.Client, error) {
	return dialYRPCWith(ctx, addr, c, cfg, false)
}

// dialYRPCInto dials a client whose calls decode into a response of each
// worker's (SayInto).
func dialYRPCInto(ctx context.Context, addr string, c int, cfg *tls.Config) (harness.Client, error) {
	return dialYRPCWith(ctx, addr, c, cfg, true)
}

func dialYRPCWith(_ context.Context, addr string, c int, cfg *tls.Config, into bool) (harness.Client, error) {
	opts := []rt.ClientOption{rt.WithAddrs(addr)}
	if cfg != nil {
		opts = append(opts, rt.WithTLS(cfg))
	}
	cli, err := rt.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	y := &yrpcClient{cli: cli, hc: hellorpc.NewHelloClient(cli)}
	for range max(c, 1) {
		y.reqs = append(y.reqs, newYRPCRequest())
		if into {
			y.resps = append(y.resps, new(hellorpc.BenchmarkMessage))
		}
	}
	return y, nil
}

func (y *yrpcClient) Call(ctx context.Context, w int) error {
	if y.resps != nil {
		resp := y.resps[w]
		if err := y.hc.SayInto(ctx, y.reqs[w], resp); err != nil {
			return err
		}
		return checkYRPC(resp)
	}
	resp, err := y.hc.Say(ctx, y.reqs[w])
	if err != nil {
		return err
	}
	return checkYRPC(resp)
}

func (y *yrpcClient) Close() error { return y.cli.Close() }

// newYRPCRequest fills a request as workload.Fill does for benchpb.
func newYRPCRequest() *hellorpc.BenchmarkMessage {
	m := new(hellorpc.BenchmarkMessage)
	m.Field1 = workload.Text
	m.Field9 = workload.Text
	m.Field18 = workload.Text
	m.Field80 = true
	m.Field81 = true
	m.Field2 = workload.Int
	m.Field3 = workload.Int
	m.Field280 = workload.Int
	m.Field6 = workload.Int
	m.Field22 = workload.Int
	m.Field4 = workload.Text
	m.Field59 = true
	m.Field7 = workload.Text
	m.Field16 = workload.Int
	m.Field130 = workload.Int
	m.Field12 = true
	m.Field17 = true
	m.Field13 = true
	m.Field14 = true
	m.Field104 = workload.Int
	m.Field100 = workload.Int
	m.Field101 = workload.Int
	m.Field102 = workload.Text
	m.Field103 = workload.Text
	m.Field29 = workload.Int
	m.Field30 = true
	m.Field60 = workload.Int
	m.Field271 = workload.Int
	m.Field272 = workload.Int
	m.Field150 = workload.Int
	m.Field23 = workload.Int
	m.Field24 = true
	m.Field25 = workload.Int
	m.Field78 = true
	m.Field67 = workload.Int
	m.Field68 = workload.Int
	m.Field128 = workload.Int
	m.Field129 = workload.Text
	m.Field131 = workload.Int
	return m
}

// checkYRPC checks a reply as workload.Check does for benchpb.
func checkYRPC(m *hellorpc.BenchmarkMessage) error {
	if m.Field1 != workload.ReplyField1 || m.Field2 != workload.ReplyField2 {
		return fmt.Errorf("impl: bad yrpc reply: field1=%q field2=%d", m.Field1, m.Field2)
	}
	if m.Field9 != workload.Text || m.Field129 != workload.Text || m.Field131 != workload.Int || !m.Field80 {
		return errors.New("impl: bad yrpc reply: untouched fields changed")
	}
	return nil
}

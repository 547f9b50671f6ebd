//go:build yrpc

package impl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/yrpc/yrpc/examples/hello/hellorpc"
	"github.com/yrpc/yrpc/rt"

	"github.com/yrpc/yrpc/bench/internal/harness"
	"github.com/yrpc/yrpc/bench/internal/workload"
)

// extra returns the yrpc adapters, built with the "yrpc" tag: plaintext
// with the default options; plaintext with rt.WithRequestReuse(true) on
// the server (yrpc-reuse); plaintext with the client decoding into a
// response message of each worker's, reused call after call, through the
// generated SayInto (yrpc-into); plaintext with lz4 compression, without
// the spin-wait of lone calls (rt.WithSpinWait(0) on both sides), and
// beside a stalled stream (yrpc-stalled: the calls share their connection
// with a server stream whose client stopped reading, issue 14's flow
// control test), Extra variants run when named; and over TLS (rt.WithTLS
// on both sides).
func extra() (plain, secure []*Impl) {
	label := "yrpc " + moduleVersion("github.com/yrpc/yrpc")
	lz4 := yrpcConfig{compress: yrpcLZ4Threshold}
	return []*Impl{
			{Name: "yrpc", Label: label, Balanced: true, Serve: serveYRPC(yrpcConfig{}), Dial: dialYRPC(yrpcConfig{})},
			{Name: "yrpc-reuse", Label: label + " + WithRequestReuse", Balanced: true,
				Serve: serveYRPC(yrpcConfig{reuse: true}), Dial: dialYRPC(yrpcConfig{})},
			{Name: "yrpc-into", Label: label + " + SayInto", Balanced: true,
				Serve: serveYRPC(yrpcConfig{}), Dial: dialYRPC(yrpcConfig{into: true})},
			{Name: "yrpc-lz4", Label: fmt.Sprintf("%s + lz4 ≥ %d B", label, yrpcLZ4Threshold), Extra: true, Balanced: true,
				Serve: serveYRPC(lz4), Dial: dialYRPC(lz4)},
			{Name: "yrpc-nospin", Label: label + " + WithSpinWait(0)", Extra: true, Balanced: true,
				Serve: serveYRPC(yrpcConfig{noSpin: true}), Dial: dialYRPC(yrpcConfig{noSpin: true})},
			{Name: "yrpc-stalled", Label: label + " + a stalled stream on the connection", Extra: true,
				Serve: serveYRPC(yrpcConfig{stalled: true}), Dial: dialYRPC(yrpcConfig{stalled: true})},
		},
		[]*Impl{{Name: "yrpc-tls", Label: label + " + TLS", TLS: true, Balanced: true, Serve: serveYRPC(yrpcConfig{}), Dial: dialYRPC(yrpcConfig{})}}
}

// yrpcConfig says how a yrpc adapter differs from the defaults.
type yrpcConfig struct {
	compress int  // compress bodies of at least this many bytes (0: off), both sides
	reuse    bool // the server reuses request messages (rt.WithRequestReuse)
	into     bool // the client decodes into a response of each worker's (SayInto)
	noSpin   bool // no spin-wait on either side (rt.WithSpinWait(0))
	grpcOff  bool // the server has no gRPC endpoint (rt.WithGRPC(rt.GRPCOff))
	stalled  bool // the server also serves Streams; the client stalls a feed (stalledFeed)
}

// yrpcLZ4Threshold is the compression threshold of yrpc-lz4, on both
// sides: bodies of 1 KiB and more are compressed. Below that a message
// fits in one segment on any network, so compressing it saves no packet
// and no round trip, only CPU; the 64 B and 581 B points of the curve run
// uncompressed.
const yrpcLZ4Threshold = 1 << 10

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

// serveYRPC returns the server side of yc.
func serveYRPC(yc yrpcConfig) func(context.Context, net.Listener, Options) error {
	return func(ctx context.Context, lis net.Listener, o Options) error {
		var opts []rt.ServerOption
		if o.TLS != nil {
			opts = append(opts, rt.WithTLS(o.TLS))
		}
		if yc.compress > 0 {
			opts = append(opts, rt.WithCompression(yc.compress))
		}
		if yc.reuse {
			// The handler, which answers with its request, keeps nothing
			// of it.
			opts = append(opts, rt.WithRequestReuse(true))
		}
		if yc.noSpin {
			opts = append(opts, rt.WithSpinWait(0))
		}
		if yc.grpcOff {
			opts = append(opts, rt.WithGRPC(rt.GRPCOff))
		}
		srv := rt.NewServer(opts...)
		hellorpc.RegisterHello(srv, yrpcHello{})
		if yc.stalled {
			if err := registerYRPCStreams(srv, o); err != nil {
				return err
			}
		}
		return serveYRPCServer(ctx, srv, lis)
	}
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
	cli   *rt.Client
	hc    *hellorpc.HelloClient
	reqs  []*hellorpc.BenchmarkMessage
	resps []*hellorpc.BenchmarkMessage // yrpc-into: each worker's response
}

// dialYRPC returns the client side of yc. addr may list several
// providers, comma separated: the client balances over them
// (rt.WithAddrs, a registry.Static, and the default balancer).
func dialYRPC(yc yrpcConfig) func(context.Context, string, Options) (harness.Client, error) {
	return func(_ context.Context, addr string, o Options) (harness.Client, error) {
		reqs, err := yrpcRequests(o)
		if err != nil {
			return nil, err
		}
		opts := []rt.ClientOption{rt.WithAddrs(strings.Split(addr, ",")...)}
		if o.TLS != nil {
			opts = append(opts, rt.WithTLS(o.TLS))
		}
		if yc.compress > 0 {
			opts = append(opts, rt.WithCompression(yc.compress))
		}
		if yc.noSpin {
			opts = append(opts, rt.WithSpinWait(0))
		}
		cli, err := rt.NewClient(opts...)
		if err != nil {
			return nil, err
		}
		y := &yrpcClient{cli: cli, hc: hellorpc.NewHelloClient(cli), reqs: reqs}
		if yc.stalled {
			if err := stalledFeed(cli, o); err != nil {
				cli.Close()
				return nil, err
			}
		}
		if yc.into {
			for range reqs {
				y.resps = append(y.resps, new(hellorpc.BenchmarkMessage))
			}
		}
		return y, nil
	}
}

// yrpcRequests returns a request per worker with the bytes of the
// protobuf peers' (workload.NewSized), decoded by yrpc's generated code.
func yrpcRequests(o Options) ([]*hellorpc.BenchmarkMessage, error) {
	m, err := workload.NewSized(o.Size)
	if err != nil {
		return nil, err
	}
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, err
	}
	reqs := make([]*hellorpc.BenchmarkMessage, o.workers())
	for i := range reqs {
		reqs[i] = new(hellorpc.BenchmarkMessage)
		if err := reqs[i].Unmarshal(b); err != nil {
			return nil, fmt.Errorf("impl: yrpc cannot decode the workload: %w", err)
		}
	}
	return reqs, nil
}

func (y *yrpcClient) Call(ctx context.Context, w int) error {
	if y.resps != nil {
		resp := y.resps[w]
		if err := y.hc.SayInto(ctx, y.reqs[w], resp); err != nil {
			return err
		}
		return checkYRPC(resp, y.reqs[w])
	}
	resp, err := y.hc.Say(ctx, y.reqs[w])
	if err != nil {
		return err
	}
	return checkYRPC(resp, y.reqs[w])
}

func (y *yrpcClient) Close() error { return y.cli.Close() }

// checkYRPC checks a reply as workload.Check does for benchpb.
func checkYRPC(reply, req *hellorpc.BenchmarkMessage) error {
	if reply.Field1 != workload.ReplyField1 || reply.Field2 != workload.ReplyField2 {
		return fmt.Errorf("impl: bad yrpc reply: field1=%q field2=%d", reply.Field1, reply.Field2)
	}
	if reply.Field9 != req.Field9 || reply.Field129 != req.Field129 || reply.Field131 != req.Field131 ||
		reply.Field80 != req.Field80 || !workload.SameTail(reply.Field4, req.Field4) {
		return errors.New("impl: bad yrpc reply: untouched fields changed")
	}
	return nil
}

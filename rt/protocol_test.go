package rt_test

import (
	"context"
	"testing"

	"github.com/yrpc/yrpc/rt"
)

// ProtocolFrom tells a server interceptor (and so a handler) which wire
// a call or stream came over: yrpc's, gRPC, or gRPC-Web over HTTP/1.1 or
// HTTP/2; other contexts have none.
func TestProtocolFrom(t *testing.T) {
	seen := make(chan string, 1)
	record := func(ctx context.Context) {
		p, ok := rt.ProtocolFrom(ctx)
		if !ok {
			p = "none"
		}
		seen <- p
	}
	e := newGRPCEnv(t,
		rt.WithServerInterceptors(func(ctx context.Context, req rt.Message, info *rt.CallInfo, next rt.Handler) (rt.Message, error) {
			record(ctx)
			return next(ctx, req)
		}),
		rt.WithStreamServerInterceptors(func(ss rt.ServerStreamer, info *rt.CallInfo, next rt.StreamHandler) error {
			record(ss.Context())
			return next(ss)
		}))
	web1 := newHTTP1Client(t, e.addr)
	grpcReqOf := func(c *grpcClient, web bool, path string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			r, err := c.call(ctx, grpcReq{web: web, path: path, msgs: [][]byte{[]byte("1")}})
			if err == nil {
				err = r.err()
			}
			return err
		}
	}
	tests := []struct {
		name string
		do   func(ctx context.Context) error
		want string
	}{
		{"yrpc unary", func(ctx context.Context) error { _, err := call(ctx, e.cli, &testDesc, 0, "x"); return err }, rt.ProtocolYRPC},
		{"yrpc stream", func(ctx context.Context) error { return readToEnd(openProbe(ctx, e.cli, 5, "1")) }, rt.ProtocolYRPC},
		{"grpc unary", grpcReqOf(e.g, false, "/test.Echo/Echo"), rt.ProtocolGRPC},
		{"grpc stream", grpcReqOf(e.g, false, "/grpctest.Probe/List"), rt.ProtocolGRPC},
		{"grpc-web h2c unary", grpcReqOf(e.g, true, "/test.Echo/Echo"), rt.ProtocolGRPCWeb},
		{"grpc-web http1 unary", grpcReqOf(web1, true, "/test.Echo/Echo"), rt.ProtocolGRPCWeb},
		{"grpc-web http1 stream", grpcReqOf(web1, true, "/grpctest.Probe/List"), rt.ProtocolGRPCWeb},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.do(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			if got := <-seen; got != tt.want {
				t.Errorf("ProtocolFrom = %q, want %q", got, tt.want)
			}
		})
	}
	if p, ok := rt.ProtocolFrom(context.Background()); ok || p != "" {
		t.Errorf("ProtocolFrom(Background) = %q, %v", p, ok)
	}
}

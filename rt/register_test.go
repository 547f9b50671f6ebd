package rt_test

import (
	"context"
	"fmt"
	"math"
	"net"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
)

// TestRegisterChecksTheDescriptor: a hand-written descriptor that the
// server could not dispatch with is refused when it is registered (Serve
// says why), instead of failing the first request that reaches it.
func TestRegisterChecksTheDescriptor(t *testing.T) {
	noIndex := testDesc
	noIndex.MethodIndex = nil
	wrongIndex := testDesc
	wrongIndex.MethodIndex = func(uint32) int { return 0 }
	noHandler := testDesc
	noHandler.Methods = append([]rt.MethodDesc(nil), testDesc.Methods...)
	noHandler.Methods[1].Handle = nil
	noNew := testDesc
	noNew.Methods = append([]rt.MethodDesc(nil), testDesc.Methods...)
	noNew.Methods[0].NewRequest = nil
	for _, tt := range []struct {
		name string
		sd   *rt.ServiceDesc
		want string
	}{
		{"no MethodIndex", &noIndex, `register "test.Echo": the descriptor has no MethodIndex`},
		{"inconsistent MethodIndex", &wrongIndex, `its MethodIndex maps the ID 0x1002 of method "Fire" to 0, not 1`},
		{"no handler", &noHandler, `method "Fire" has no handler in its descriptor`},
		{"no NewRequest", &noNew, `method "Echo" has no NewRequest in its descriptor`},
		{"no descriptor", nil, "rt: register: nil service descriptor"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := rt.NewServer()
			srv.RegisterService(tt.sd, newTestImpl())
			serving, err := serveFailure(t, srv)
			if serving {
				t.Fatal("Serve serves a descriptor it cannot dispatch with")
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Serve = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// TestInvokeNilMessages: Invoke refuses a nil request, and a nil response
// for a method that answers, with InvalidArgument and without sending;
// a oneway call needs no response message.
func TestInvokeNilMessages(t *testing.T) {
	e := newEnv(t, nil)
	for _, tt := range []struct {
		name      string
		req, resp rt.Message
		want      string
	}{
		{"nil request", nil, new(msg), "test.Echo/Echo: nil request message (not sent)"},
		{"nil response", &msg{S: "x"}, nil, "test.Echo/Echo: nil response message (not sent)"},
	} {
		err := e.cli.Invoke(ctxT(t), &testDesc, 0, tt.req, tt.resp)
		if rt.CodeOf(err) != rt.InvalidArgument || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want InvalidArgument %q", tt.name, err, tt.want)
		}
	}
	if n := e.impl.calls.Load(); n != 0 {
		t.Errorf("the server saw %d calls, want none", n)
	}
	if err := e.cli.Invoke(ctxT(t), &testDesc, 1, &msg{S: "fired"}, nil); err != nil {
		t.Fatalf("oneway without a response message: %v", err)
	}
	select {
	case got := <-e.impl.oneways:
		if got != "fired" {
			t.Errorf("oneway delivered %q", got)
		}
	case <-ctxT(t).Done():
		t.Fatal("the oneway call was not delivered")
	}
}

// TestOutOfRangeOptions: nil interceptors are none, and a max frame or
// metadata size out of range is brought into it (a max frame size under
// the 1 KiB a peer accepts made every connection fail), on both sides: a
// size of 0 or less is the default, announced as such, so that a call
// over the default is refused before it is sent (a negative size was
// announced as 4 GiB, and such a call broke the connection instead).
func TestOutOfRangeOptions(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []rt.Option
		over func(ctx context.Context) (context.Context, string) // a call over the default limit; nil: none
	}{
		{"tiny max frame", []rt.Option{rt.WithMaxFrameSize(10)}, nil},
		{"negative max frame", []rt.Option{rt.WithMaxFrameSize(-5)}, func(ctx context.Context) (context.Context, string) {
			return ctx, strings.Repeat("x", 4<<20)
		}},
		{"negative max metadata", []rt.Option{rt.WithMaxMetadataSize(-1)}, func(ctx context.Context) (context.Context, string) {
			return rt.WithMetadata(ctx, "k", strings.Repeat("v", 20<<10)), "x"
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srvOpts := []rt.ServerOption{rt.WithServerInterceptors(nil), rt.WithStreamServerInterceptors(nil)}
			cliOpts := []rt.ClientOption{rt.WithClientInterceptors(nil), rt.WithStreamClientInterceptors(nil)}
			for _, o := range tt.opts {
				srvOpts, cliOpts = append(srvOpts, o), append(cliOpts, o)
			}
			e := newEnv(t, srvOpts, cliOpts...)
			if got, err := call(ctxT(t), e.cli, &testDesc, 0, "hello"); err != nil || got != "hello" {
				t.Fatalf("call: %q, %v", got, err)
			}
			if tt.over == nil {
				return
			}
			ctx, req := tt.over(ctxT(t))
			if _, err := call(ctx, e.cli, &testDesc, 0, req); rt.CodeOf(err) != rt.InvalidArgument || rt.IsRemote(err) {
				t.Fatalf("a call over the default limit: %v, want a local InvalidArgument", err)
			}
			if got, err := call(ctxT(t), e.cli, &testDesc, 0, "after"); err != nil || got != "after" {
				t.Fatalf("the call after: %q, %v", got, err)
			}
		})
	}
}

// TestBadWeightFailsServe: WithWeight out of 0..registry.MaxWeight makes
// Serve fail at once, with or without a registry, naming the option and
// the value, and registers nothing. Before, it failed only in the
// registry's Register (as "registry: endpoint ... has weight -1"), after
// Serve had started, and without a registry not at all.
func TestBadWeightFailsServe(t *testing.T) {
	for _, w := range []int{-1, registry.MaxWeight + 1, math.MinInt} {
		for _, withReg := range []bool{false, true} {
			reg := registry.NewMemory()
			var opts []rt.ServerOption
			if withReg {
				opts = append(opts, rt.WithRegistry(reg.Conn()))
			}
			srv := rt.NewServer(append(opts, rt.WithWeight(w))...)
			srv.RegisterService(&testDesc, newTestImpl())
			serving, err := serveFailure(t, srv)
			if serving {
				t.Errorf("WithWeight(%d), registry %v: Serve serves", w, withReg)
			}
			want := fmt.Sprintf("rt: new server: WithWeight(%d): weight %d is out of range 0..%d", w, w, registry.MaxWeight)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("WithWeight(%d), registry %v: Serve = %v, want an error with %q", w, withReg, err, want)
			}
			if ps := registryProviders(t, reg, testDesc.Name); len(ps) != 0 {
				t.Errorf("WithWeight(%d): registered %v", w, ps)
			}
			reg.Close()
		}
	}
}

// serveFailure serves srv on a loopback port and returns the error that
// Serve fails with at once; serving reports that Serve was still serving
// when ctxT(t) ended (then srv is closed and err is what Serve returned).
// srv is closed either way.
func serveFailure(t *testing.T, srv *rt.Server) (serving bool, err error) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), lis) }()
	select {
	case err = <-served:
	case <-ctxT(t).Done():
		serving = true
		srv.Close()
		err = <-served
	}
	srv.Close()
	return serving, err
}

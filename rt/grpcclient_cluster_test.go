package rt_test

import (
	"context"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
)

// Two gRPC providers, one killed: calls go on through the other (an
// idempotent one is retried there), and the dead provider's breaker
// opens. A provider that refuses connections is skipped even by calls
// that are not idempotent: a refused connection is not sent.
func TestGRPCClientFailover(t *testing.T) {
	checkLeaks(t)
	impls := []*testImpl{newTestImpl(), newTestImpl()}
	srvs := make([]*rt.Server, 2)
	addrs := make([]string, 2)
	for i := range srvs {
		srvs[i] = rt.NewServer()
		srvs[i].RegisterService(&testDesc, impls[i])
		addrs[i] = "grpc://" + serve(t, srvs[i])
	}
	clock := newFakeClock() // the breakers stay open: no probe during the test
	checkBreakers := func(cli *rt.Client, dead string) {
		t.Helper()
		for _, p := range cli.Providers(&testDesc) {
			want := "closed"
			if p.Addr == dead {
				want = "open"
			}
			if p.Breaker != want {
				t.Errorf("provider %s: breaker %s, want %s", p.Addr, p.Breaker, want)
			}
		}
	}
	t.Run("refused", func(t *testing.T) {
		dead := "grpc://" + closedAddr(t)
		cli := grpcCli(t, rt.WithAddrs(dead, addrs[1]), rt.WithClock(clock))
		for i := range 50 {
			if got, err := call(ctxT(t), cli, &testDesc, 0, "echo"); err != nil || got != "echo" {
				t.Fatalf("call %d: %q %v", i, got, err)
			}
		}
		checkBreakers(cli, dead)
	})
	t.Run("killed", func(t *testing.T) {
		cli := grpcCli(t, rt.WithAddrs(addrs...), rt.WithClock(clock))
		for i := range 20 {
			if _, err := call(ctxT(t), cli, &testDesc, 2, "warm"); err != nil {
				t.Fatalf("warm-up call %d: %v", i, err)
			}
		}
		if impls[0].calls.Load() == 0 {
			t.Fatal("warm-up calls: provider 0 unused")
		}
		srvs[0].Close()
		before := impls[1].calls.Load()
		for i := range 100 {
			// Retry: idempotent, 3 tries.
			if got, err := call(ctxT(t), cli, &testDesc, 2, "after"); err != nil || got != "after" {
				t.Fatalf("call %d after the kill: %q %v", i, got, err)
			}
		}
		if n := impls[1].calls.Load() - before; n != 100 {
			t.Errorf("the live provider ran %d calls, want 100", n)
		}
		checkBreakers(cli, addrs[0])
	})
}

// closedAddr returns a loopback address that refuses connections.
func closedAddr(t *testing.T) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// grpcs:// calls a TLS server over HTTP/2 with ALPN h2, with the client's
// TLS config (its certificate reaches the handler); h2c to a TLS-only
// server and TLS without the server's roots are refused, not sent.
func TestGRPCClientTLS(t *testing.T) {
	checkLeaks(t)
	ca := newCA(t, "test CA")
	id := "spiffe://example.org/ns/shop/sa/web"
	srv := rt.NewServer(rt.WithTLS(serverTLS(ca.issue(t, leaf{cn: "server"}), ca)))
	srv.RegisterService(&testDesc, newTestImpl())
	srv.RegisterService(&probeDesc, struct{}{})
	addr := serve(t, srv)
	cli := grpcCli(t, rt.WithAddrs("grpcs://"+addr), rt.WithTLS(clientTLS(ca, ca.issue(t, leaf{cn: "web", spiffe: id, client: true}))))
	want := "tls=true spiffe=" + id + " principal=" + id + " addr=true"
	if got, err := probeCall(ctxT(t), cli, "Peer", ""); err != nil || got != want {
		t.Errorf("peer: %q %v", got, err)
	}
	if got, err := probeCall(ctxT(t), cli, "Meta", ""); err != nil || !strings.Contains(got, "user-agent=grpc-go-yrpc/1") {
		t.Errorf("over gRPC: %q %v", got, err)
	}
	s, err := cli.NewStream(ctxT(t), &probeDesc, 5) // List
	if err != nil {
		t.Fatal(err)
	}
	ls := &rt.GenericClientStream[msg, msg]{ClientStreamer: s}
	if err := ls.Send(&msg{S: "2"}); err != nil {
		t.Fatal(err)
	}
	if err := ls.CloseSend(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		m, err := ls.Recv()
		if err != nil {
			if err != io.EOF {
				t.Errorf("list: %v", err)
			}
			break
		}
		got = append(got, m.S)
	}
	if !slices.Equal(got, []string{"0", "1"}) || ls.Trailer().Get("list") != "headers" || ls.Trailer().Get("list-count") != "2" {
		t.Errorf("list over TLS: %q, trailer %v", got, ls.Trailer())
	}
	for name, opts := range map[string][]rt.ClientOption{
		"h2c":      {rt.WithAddrs("grpc://" + addr)},
		"no roots": {rt.WithAddrs("grpcs://" + addr)},
	} {
		c := grpcCli(t, opts...)
		_, err := probeCall(ctxT(t), c, "Peer", "")
		if rt.CodeOf(err) != rt.Unavailable || rt.IsRemote(err) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A provider whose registry payload lists gRPC and not yrpc is called
// over gRPC; one that lists both, or none, over yrpc.
func TestGRPCClientRegistryProtocols(t *testing.T) {
	g := newGRPCTarget(t, true, nil)
	for _, c := range []struct {
		protocols []string
		grpc      bool
	}{
		{nil, false},
		{[]string{rt.ProtocolYRPC, rt.ProtocolGRPC}, false},
		{[]string{rt.ProtocolGRPC}, true},
	} {
		reg := registry.NewMemory()
		ep := registry.Endpoint{Key: registry.Key{Service: probeDesc.Name}, Role: registry.Provider, Addr: g.addr, Protocols: c.protocols, StartTime: time.Now()}
		if err := reg.Register(context.Background(), ep); err != nil {
			t.Fatal(err)
		}
		cli := grpcCli(t, rt.WithRegistry(reg))
		got, err := probeCall(ctxT(t), cli, "Meta", "")
		if err != nil || strings.Contains(got, "user-agent=grpc-go-yrpc/1") != c.grpc {
			t.Errorf("protocols %q: handler saw %q (%v), want gRPC %v", c.protocols, got, err, c.grpc)
		}
		cli.Close()
		reg.Close()
	}
}

// WithAddrs and registry payloads take grpc:// and grpcs:// addresses,
// and nothing else with a scheme.
func TestGRPCClientAddrs(t *testing.T) {
	for addr, ok := range map[string]bool{
		"grpc://127.0.0.1:1": true, "grpcs://example.com:443": true,
		"http://127.0.0.1:1": false, "grpc://127.0.0.1": false,
	} {
		c, err := rt.NewClient(rt.WithAddrs(addr))
		if (err == nil) != ok {
			t.Errorf("%s: %v", addr, err)
		}
		if c != nil {
			c.Close()
		}
	}
	if err := (registry.Endpoint{Key: registry.Key{Service: "a.B"}, Role: registry.Provider, Addr: "grpcs://10.0.0.1:50051"}).Validate(); err != nil {
		t.Errorf("payload: %v", err)
	}
}

package rt_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/yrpc/yrpc/internal/testcerts"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
)

// gRPC over TLS (ALPN h2) and gRPC-Web over TLS (ALPN http/1.1) on the
// port of a mutual-TLS yrpc server: the handler sees the client's
// certificate, yrpc clients go on as before, and the server refuses h2c
// and plaintext gRPC-Web.
func TestGRPCOverTLS(t *testing.T) {
	checkLeaks(t)
	ca := testcerts.NewCA(t, "test CA")
	id := "spiffe://example.org/ns/shop/sa/web"
	srv := rt.NewServer(rt.WithTLS(testcerts.ServerConfig(ca.Issue(t, testcerts.Leaf{CN: "server"}), ca)))
	srv.RegisterService(&testDesc, newTestImpl())
	srv.RegisterService(&probeDesc, struct{}{})
	addr := serve(t, srv)
	cert := ca.Issue(t, testcerts.Leaf{CN: "web", SPIFFE: id, Client: true})
	want := "tls=true spiffe=" + id + " principal=" + id + " addr=true"
	for name, g := range map[string]*grpcClient{"h2": newTLSGRPCClient(t, addr, testcerts.ClientConfig(ca, cert), false), "http1": newTLSGRPCClient(t, addr, testcerts.ClientConfig(ca, cert), true)} {
		r, err := g.call(ctxT(t), grpcReq{path: "/grpctest.Probe/Peer", msgs: [][]byte{nil}, web: name == "http1"})
		if err != nil || r.err() != nil || len(r.msgs) != 1 || string(r.msgs[0]) != want {
			t.Errorf("%s: %v %v %q", name, err, r.err(), r.msgs)
		}
	}
	cli, err := rt.NewClient(rt.WithAddrs(addr), rt.WithTLS(testcerts.ClientConfig(ca, cert)))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if got, err := call(ctxT(t), cli, &testDesc, 0, "yrpc over TLS"); err != nil || got != "yrpc over TLS" {
		t.Errorf("yrpc: %q %v", got, err)
	}
	// Plaintext: refused.
	for name, g := range map[string]*grpcClient{"h2c": newH2CClient(t, addr), "gRPC-Web": newHTTP1Client(t, addr)} {
		r, err := g.call(ctxT(t), grpcReq{path: "/test.Echo/Echo", msgs: [][]byte{nil}, web: name == "gRPC-Web"})
		if err == nil {
			t.Errorf("%s to a TLS server: %+v, want a refusal", name, r)
		}
	}
	// A client certificate of another CA: refused in the handshake.
	other := testcerts.NewCA(t, "other CA")
	bad := newTLSGRPCClient(t, addr, testcerts.ClientConfig(ca, other.Issue(t, testcerts.Leaf{CN: "x", Client: true})), false)
	if _, err := bad.unary(ctxT(t), "/test.Echo/Echo", "x"); err == nil {
		t.Error("another CA's client certificate: accepted")
	}
}

// With WithPlaintextAllowed, a TLS server answers h2c too.
func TestGRPCPlaintextAllowed(t *testing.T) {
	checkLeaks(t)
	ca := testcerts.NewCA(t, "test CA")
	srv := rt.NewServer(rt.WithTLS(testcerts.ServerConfig(ca.Issue(t, testcerts.Leaf{CN: "server"}), nil)), rt.WithPlaintextAllowed(true))
	srv.RegisterService(&testDesc, newTestImpl())
	addr := serve(t, srv)
	for name, g := range map[string]*grpcClient{"h2c": newH2CClient(t, addr), "h2": newTLSGRPCClient(t, addr, testcerts.ClientConfig(ca), false)} {
		if got, err := g.unary(ctxT(t), "/test.Echo/Echo", name); err != nil || got != name {
			t.Errorf("%s: %q %v", name, got, err)
		}
	}
}

// The Authenticator and the access rules apply to gRPC calls, with the
// metadata of the request headers.
func TestGRPCAuth(t *testing.T) {
	checkLeaks(t)
	srv := rt.NewServer(rt.WithAuthenticator(rt.BearerTokens(map[string]string{"s3cret": "alice", "other": "bob"})),
		rt.WithAccessRules(rt.AccessRules{"grpctest.Probe/Peer": {"alice"}}))
	srv.RegisterService(&probeDesc, struct{}{})
	g := newH2CClient(t, serve(t, srv))
	for _, c := range []struct {
		auth string
		want rt.Code
	}{{"Bearer s3cret", rt.OK}, {"", rt.Unauthenticated}, {"Bearer wrong", rt.Unauthenticated}, {"Bearer other", rt.PermissionDenied}} {
		r, err := g.call(ctxT(t), grpcReq{path: "/grpctest.Probe/Peer", msgs: [][]byte{nil}, md: md("Authorization", c.auth)})
		if err != nil || r.code != c.want {
			t.Errorf("%q: %v %q %v, want %v", c.auth, r.code, r.message, err, c.want)
			continue
		}
		if c.want == rt.OK && !strings.Contains(string(r.msgs[0]), "principal=alice") {
			t.Errorf("%q: handler saw %q", c.auth, r.msgs[0])
		}
	}
}

// WithGRPC(GRPCOwnPort): Serve's listener speaks yrpc only, ServeGRPC's
// gRPC only, and only the first is registered. WithGRPC(GRPCOff): no
// gRPC, and ServeGRPC fails.
func TestGRPCModes(t *testing.T) {
	checkLeaks(t)
	reg := registry.NewMemory()
	t.Cleanup(func() { reg.Close() })
	srv := rt.NewServer(rt.WithGRPC(rt.GRPCOwnPort), rt.WithRegistry(reg))
	srv.RegisterService(&testDesc, newTestImpl())
	yaddr := serve(t, srv)
	glis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gdone := make(chan error, 1)
	go func() { gdone <- srv.ServeGRPC(context.Background(), glis) }()
	defer func() {
		srv.Close()
		if err := <-gdone; !errors.Is(err, rt.ErrServerClosed) {
			t.Errorf("ServeGRPC returned %v", err)
		}
	}()
	gaddr := glis.Addr().String()
	if got, err := newH2CClient(t, gaddr).unary(ctxT(t), "/test.Echo/Echo", "own port"); err != nil || got != "own port" {
		t.Errorf("gRPC on its own port: %q %v", got, err)
	}
	if _, err := newH2CClient(t, yaddr).unary(ctxT(t), "/test.Echo/Echo", "x"); err == nil {
		t.Error("gRPC on yrpc's port: answered")
	}
	for addr, ok := range map[string]bool{yaddr: true, gaddr: false} {
		cli, err := rt.NewClient(rt.WithAddrs(addr))
		if err != nil {
			t.Fatal(err)
		}
		_, err = call(ctxT(t), cli, &testDesc, 0, "x", rt.WithCallTimeout(5*time.Second))
		cli.Close()
		if (err == nil) != ok {
			t.Errorf("yrpc on %s: %v", addr, err)
		}
	}
	snap := registryProviders(t, reg, testDesc.Name)
	if len(snap) != 1 || snap[0].Addr != yaddr || strings.Join(snap[0].Protocols, ",") != "yrpc" {
		t.Errorf("registered %+v, want yrpc's listener only", snap)
	}

	off := rt.NewServer(rt.WithGRPC(rt.GRPCOff))
	off.RegisterService(&testDesc, newTestImpl())
	if err := off.ServeGRPC(context.Background(), glis); err == nil || !strings.Contains(err.Error(), "off") {
		t.Errorf("ServeGRPC with GRPCOff: %v", err)
	}
	oaddr := serve(t, off)
	if _, err := newH2CClient(t, oaddr).unary(ctxT(t), "/test.Echo/Echo", "x"); err == nil {
		t.Error("GRPCOff: answered gRPC")
	}
}

// The default registers both protocols for the address.
func TestGRPCRegistryProtocols(t *testing.T) {
	checkLeaks(t)
	reg := registry.NewMemory()
	t.Cleanup(func() { reg.Close() })
	srv := rt.NewServer(rt.WithRegistry(reg))
	srv.RegisterService(&testDesc, newTestImpl())
	serve(t, srv)
	if ps := registryProviders(t, reg, testDesc.Name); len(ps) != 1 || strings.Join(ps[0].Protocols, ",") != "yrpc,grpc" {
		t.Errorf("registered %+v", ps)
	}
}

func registryProviders(t *testing.T, reg registry.Registry, service string) []registry.Endpoint {
	t.Helper()
	got := make(chan []registry.Endpoint, 1)
	stop, err := reg.Watch(registry.Key{Service: service}, func(s registry.Snapshot) {
		select {
		case got <- s.Providers:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	return <-got
}

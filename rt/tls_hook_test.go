package rt_test

import (
	"context"
	"crypto/tls"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/yrpc/yrpc/internal/testcerts"
	"github.com/yrpc/yrpc/rt"
)

// A server whose TLS config comes from GetConfigForClient (as when its
// client CAs rotate) keeps WithTLS's defaults: the config returned gets
// the ALPN protocols (yrpc, h2, http/1.1) and TLS 1.3 at least, as the
// server's own would. Without them gRPC over TLS failed ("the server
// chose protocol \"\"") and TLS 1.2 clients were let in.
func TestGetConfigForClientKeepsDefaults(t *testing.T) {
	checkLeaks(t)
	ca := testcerts.NewCA(t, "test CA")
	inner := testcerts.ServerConfig(ca.Issue(t, testcerts.Leaf{CN: "server"}), nil) // no NextProtos, no MinVersion
	var hooked atomic.Int64
	cfg := &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		hooked.Add(1)
		return inner, nil
	}}
	alpn := make(chan string, 4)
	authn := rt.AuthenticatorFunc(func(_ context.Context, r rt.AuthRequest) (string, error) {
		alpn <- r.Peer.TLS.NegotiatedProtocol
		return "x", nil
	})
	srv := rt.NewServer(rt.WithTLS(cfg), rt.WithAuthenticator(authn))
	srv.RegisterService(&testDesc, newTestImpl())
	addr := serve(t, srv)

	for _, target := range []string{addr, "grpcs://" + addr} {
		cli, err := rt.NewClient(rt.WithAddrs(target), rt.WithTLS(testcerts.ClientConfig(ca)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := call(ctxT(t), cli, &testDesc, 0, "x")
		cli.Close()
		if err != nil || got != "x" {
			t.Errorf("%s: %q, %v", target, got, err)
			continue
		}
		want := "yrpc"
		if strings.HasPrefix(target, "grpcs://") {
			want = "h2"
		}
		if p := <-alpn; p != want {
			t.Errorf("%s: ALPN %q, want %q", target, p, want)
		}
	}

	old := testcerts.ClientConfig(ca)
	old.MinVersion, old.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	cli, err := rt.NewClient(rt.WithAddrs(addr), rt.WithTLS(old))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := call(ctxT(t), cli, &testDesc, 0, "x"); err == nil || !strings.Contains(err.Error(), "protocol version") {
		t.Fatalf("TLS 1.2 client: err = %v, want a refusal naming the protocol version", err)
	}
	if n := hooked.Load(); !t.Failed() && n != 3 {
		t.Fatalf("GetConfigForClient ran %d times, want 3 (one per handshake)", n)
	}
}

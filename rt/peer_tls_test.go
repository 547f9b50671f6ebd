package rt_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"testing"

	"github.com/yrpc/yrpc/internal/testcerts"
	"github.com/yrpc/yrpc/rt"
)

// What server interceptors learn about the caller under mutual TLS: the
// unary and the stream interceptor both see the connection's TLS state
// (TLS 1.3 and the ALPN protocol "yrpc" by default; 1.2 when the server's
// config allows it), the verified certificate with its SPIFFE ID and
// common name, and the principal the Authenticator gave the call. A client
// limited to TLS 1.2 is refused by a server that keeps the default.
func TestPeerInInterceptorsOverTLS(t *testing.T) {
	ca := testcerts.NewCA(t, "test CA")
	const id = "spiffe://example.org/ns/shop/sa/web"
	cert := ca.Issue(t, testcerts.Leaf{CN: "web", SPIFFE: id, Client: true})
	authn := rt.AuthenticatorFunc(func(_ context.Context, r rt.AuthRequest) (string, error) {
		return "authn:" + r.Peer.SPIFFEID, nil
	})
	type seen struct {
		kind string
		p    rt.Peer
		ok   bool
	}
	for _, tc := range []struct {
		name           string
		srvMin, cliMax uint16 // the server's MinVersion, the client's only version; 0: defaults
		want           uint16 // the version negotiated; 0: refused
	}{
		{"defaults", 0, 0, tls.VersionTLS13},
		{"TLS 1.2 allowed by the server", tls.VersionTLS12, tls.VersionTLS12, tls.VersionTLS12},
		{"TLS 1.2 client, default server", 0, tls.VersionTLS12, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t)
			got := make(chan seen, 4)
			unary := func(ctx context.Context, req rt.Message, _ *rt.CallInfo, next rt.Handler) (rt.Message, error) {
				p, ok := rt.PeerFrom(ctx)
				got <- seen{"unary", p, ok}
				return next(ctx, req)
			}
			streams := func(ss rt.ServerStreamer, _ *rt.CallInfo, next rt.StreamHandler) error {
				p, ok := rt.PeerFrom(ss.Context())
				got <- seen{"stream", p, ok}
				return next(ss)
			}
			scfg := testcerts.ServerConfig(ca.Issue(t, testcerts.Leaf{CN: "server"}), ca)
			scfg.MinVersion = tc.srvMin
			srv := rt.NewServer(rt.WithTLS(scfg), rt.WithAuthenticator(authn),
				rt.WithServerInterceptors(unary), rt.WithStreamServerInterceptors(streams))
			srv.RegisterService(&testDesc, newTestImpl())
			srv.RegisterService(&feedDesc, newFeedImpl())
			addr := serve(t, srv)
			ccfg := testcerts.ClientConfig(ca, cert)
			ccfg.MinVersion, ccfg.MaxVersion = tc.cliMax, tc.cliMax // a peer that speaks 1.2 only
			cli, err := rt.NewClient(rt.WithAddrs(addr), rt.WithTLS(ccfg))
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()

			_, err = call(ctxT(t), cli, &testDesc, 0, "x")
			if tc.want == 0 {
				if err == nil || !contains(err.Error(), "protocol version") {
					t.Fatalf("err = %v, want a handshake refusal naming the protocol version", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s, err := stream(ctxT(t), cli, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Send(&msg{S: "1"}); err != nil {
				t.Fatal(err)
			}
			for {
				if _, err := s.Recv(); errors.Is(err, io.EOF) {
					break
				} else if err != nil {
					t.Fatal(err)
				}
			}
			for _, kind := range []string{"unary", "stream"} {
				s := <-got
				p := s.p
				switch {
				case s.kind != kind || !s.ok:
					t.Fatalf("%s interceptor: PeerFrom = %v (want %s, true)", s.kind, s.ok, kind)
				case p.TLS == nil || p.TLS.Version != tc.want || p.TLS.NegotiatedProtocol != rt.ALPN:
					t.Errorf("%s interceptor: TLS state %+v, want version %#x and ALPN %q", kind, p.TLS, tc.want, rt.ALPN)
				case p.Cert == nil || len(p.TLS.VerifiedChains) == 0 || p.SPIFFEID != id || p.CommonName != "web":
					t.Errorf("%s interceptor: certificate %v, SPIFFE ID %q, CN %q", kind, p.Cert != nil, p.SPIFFEID, p.CommonName)
				case p.Principal != "authn:"+id || p.Addr == nil:
					t.Errorf("%s interceptor: principal %q, addr %v", kind, p.Principal, p.Addr)
				}
			}
		})
	}
}

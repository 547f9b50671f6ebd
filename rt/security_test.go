package rt_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yrpc/yrpc/internal/testcerts"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/metrics"
	"github.com/yrpc/yrpc/rt/registry"
)

// tlsEnv is a server with TLS on loopback; clients are made by the test.
type tlsEnv struct {
	t    *testing.T
	impl *testImpl
	srv  *rt.Server
	addr string
}

// newTLSEnv starts the server; the test checks for leaks itself (it may
// start more than one).
func newTLSEnv(t *testing.T, cfg *tls.Config, opts ...rt.ServerOption) *tlsEnv {
	t.Helper()
	e := &tlsEnv{t: t, impl: newTestImpl()}
	e.srv = rt.NewServer(append([]rt.ServerOption{rt.WithTLS(cfg)}, opts...)...)
	e.srv.RegisterService(&testDesc, e.impl)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = lis.Addr().String()
	done := make(chan error, 1)
	go func() { done <- e.srv.Serve(context.Background(), lis) }()
	t.Cleanup(func() {
		e.srv.Close()
		<-done
	})
	return e
}

func (e *tlsEnv) client(opts ...rt.ClientOption) *rt.Client {
	e.t.Helper()
	c, err := rt.NewClient(append([]rt.ClientOption{rt.WithAddrs(e.addr)}, opts...)...)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// Mutual TLS: the handler sees the client certificate's SPIFFE ID and
// common name, and, with no Authenticator, the SPIFFE ID as principal.
func TestMutualTLS(t *testing.T) {
	checkLeaks(t)
	ca := testcerts.NewCA(t, "test CA")
	e := newTLSEnv(t, testcerts.ServerConfig(ca.Issue(t, testcerts.Leaf{CN: "server"}), ca))
	id := "spiffe://example.org/ns/shop/sa/web"
	cli := e.client(rt.WithTLS(testcerts.ClientConfig(ca, ca.Issue(t, testcerts.Leaf{CN: "web", SPIFFE: id, Client: true}))))
	got, err := call(ctxT(t), cli, &testDesc, 0, "whoami")
	if want := id + "|web|" + id; err != nil || got != want {
		t.Fatalf("whoami = %q, %v; want %q", got, err, want)
	}
}

// The certificates a server must refuse: another CA's, an expired one,
// none at all; and a plaintext client, which gets an error naming TLS.
// The server keeps serving good clients after each.
func TestTLSRefusals(t *testing.T) {
	checkLeaks(t)
	ca, other := testcerts.NewCA(t, "test CA"), testcerts.NewCA(t, "other CA")
	e := newTLSEnv(t, testcerts.ServerConfig(ca.Issue(t, testcerts.Leaf{CN: "server"}), ca))
	good := e.client(rt.WithTLS(testcerts.ClientConfig(ca, ca.Issue(t, testcerts.Leaf{CN: "good", Client: true}))))
	for _, tc := range []struct {
		name string
		opts []rt.ClientOption
		want string
	}{
		{"another CA's certificate", []rt.ClientOption{rt.WithTLS(testcerts.ClientConfig(ca, other.Issue(t, testcerts.Leaf{CN: "x", Client: true})))}, "tls"},
		{"an expired certificate", []rt.ClientOption{rt.WithTLS(testcerts.ClientConfig(ca, ca.Issue(t, testcerts.Leaf{CN: "x", Client: true, NotAfter: time.Now().Add(-time.Hour)})))}, "tls"},
		{"no certificate", []rt.ClientOption{rt.WithTLS(testcerts.ClientConfig(ca))}, "tls"},
		{"plaintext", nil, e.addr + " went away: this server requires TLS"}, // names the provider
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := e.client(tc.opts...)
			_, err := call(ctxT(t), bad, &testDesc, 0, "x", rt.WithCallTimeout(5*time.Second))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a refusal mentioning %q", err, tc.want)
			}
			if got, err := call(ctxT(t), good, &testDesc, 0, "still serving"); err != nil || got != "still serving" {
				t.Fatalf("good client after the refusal: %q, %v", got, err)
			}
		})
	}
	if n := e.impl.calls.Load(); n != 4 {
		t.Fatalf("the handler ran %d times, want 4 (the good client's calls only)", n)
	}
}

// A client with TLS calling a plaintext server gets an error that says
// so, not a hang.
func TestTLSClientPlaintextServer(t *testing.T) {
	e := newEnv(t, nil)
	ca := testcerts.NewCA(t, "test CA")
	cli, err := rt.NewClient(rt.WithAddrs(e.lis.Addr().String()), rt.WithTLS(testcerts.ClientConfig(ca)))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	_, err = call(ctxT(t), cli, &testDesc, 0, "x")
	if err == nil || !strings.Contains(err.Error(), "does it serve TLS?") || !strings.Contains(err.Error(), e.lis.Addr().String()) {
		t.Fatalf("err = %v, want an error naming the server and TLS", err)
	}
}

// waitUntil polls cond, failing the test after 10 s.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	stop := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(stop) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(time.Millisecond) // polls a condition; the test does not wait for time
	}
}

// A bearer-token server refuses a missing or wrong token with
// Unauthenticated before the handler runs, and gives the principal of
// the right one; the token appears in no log line.
func TestBearerTokens(t *testing.T) {
	checkLeaks(t)
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&logs, &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	const secret = "s3cr3t-t0ken-value"
	ca := testcerts.NewCA(t, "test CA")
	e := newTLSEnv(t, testcerts.ServerConfig(ca.Issue(t, testcerts.Leaf{CN: "server"}), nil),
		rt.WithAuthenticator(rt.BearerTokens(map[string]string{secret: "alice"})), rt.WithLogger(logger))
	for _, tc := range []struct {
		name  string
		token string
		want  rt.Code
	}{
		{"missing", "", rt.Unauthenticated},
		{"wrong", "nope", rt.Unauthenticated},
		{"right", secret, rt.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := []rt.ClientOption{rt.WithTLS(testcerts.ClientConfig(ca)), rt.WithLogger(logger), rt.WithDebug(true)}
			if tc.token != "" {
				opts = append(opts, rt.WithCredentials(rt.BearerToken{Token: tc.token}))
			}
			before := e.impl.calls.Load()
			got, err := call(ctxT(t), e.client(opts...), &testDesc, 0, "whoami")
			if rt.CodeOf(err) != tc.want {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if tc.want != rt.OK && e.impl.calls.Load() != before {
				t.Fatal("the handler ran for a refused call")
			}
			if tc.want == rt.OK && got != "||alice" {
				t.Fatalf("whoami = %q, want principal alice", got)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(logs.String(), secret) {
		t.Fatalf("the token appears in the logs:\n%s", logs.String())
	}
}

type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// Secret credentials are not sent in plaintext: NewClient refuses them
// without TLS unless they allow plaintext.
func TestCredentialsNeedTLS(t *testing.T) {
	_, err := rt.NewClient(rt.WithAddrs("127.0.0.1:1"), rt.WithCredentials(rt.BearerToken{Token: "x"}))
	if err == nil || !strings.Contains(err.Error(), "require TLS") {
		t.Fatalf("NewClient = %v, want a refusal naming TLS", err)
	}
	c, err := rt.NewClient(rt.WithAddrs("127.0.0.1:1"), rt.WithCredentials(rt.BearerToken{Token: "x", AllowPlaintext: true}))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// Authorization by principal, one e2e case per outcome: a method open to
// anyone, one allowed to the caller, one it may not call, and a caller
// with no principal.
func TestAuthorization(t *testing.T) {
	checkLeaks(t)
	ca := testcerts.NewCA(t, "test CA")
	rules := rt.AccessRules{
		"test.Echo":       {"spiffe://example.org/ns/shop/*"},
		"test.Echo/Hedge": {"spiffe://example.org/ns/admin/*"},
		"test.Echo/Fork":  {"*"},
	}
	e := newTLSEnv(t, testcerts.ServerConfig(ca.Issue(t, testcerts.Leaf{CN: "server"}), nil), rt.WithAccessRules(rules))
	// The server asks for no client certificate here, so the mTLS
	// identity comes from a server that does.
	mtls := newTLSEnv(t, testcerts.ServerConfig(ca.Issue(t, testcerts.Leaf{CN: "server"}), ca), rt.WithAccessRules(rules))
	web := rt.WithTLS(testcerts.ClientConfig(ca, ca.Issue(t, testcerts.Leaf{CN: "web", SPIFFE: "spiffe://example.org/ns/shop/sa/web", Client: true})))
	for _, tc := range []struct {
		name string
		cli  *rt.Client
		m    int
		want rt.Code
	}{
		{"allowed by the service's rule", mtls.client(web), 0, rt.OK},
		{"denied by the method's rule", mtls.client(web), 3, rt.PermissionDenied},
		{"open to any principal", mtls.client(web), 4, rt.OK},
		{"no principal", e.client(rt.WithTLS(testcerts.ClientConfig(ca))), 0, rt.PermissionDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := call(ctxT(t), tc.cli, &testDesc, tc.m, "x")
			if rt.CodeOf(err) != tc.want {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// A client of one group dialing another group's provider directly is
// refused with NotFound naming both.
func TestGroupIsolation(t *testing.T) {
	e := newEnv(t, []rt.ServerOption{rt.WithGroupVersion("B", "")})
	cli, err := rt.NewClient(rt.WithAddrs(e.lis.Addr().String()), rt.WithGroupVersion("A", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	_, err = call(ctxT(t), cli, &testDesc, 0, "x")
	if rt.CodeOf(err) != rt.NotFound || !strings.Contains(err.Error(), "test.Echo[B]") || !strings.Contains(err.Error(), "test.Echo[A]") {
		t.Fatalf("err = %v, want NotFound naming test.Echo[B] and test.Echo[A]", err)
	}
	if e.impl.calls.Load() != 0 {
		t.Fatal("the handler ran")
	}
}

// Registry tokens: a client that came through the registry carries the
// provider's token and is served; one that dials the address directly is
// refused. The token appears in no log line of either side.
func TestRegistryToken(t *testing.T) {
	checkLeaks(t)
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&logs, &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg := registry.NewMemory()
	defer reg.Close()
	srv := rt.NewServer(rt.WithRegistry(reg.Conn()), rt.WithRegistryToken(true), rt.WithLogger(logger))
	impl := newTestImpl()
	srv.RegisterService(&testDesc, impl)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), lis) }()
	defer func() { srv.Close(); <-done }()

	via, err := rt.NewClient(rt.WithRegistry(reg.Conn()), rt.WithLogger(logger), rt.WithDebug(true))
	if err != nil {
		t.Fatal(err)
	}
	defer via.Close()
	if got, err := call(ctxT(t), via, &testDesc, 0, "x"); err != nil || got != "x" {
		t.Fatalf("through the registry: %q, %v", got, err)
	}
	direct, err := rt.NewClient(rt.WithAddrs(lis.Addr().String()), rt.WithLogger(logger), rt.WithDebug(true))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	before := impl.calls.Load()
	_, err = call(ctxT(t), direct, &testDesc, 0, "x")
	if rt.CodeOf(err) != rt.Unauthenticated || !strings.Contains(err.Error(), "registry token") {
		t.Fatalf("direct: %v, want Unauthenticated about the registry token", err)
	}
	if impl.calls.Load() != before {
		t.Fatal("the handler ran for the direct call")
	}

	tokens := make(chan string, 1)
	stop, err := reg.Watch(registry.Key{Service: testDesc.Name}, func(s registry.Snapshot) {
		if len(s.Providers) == 1 {
			select {
			case tokens <- s.Providers[0].Token:
			default:
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	token := <-tokens
	mu.Lock()
	defer mu.Unlock()
	switch {
	case len(token) != 32:
		t.Fatalf("the registry holds token %q, want 128 bits in hex", token)
	case logs.Len() == 0:
		t.Fatal("nothing was logged: the check would prove nothing")
	case strings.Contains(logs.String(), token):
		t.Fatalf("the token appears in the logs:\n%s", logs.String())
	}
}

// A client without TLS calling a provider registered as TLS-only fails
// locally, naming the provider, without dialing it.
func TestTLSRequiredByPayload(t *testing.T) {
	checkLeaks(t)
	reg := registry.NewMemory()
	defer reg.Close()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int64
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	defer lis.Close()
	if err := reg.Register(context.Background(), registry.Endpoint{Key: registry.Key{Service: testDesc.Name}, Role: registry.Provider,
		Addr: lis.Addr().String(), TLS: true}); err != nil {
		t.Fatal(err)
	}
	cli, err := rt.NewClient(rt.WithRegistry(reg.Conn()))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	_, err = call(ctxT(t), cli, &testDesc, 0, "x")
	if rt.CodeOf(err) != rt.FailedPrecondition || !strings.Contains(err.Error(), lis.Addr().String()) || !strings.Contains(err.Error(), "requires TLS") {
		t.Fatalf("err = %v, want FailedPrecondition naming the provider and TLS", err)
	}
	if accepted.Load() != 0 {
		t.Fatal("the client dialed the TLS-only provider in plaintext")
	}
}

// A call refused on arrival (here: no registry token) is counted in the
// server's metrics under its code, over yrpc and over gRPC, though no
// interceptor saw it.
func TestRefusedOnArrivalCounted(t *testing.T) {
	e := newEnv(t, []rt.ServerOption{rt.WithRegistryToken(true)})
	refused := func() uint64 {
		s, _ := e.srv.Metrics().Call(metrics.Server, testDesc.Name, "Echo")
		return s.Codes["Unauthenticated"]
	}
	if _, err := call(ctxT(t), e.cli, &testDesc, 0, "x"); rt.CodeOf(err) != rt.Unauthenticated {
		t.Fatalf("yrpc call without the token: %v", err)
	}
	n := refused()
	if n == 0 {
		t.Fatalf("server metrics count no refused yrpc call: %+v", e.srv.Metrics())
	}
	g, err := rt.NewClient(rt.WithAddrs("grpc://" + e.lis.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := call(ctxT(t), g, &testDesc, 0, "x"); rt.CodeOf(err) != rt.Unauthenticated {
		t.Fatalf("gRPC call without the token: %v", err)
	}
	if refused() <= n {
		t.Errorf("server metrics count no refused gRPC call: %+v", e.srv.Metrics())
	}
}

// A client the server refuses for its certificate (none, or one whose
// issuer the server does not accept) is told what to look at, besides
// TLS's bare alert.
func TestClientCertificateRefusalHints(t *testing.T) {
	ca := testcerts.NewCA(t, "test CA")
	other := testcerts.NewCA(t, "other CA")
	e := newTLSEnv(t, &tls.Config{Certificates: []tls.Certificate{ca.Issue(t, testcerts.Leaf{CN: "127.0.0.1"})},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool})
	for _, tc := range []struct {
		name  string
		certs []tls.Certificate
		want  string
	}{
		{"none", nil, "give the client one"},
		{"another CA's", []tls.Certificate{other.Issue(t, testcerts.Leaf{CN: "client", Client: true})}, "does not accept its issuer"},
	} {
		cli := e.client(rt.WithTLS(&tls.Config{RootCAs: ca.Pool, Certificates: tc.certs}))
		_, err := call(ctxT(t), cli, &testDesc, 0, "x")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), e.addr) {
			t.Errorf("%s: %v; want an error naming %s and saying %q", tc.name, err, e.addr, tc.want)
		}
	}
}

package rt_test

import (
	"context"
	"crypto/tls"
	"io"
	"testing"

	"github.com/yrpc/yrpc/internal/testcerts"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
)

// A per-app rate limit keys an authenticated caller's calls on its
// identity, not on the app name it claims: identity A, drained under app
// "a", stays limited when it claims "b", "c" or "d", and identity B
// claiming A's app "a" keeps its own bucket. Before, each new claim got a
// fresh bucket, so a limited caller escaped its limit by renaming itself,
// and could drain another app's bucket by borrowing its name. Both ways
// of authenticating: the client certificate (no Authenticator) and an
// Authenticator's principal (bearer tokens).
func TestPerAppLimitKeysOnIdentity(t *testing.T) {
	checkLeaks(t)
	ca := testcerts.NewCA(t, "test CA")
	leaf := ca.Issue(t, testcerts.Leaf{CN: "server"})
	cert := func(id string) []rt.ClientOption {
		return []rt.ClientOption{rt.WithTLS(testcerts.ClientConfig(ca, ca.Issue(t, testcerts.Leaf{CN: id, SPIFFE: "spiffe://example.org/" + id, Client: true})))}
	}
	token := func(id string) []rt.ClientOption {
		return []rt.ClientOption{rt.WithTLS(testcerts.ClientConfig(ca)), rt.WithCredentials(rt.BearerToken{Token: "token-of-" + id})}
	}
	for _, tc := range []struct {
		name string
		cfg  *tls.Config
		opts []rt.ServerOption
		as   func(id string) []rt.ClientOption
	}{
		{"client certificate", testcerts.ServerConfig(leaf, ca), nil, cert},
		{"authenticator", testcerts.ServerConfig(leaf, nil),
			[]rt.ServerOption{rt.WithAuthenticator(rt.BearerTokens(map[string]string{"token-of-A": "A", "token-of-B": "B"}))}, token},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := perAppLimit(t, testDesc.Name)
			// The clock never moves: a drained bucket stays drained.
			e := newTLSEnv(t, tc.cfg, append(tc.opts, rt.WithRegistry(reg.Conn()), rt.WithClock(newFakeClock()))...)
			ctx := ctxT(t)
			a := e.client(append(tc.as("A"), rt.WithApp("a"))...)
			untilLimited(t, "call", func() error { _, err := call(ctx, a, &testDesc, 0, "x"); return err })
			ran := e.impl.calls.Load()
			for _, app := range []string{"b", "c", "d", ""} {
				var md rt.MD
				_, err := call(ctx, e.client(append(tc.as("A"), rt.WithApp(app))...), &testDesc, 0, "x", rt.ResponseMetadata(&md))
				if rt.CodeOf(err) != rt.ResourceExhausted {
					t.Errorf("identity A claiming app %q: %v, want ResourceExhausted (A's bucket is empty)", app, err)
				}
				// Refused unrun, as every rate limit refuses: the client
				// may try another provider.
				if md.Get("yrpc-refused") == "" {
					t.Errorf("identity A claiming app %q: response metadata %q, want it marked refused", app, md)
				}
			}
			if n := e.impl.calls.Load(); n != ran {
				t.Errorf("the handler ran %d refused calls", n-ran)
			}
			if _, err := call(ctx, e.client(append(tc.as("B"), rt.WithApp("a"))...), &testDesc, 0, "x"); err != nil {
				t.Errorf("identity B claiming A's app: %v, want its own bucket", err)
			}
		})
	}
}

// Streams too: with an Authenticator, a per-app limit counts the streams
// an identity opens in its bucket whatever app it claims.
func TestPerAppStreamLimitKeysOnPrincipal(t *testing.T) {
	reg := perAppLimit(t, feedDesc.Name)
	auth := rt.WithAuthenticator(rt.BearerTokens(map[string]string{"token-of-A": "A", "token-of-B": "B"}))
	e := newEnvWith(t, func(s *rt.Server) { s.RegisterService(&feedDesc, newFeedImpl()) },
		[]rt.ServerOption{auth, rt.WithRegistry(reg.Conn()), rt.WithClock(newFakeClock())})
	ctx := ctxT(t)
	// open opens a server stream as id claiming app, and reads it to
	// its end: nil if it was served.
	open := func(id, app string) error {
		cli, err := rt.NewClient(rt.WithAddrs(e.lis.Addr().String()), rt.WithApp(app),
			rt.WithCredentials(rt.BearerToken{Token: "token-of-" + id, AllowPlaintext: true}))
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		s, err := stream(ctx, cli, 0)
		if err != nil {
			return err
		}
		if err := s.Send(&msg{S: "1"}); err != nil {
			return err
		}
		if err := s.CloseSend(); err != nil {
			return err
		}
		if _, err := recvAll(t, s); err != io.EOF {
			return err
		}
		return nil
	}
	untilLimited(t, "stream", func() error { return open("A", "a") })
	for _, app := range []string{"b", "c"} {
		if err := open("A", app); rt.CodeOf(err) != rt.ResourceExhausted {
			t.Errorf("identity A claiming app %q: %v, want ResourceExhausted", app, err)
		}
	}
	if err := open("B", "a"); err != nil {
		t.Errorf("identity B claiming A's app: %v, want its own bucket", err)
	}
}

// perAppLimit returns a registry that sets service a per-app rate limit
// of 1 call a second, 2 at once.
func perAppLimit(t *testing.T, service string) *registry.Memory {
	t.Helper()
	reg := registry.NewMemory()
	t.Cleanup(func() { reg.Close() })
	if err := reg.UpdateConfig(context.Background(), registry.Key{Service: service}, func(c *registry.Config) error {
		c.RateLimit = &registry.RateLimit{Rate: 1, Burst: 2, PerApp: true}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return reg
}

// untilLimited calls try until it fails with ResourceExhausted: the server
// learns a limit through its registry watch, so the first calls may run.
// Any other error, or 10,000 calls served, fails t.
func untilLimited(t *testing.T, what string, try func() error) {
	t.Helper()
	for i := 0; ; i++ {
		err := try()
		if rt.CodeOf(err) == rt.ResourceExhausted {
			return
		}
		if err != nil || i > 10_000 {
			t.Fatalf("%s %d before the limit bit: %v", what, i, err)
		}
	}
}

package zkreg

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/yrpc/yrpc/internal/testcerts"
	"github.com/yrpc/yrpc/internal/zktest"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/rt/registry/registrytest"
)

// TestTLS runs a locked-down registry over TLS to ZooKeeper's
// secureClientPort (a server of the test's own, with a certificate made
// here), and checks that a client that does not trust the server's CA
// gets no session and an error naming the handshake.
func TestTLS(t *testing.T) {
	zktest.Addr(t) // runs with the other ZooKeeper tests
	ca := testcerts.NewCA(t, "yrpc test CA")
	_, secure := zktest.StartTLSServer(t, zktest.TLSOptions{CA: ca})
	pool := ca.Pool
	e := &env{t: t, zk: secure, root: "/yrpctls"}
	o := e.options()
	o.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	o.ACL, o.Auth = lockedPolicy(t), []Credential{provCred, opsCred}
	p := e.open(o)
	c := e.open(Options{Servers: []string{secure}, Root: e.root, SessionTimeout: testSession, TLS: &tls.Config{RootCAs: pool}})
	k := registry.Key{Service: "pkg.TLS"}
	mustRegister(t, p, prov(k, "10.0.0.1:80"))
	h := watchHistory(t, c, k)
	h.WaitFor(t, "the provider, over TLS", registrytest.HasAddrs("10.0.0.1:80"))
	if err := p.UpdateConfig(context.Background(), k, func(cfg *registry.Config) error {
		cfg.RateLimit = &registry.RateLimit{Rate: 5, Burst: 5}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor(t, "the config, over TLS", func(s registry.Snapshot) bool { return s.Config.RateLimit != nil })

	// Two servers that never answer the TLS handshake hold New a third
	// of the session timeout each, as they do without TLS
	// (TestSilentServersSkipped).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	start := time.Now()
	s1, s2 := newSilent(t), newSilent(t)
	r, err := New(ctx, Options{Servers: []string{s1.addr, s2.addr, secure}, Root: e.root,
		SessionTimeout: silentTimeout, TLS: &tls.Config{RootCAs: pool}})
	cancel()
	if err != nil {
		t.Fatalf("New with two silent servers: %v", err)
	}
	r.Close()
	t.Logf("session over TLS with two silent servers after %v", time.Since(start).Round(time.Millisecond))
	checkHeld(t, silentTimeout*2/3, s1, s2)

	for _, tc := range []struct {
		name string
		tls  *tls.Config
		want string
	}{
		{"untrusted CA", &tls.Config{}, "certificate signed by unknown authority"},
		{"wrong name", &tls.Config{RootCAs: pool, ServerName: "zk.example"}, "zk.example"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		start := time.Now()
		r, err := New(ctx, Options{Servers: []string{secure}, TLS: tc.tls, FailFast: true})
		t.Logf("%s: %v after %v", tc.name, err, time.Since(start).Round(time.Millisecond))
		cancel()
		if err == nil {
			r.Close()
			t.Errorf("%s: New = nil error", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), "TLS handshake with "+secure) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New = %v; want the TLS handshake error (%q)", tc.name, err, tc.want)
		}
	}
}

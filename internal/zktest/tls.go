package zktest

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/yrpc/yrpc/internal/testcerts"
)

// nettyJars are what Debian's ZooKeeper 3.8 needs on its class path for a
// TLS client port (its manifest leaves Netty's codec out).
var nettyJars = []string{"/usr/share/java/netty-codec.jar", "/usr/share/java/netty-resolver.jar"}

// TLSOptions configure StartTLSServer. The zero value is not usable: CA
// is required.
type TLSOptions struct {
	// CA issues the server's certificate (for 127.0.0.1 and localhost)
	// and is the only CA whose client certificates the server trusts.
	CA *testcerts.CA
	// ClientAuth is ZooKeeper's ssl.clientAuth: "none" (the default),
	// "want" or "need".
	ClientAuth string
	// X509Auth turns on ZooKeeper's X509AuthenticationProvider: a client
	// that shows a certificate gets the x509 identity of its subject DN.
	X509Auth bool
}

// StartTLSServer starts a Server (see StartServer) that also serves TLS
// on a secureClientPort (Netty connection factory), and returns it and
// the TLS address. It skips the test when Debian's libnetty-java is
// missing. It returns once the TLS port has completed a handshake: a
// fresh JVM's first TLS handshake loads and compiles its TLS stack, which
// takes seconds on a loaded machine, longer than the handshake deadlines
// the tests give their clients.
func StartTLSServer(t testing.TB, o TLSOptions) (s *Server, secureAddr string) {
	t.Helper()
	for _, j := range nettyJars {
		if _, err := os.Stat(j); err != nil {
			t.Skipf("zktest: no %s (Debian's libnetty-java): cannot serve TLS", j)
		}
	}
	if o.ClientAuth == "" {
		o.ClientAuth = "none"
	}
	dir := t.TempDir()
	certPEM, keyPEM := testcerts.PEM(t, o.CA.Issue(t, testcerts.Leaf{CN: "zookeeper"}))
	write := func(name string, parts ...[]byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.Join(parts, nil), 0o600); err != nil {
			t.Fatalf("zktest: %v", err)
		}
		return p
	}
	keyStore, trustStore := write("server.pem", keyPEM, certPEM), write("ca.pem", o.CA.PEM())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("zktest: listen: %v", err)
	}
	secureAddr = ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(secureAddr)
	cfg := []string{
		"secureClientPort=" + port,
		"secureClientPortAddress=127.0.0.1",
		"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
		"ssl.keyStore.location=" + keyStore,
		"ssl.keyStore.type=PEM",
		"ssl.trustStore.location=" + trustStore,
		"ssl.trustStore.type=PEM",
		"ssl.clientAuth=" + o.ClientAuth,
	}
	if o.X509Auth {
		cfg = append(cfg, "authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider")
	}
	s = StartServerWith(t, ServerOptions{Config: cfg, Jars: nettyJars})
	warmTLS(t, secureAddr, &tls.Config{RootCAs: o.CA.Pool,
		Certificates: []tls.Certificate{o.CA.Issue(t, testcerts.Leaf{CN: "zktest warm-up", Client: true})}})
	return s, secureAddr
}

// warmTLS handshakes with the TLS server at addr until a handshake
// succeeds, failing t after a minute (a bound for a broken server, not a
// wait: it returns at the first success).
func warmTLS(t testing.TB, addr string, cfg *tls.Config) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond) // spaces the attempts; bounded by ctx
	defer tick.Stop()
	d := tls.Dialer{Config: cfg}
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("zktest: no TLS handshake with %s in a minute: %v", addr, err)
		case <-tick.C:
		}
	}
}

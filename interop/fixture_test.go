package interop_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/yrpc/yrpc/examples/users/userrpc"
	"github.com/yrpc/yrpc/interop"
	"github.com/yrpc/yrpc/interop/userspb"
	"github.com/yrpc/yrpc/rt"
)

// transport is how grpc-go reaches the server: h2c or TLS.
type transport struct {
	name   string
	server []rt.ServerOption
	dial   grpc.DialOption
}

// transports returns h2c (HTTP/2 without TLS: the default server) and
// TLS (a server with a certificate of 127.0.0.1 that the client trusts).
func transports(t *testing.T) []transport {
	serverTLS, clientTLS := testTLS(t)
	return []transport{
		{"h2c", nil, grpc.WithTransportCredentials(insecure.NewCredentials())},
		{"tls", []rt.ServerOption{rt.WithTLS(serverTLS)}, grpc.WithTransportCredentials(credentials.NewTLS(clientTLS))},
	}
}

// testTLS makes a CA and a server certificate of 127.0.0.1 it signed, and
// returns the server's TLS config and a client's that trusts the CA.
func testTLS(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	now := time.Now()
	caKey, leafKey := newKey(), newKey()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "interop test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "users"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}}}
	return server, &tls.Config{RootCAs: pool}
}

// env is a yrpc server of examples/users and a grpc-go client of it.
type env struct {
	srv    *rt.Server
	users  *interop.Users
	addr   string
	conn   *grpc.ClientConn
	client userspb.UsersClient
}

// start serves interop.Users on a loopback port until the test ends.
func start(t *testing.T, tr transport, opts ...rt.ServerOption) *env {
	t.Helper()
	e := &env{
		srv:   rt.NewServer(append(tr.server, opts...)...),
		users: &interop.Users{Waiting: make(chan struct{}, 8), Ended: make(chan error, 8)},
	}
	userrpc.RegisterUsers(e.srv, e.users)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = lis.Addr().String()
	done := make(chan error, 1)
	go func() { done <- e.srv.Serve(context.Background(), lis) }()
	select {
	case <-e.srv.Ready():
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	}
	e.conn, err = grpc.NewClient(e.addr, tr.dial)
	if err != nil {
		t.Fatal(err)
	}
	e.client = userspb.NewUsersClient(e.conn)
	t.Cleanup(func() {
		e.conn.Close()
		e.srv.Close()
		if err := <-done; !errors.Is(err, rt.ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return e
}

// ctxT is a context that ends with the test, within 10 s.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// recv receives from ch, failing the test after 10 s.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("nothing received in 10 s")
		panic("unreachable")
	}
}

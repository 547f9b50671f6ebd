package conn

import (
	"context"
	"crypto/tls"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/yrpc/yrpc/internal/testcerts"
	"github.com/yrpc/yrpc/rt/wire"
)

// Under TLS the connection's peeker still looks at the socket beneath
// (a *tls.Conn is no syscall.Conn): when the server closes the connection
// (TLS's close_notify, then FIN) while nobody reads it, State reports it,
// so the pool replaces the connection before a call is written into it,
// and a lone call's spin-wait (sock.Peeker.Await, the same socket) sees
// its answer arrive. A peeker built on the *tls.Conn would report nothing,
// ever.
func TestPeekerUnderTLS(t *testing.T) {
	ca := testcerts.NewCA(t, "test CA")
	cert, roots := ca.Issue(t, testcerts.Leaf{CN: "server"}), ca.Pool
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closeNow, served := make(chan struct{}), make(chan error, 1)
	go func() {
		c, err := lis.Accept()
		lis.Close()
		if err != nil {
			served <- err
			return
		}
		tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}})
		defer tc.Close() // close_notify, then FIN
		if _, err := wire.ServerHandshake(tc, 0, wire.Settings{}); err != nil {
			served <- err
			return
		}
		<-closeNow
		served <- nil
	}()
	var d net.Dialer
	p := NewPool(lis.Addr().String(), &Config{
		Dial: func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) },
		TLS:  &tls.Config{RootCAs: roots}, Now: time.Now,
	})
	defer p.Close(errorf(Unavailable, "test over"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := p.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.peek.PeerClosed() {
		t.Fatal("an open TLS connection: PeerClosed = true")
	}
	close(closeNow)
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	stop := time.Now().Add(10 * time.Second)
	for {
		if closed, readable := c.peek.State(); closed || readable {
			break
		}
		if time.Now().After(stop) {
			t.Fatal("the server closed the TLS connection: the peeker saw neither its close_notify nor its FIN in 10s")
		}
		runtime.Gosched() // polls a condition; the test does not wait for time
	}
}

//go:build unix

package rt

import (
	"io"
	"net"
	"runtime"
	"testing"
)

// peerClosed tells a connection the peer closed from an open one, with or
// without data waiting, and consumes nothing.
func TestPeerClosed(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := lis.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	cli, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	srv := <-accepted
	if srv == nil {
		t.Fatal("accept failed")
	}

	p := newPeeker(cli)
	if p.peerClosed() {
		t.Fatal("open connection, nothing to read: peerClosed = true")
	}
	if n := testing.AllocsPerRun(100, func() { p.peerClosed() }); n != 0 {
		t.Errorf("peerClosed allocates %v times per call, want 0", n)
	}
	if _, err := srv.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if p.peerClosed() {
		t.Fatal("open connection with a byte waiting: peerClosed = true")
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(cli, b); err != nil || b[0] != 'x' {
		t.Fatalf("the peeked byte was consumed: read %q, %v", b, err)
	}

	srv.Close()
	closed := false
	for i := 0; i < 100000 && !closed; i++ {
		closed = p.peerClosed()
		runtime.Gosched()
	}
	if !closed {
		t.Fatal("the peer closed the connection: peerClosed stayed false")
	}

	// Not a socket: false.
	p1, p2 := net.Pipe()
	defer p1.Close()
	p2.Close()
	if newPeeker(p1).peerClosed() {
		t.Fatal("net.Pipe: peerClosed = true, want false (no peek there)")
	}
}

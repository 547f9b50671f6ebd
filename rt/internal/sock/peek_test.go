//go:build unix

package sock

import (
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

// peerClosed tells a connection the peer closed from an open one, with or
// without data waiting, and consumes nothing.
func TestPeerClosed(t *testing.T) {
	cli, srv := tcpPair(t)

	p := NewPeeker(cli)
	if p.PeerClosed() {
		t.Fatal("open connection, nothing to read: peerClosed = true")
	}
	if n := testing.AllocsPerRun(100, func() { p.PeerClosed() }); n != 0 {
		t.Errorf("peerClosed allocates %v times per call, want 0", n)
	}
	if _, err := srv.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if p.PeerClosed() {
		t.Fatal("open connection with a byte waiting: peerClosed = true")
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(cli, b); err != nil || b[0] != 'x' {
		t.Fatalf("the peeked byte was consumed: read %q, %v", b, err)
	}

	srv.Close()
	closed := false
	for i := 0; i < 100000 && !closed; i++ {
		closed = p.PeerClosed()
		runtime.Gosched()
	}
	if !closed {
		t.Fatal("the peer closed the connection: peerClosed stayed false")
	}

	// Not a socket: false.
	p1, p2 := net.Pipe()
	defer p1.Close()
	p2.Close()
	if NewPeeker(p1).PeerClosed() {
		t.Fatal("net.Pipe: peerClosed = true, want false (no peek there)")
	}
}

// tcpPair returns both ends of a loopback TCP connection, closed at the
// end of the test.
func tcpPair(t *testing.T) (cli, srv net.Conn) {
	t.Helper()
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
	cli, err = net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	srv = <-accepted
	if srv == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { srv.Close() })
	return cli, srv
}

// await returns as soon as input is there, consuming none of it; polls
// that run out of budget make the connection skip ever more chances.
func TestAwait(t *testing.T) {
	cli, srv := tcpPair(t)
	p, gate := NewPeeker(cli), NewSpinGate()

	if _, err := srv.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	p.Await(time.Minute, gate)
	if p.misses != 0 || p.skip != 0 {
		t.Fatalf("input waiting: misses %d, skip %d; want 0, 0 (the poll did not see it)", p.misses, p.skip)
	}
	if n := testing.AllocsPerRun(100, func() { p.Await(time.Minute, gate) }); n != 0 {
		t.Errorf("await allocates %v times per call, want 0", n)
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(cli, b); err != nil || b[0] != 'x' {
		t.Fatalf("the awaited byte was consumed: read %q, %v", b, err)
	}

	// Nothing comes: each miss doubles the chances skipped, up to the cap.
	want := []int{1, 3, 7, 15, 31, 63, 63}
	for i, w := range want {
		p.Await(time.Microsecond, gate)
		if p.misses != w || p.skip != w {
			t.Fatalf("miss %d: misses %d, skip %d; want %d, %d", i+1, p.misses, p.skip, w, w)
		}
		for range w {
			p.Await(time.Minute, gate) // skipped: would block a minute otherwise
		}
		if p.skip != 0 {
			t.Fatalf("after %d skips, skip = %d", w, p.skip)
		}
	}
	if gate.busy.Load() != 0 {
		t.Fatalf("gate holds %d pollers after all awaits returned", gate.busy.Load())
	}

	// A poll that sees input again resets the back-off.
	if _, err := srv.Write([]byte("y")); err != nil {
		t.Fatal(err)
	}
	p.Await(time.Minute, gate)
	if p.misses != 0 {
		t.Fatalf("misses = %d after a poll that saw input, want 0", p.misses)
	}

	// Not a socket: returns at once.
	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	NewPeeker(p1).Await(time.Minute, gate)
}

// The gate lets at most max pollers in.
func TestSpinGate(t *testing.T) {
	g := &SpinGate{max: 2}
	for i := range 2 {
		if !g.enter() {
			t.Fatalf("poller %d of 2 did not enter", i+1)
		}
	}
	if g.enter() {
		t.Fatal("a third entered a gate of 2")
	}
	g.leave()
	if !g.enter() {
		t.Fatal("no one may enter after one left")
	}
	if NewSpinGate().max < 1 {
		t.Fatal("a new gate lets no one in")
	}
}

// LoneAvg passes connections that carry about one call at a time, not a
// loaded one whose load dips for a moment.
func TestLoneAvg(t *testing.T) {
	var a LoneAvg
	for i := range 50 {
		if !a.Add(1) {
			t.Fatalf("sample %d of 1 call: not alone", i+1)
		}
	}
	for range 50 {
		a.Add(64)
	}
	if a.Add(1) || a.Add(0) {
		t.Fatal("a connection with 64 calls in flight passed as alone after one dip")
	}
	alone := false
	for range 50 {
		alone = a.Add(1)
	}
	if !alone {
		t.Fatal("back to one call at a time, still not alone")
	}
}

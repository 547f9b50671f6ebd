package rt_test

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/wire"
)

// idlePassed returns once a connection made now to addr, which makes no
// call, was closed by the server's idle timeout: the server's ticker then
// finished a tick that saw every connection older than it idle past the
// timeout. It dials twice, one after the other, so that the tick which
// closed the first one has ended when the second one is closed.
func idlePassed(t *testing.T, addr string) {
	t.Helper()
	for range 2 {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := wire.ClientHandshake(nc, 0, wire.Settings{}); err != nil {
			t.Fatal(err)
		}
		_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second)) // a bound, not a wait
		if _, err := io.Copy(io.Discard, nc); err != nil {
			t.Fatalf("the idle connection was not closed: %v", err)
		}
		nc.Close()
	}
}

// TestIdleTimeoutSparesOpenStreams: a connection whose only activity is
// a long-lived stream (a subscription the server answers rarely) is not
// idle. Before, the idle timeout counted calls only, and closed the
// connection under the stream, which failed with Unavailable.
func TestIdleTimeoutSparesOpenStreams(t *testing.T) {
	checkLeaks(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	impl := newFeedImpl()
	srv := rt.NewServer(rt.WithIdleTimeout(40*time.Millisecond), rt.WithHeartbeat(-1))
	srv.RegisterService(&feedDesc, impl)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(t.Context(), lis) }()
	t.Cleanup(func() { srv.Close(); <-done })
	cli, err := rt.NewClient(rt.WithAddrs(lis.Addr().String()), rt.WithHeartbeat(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })

	s, err := stream(ctxT(t), cli, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&msg{S: "hold"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if m, err := s.Recv(); err != nil || m.S != "0" {
		t.Fatalf("first message: %v, %v", m, err)
	}
	idlePassed(t, lis.Addr().String())
	impl.release <- struct{}{}
	if m, err := s.Recv(); err != io.EOF {
		t.Fatalf("after the idle timeout passed: %v, %v; want the stream's normal end", m, err)
	}
}

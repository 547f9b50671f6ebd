package stream

import (
	"context"
	"net"
	"testing"

	"github.com/yrpc/yrpc/rt/internal/sock"
	"github.com/yrpc/yrpc/rt/wire"
)

// The connection counts its open streams (a stream alone on its
// connection writes its answers itself): New adds one, Leave takes it
// back once, however often it is called.
func TestOpenStreamsCount(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	w := sock.NewWriter(a, sock.WriterOptions{})
	defer w.Close(net.ErrClosed)
	c := NewConn(w, wire.Settings{}, wire.Settings{})
	s1 := New(c, 1, context.Background(), 0)
	s2 := New(c, 3, context.Background(), 0)
	if n := c.open.Load(); n != 2 {
		t.Fatalf("%d open streams, want 2", n)
	}
	s1.Leave()
	s1.Leave()
	if n := c.open.Load(); n != 1 {
		t.Fatalf("%d open streams after one left twice, want 1", n)
	}
	s2.Leave()
	if n := c.open.Load(); n != 0 {
		t.Fatalf("%d open streams after both left, want 0", n)
	}
}

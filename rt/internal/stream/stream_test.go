package stream

import (
	"context"
	"errors"
	"io"
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

// rawMsg is a message that is its bytes.
type rawMsg struct{ b []byte }

func (m *rawMsg) Size() int                     { return len(m.b) }
func (m *rawMsg) MarshalAppend(b []byte) []byte { return append(b, m.b...) }
func (m *rawMsg) Unmarshal(b []byte) error      { m.b = append(m.b[:0], b...); return nil }

// Messages come out of a stream's queue in the order they came in, and
// as they were then, while a reader that lags behind lets the queue
// fill, partly drains it and lets it fill again (the queue's array is
// reused, its waiting messages moved to its front).
func TestQueueKeepsOrder(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go io.Copy(io.Discard, b) // window updates
	w := sock.NewWriter(a, sock.WriterOptions{})
	defer w.Close(net.ErrClosed)
	c := NewConn(w, wire.Settings{}, wire.Settings{})
	s := New(c, 1, context.Background(), 0)
	in := []byte{0}
	sent, got := 0, 0
	deliver := func(n int) {
		for range n {
			in[0] = byte(sent)
			if err := s.Deliver(in); err != nil {
				t.Fatal(err)
			}
			sent++
		}
		in[0] = 0xff // the queue holds copies
	}
	recv := func(n int) {
		for range n {
			var m rawMsg
			if err := s.Recv(&m); err != nil {
				t.Fatal(err)
			}
			if len(m.b) != 1 || m.b[0] != byte(got) {
				t.Fatalf("message %d is %v", got, m.b)
			}
			got++
		}
	}
	for _, step := range [][2]int{{5, 3}, {7, 4}, {20, 9}, {1, 17}, {40, 40}, {3, 1}, {2, 4}} {
		deliver(step[0])
		recv(step[1])
	}
	if got != sent {
		t.Fatalf("%d of %d messages received", got, sent)
	}
}

// Send fails with ErrCanceled once the stream's context ended, even with
// credit to send: a handler past its deadline, whose client has not reset
// the stream yet, used to hear its message sent while no one would read
// it.
func TestSendAfterContextEnds(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go io.Copy(io.Discard, b)
	w := sock.NewWriter(a, sock.WriterOptions{})
	defer w.Close(net.ErrClosed)
	c := NewConn(w, wire.Settings{}, wire.Settings{})
	ctx, cancel := context.WithCancel(context.Background())
	s := New(c, 1, ctx, 0)
	defer s.Leave()
	if err := s.Send(&rawMsg{b: []byte("before")}); err != nil {
		t.Fatalf("Send before the cancel: %v", err)
	}
	cancel()
	if err := s.Send(&rawMsg{b: []byte("after")}); err != ErrCanceled {
		t.Fatalf("Send after the cancel = %v, want ErrCanceled", err)
	}
	// The stream's end, once known, says more than the context.
	over := errors.New("over")
	s.End(io.EOF, over)
	if err := s.Send(&rawMsg{b: []byte("ended")}); err != over {
		t.Fatalf("Send after End = %v, want End's error", err)
	}
}

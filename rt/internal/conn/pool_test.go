package conn

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// deadlineOnly has a deadline but is never done: it stands for a caller's
// context whose timer has not fired yet when the socket deadline, set from
// it, already has.
type deadlineOnly struct {
	context.Context
	d time.Time
}

func (c deadlineOnly) Deadline() (time.Time, bool) { return c.d, true }

// A server that never sends its preface runs the caller's deadline out
// during the handshake: the caller gets DeadlineExceeded, not a failure of
// the address, and the next caller dials again at once (no backoff).
func TestHandshakePastCallersDeadline(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var held []net.Conn // silent
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	defer func() { lis.Close(); <-done }()
	var d net.Dialer
	p := NewPool(lis.Addr().String(), &Config{Dial: func(ctx context.Context, addr string) (net.Conn, error) {
		return d.DialContext(ctx, "tcp", addr)
	}, Now: time.Now})
	defer p.Close(errorf(Unavailable, "test over"))

	for i := range 2 {
		ctx := deadlineOnly{context.Background(), time.Now().Add(50 * time.Millisecond)}
		_, err := p.Get(ctx)
		var ns *NotSent
		var ce *Error
		if !errors.As(err, &ns) || !errors.As(err, &ce) || ce.Code != DeadlineExceeded {
			t.Fatalf("Get %d: %v, want a not-sent DeadlineExceeded", i+1, err)
		}
		if strings.Contains(err.Error(), "next try") {
			t.Fatalf("Get %d: %v: a caller's deadline backed the address off", i+1, err)
		}
	}
}

// After a failed dial, Get fails at once until the backoff ends on the
// pool's clock, or until RedialNow ends it.
func TestRedialNow(t *testing.T) {
	dials := 0
	p := NewPool("127.0.0.1:1", &Config{Dial: func(context.Context, string) (net.Conn, error) {
		dials++
		return nil, errors.New("connection refused")
	}, Now: func() time.Time { return time.Unix(1000, 0) }})
	defer p.Close(errorf(Unavailable, "test over"))
	for i, want := range []int{1, 1, 2} {
		if i == 2 {
			p.RedialNow()
		}
		_, err := p.Get(context.Background())
		var ns *NotSent
		if !errors.As(err, &ns) || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("Get %d: %v, want a not-sent refusal", i+1, err)
		}
		if dials != want {
			t.Fatalf("Get %d: %d dials, want %d", i+1, dials, want)
		}
	}
}

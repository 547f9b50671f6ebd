package rt_test

import (
	"context"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
)

// paceClock is a clock for the rate limits of streams: each wait moves it
// on by the wait and returns at once (adding the wait to waited), or,
// while hold is set, never returns and is told on held.
type paceClock struct {
	mu     sync.Mutex
	now    time.Time
	waited time.Duration
	waits  int
	hold   bool
	held   chan struct{}
}

func newPaceClock() *paceClock { return &paceClock{now: time.Now(), held: make(chan struct{}, 10)} }

func (c *paceClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *paceClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits++
	ch := make(chan time.Time, 1)
	if c.hold {
		c.held <- struct{}{}
		return ch
	}
	c.now = c.now.Add(d)
	c.waited += d
	ch <- c.now
	return ch
}

func (c *paceClock) total() (time.Duration, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waited, c.waits
}

// near reports whether d is within a millisecond of want (the bucket
// counts tokens in floating point).
func near(d, want time.Duration) bool { return d > want-time.Millisecond && d < want+time.Millisecond }

// TestStreamRecvLimit: a client stream of 12 messages, received at 10
// per second with bursts of 2, makes its handler wait ten times a tenth of
// a second on the server's clock, and delivers every message; the end of
// the stream (io.EOF) does not wait.
func TestStreamRecvLimit(t *testing.T) {
	clock := newPaceClock()
	e := newStreamEnv(t, []rt.ServerOption{rt.WithStreamServerInterceptors(
		rt.StreamRecvLimit(rt.RateLimitPolicy{Rate: 10, Burst: 2}, clock))})
	s, err := stream(ctxT(t), e.cli, 1) // Sum
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	for i := range n {
		if err := s.Send(&msg{S: strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Recv(); err != nil || got.S != "12:11" {
		t.Fatalf("sum: %v, %v; want 12:11", got, err)
	}
	waited, waits := clock.total()
	if want := time.Second; !near(waited, want) || waits != n-2 {
		t.Errorf("the handler waited %v in %d waits, want %v in %d", waited, waits, want, n-2)
	}
}

// TestStreamSendLimit: a bidi stream whose client sends 5 messages at 10
// per second with bursts of 1 waits four times a tenth of a second on the
// client's clock, and every message is echoed.
func TestStreamSendLimit(t *testing.T) {
	clock := newPaceClock()
	e := newStreamEnv(t, nil, rt.WithStreamClientInterceptors(
		rt.StreamSendLimit(rt.RateLimitPolicy{Rate: 10, Burst: 1}, clock)))
	s, err := stream(ctxT(t), e.cli, 2) // Echo
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		m := strconv.Itoa(i)
		if err := s.Send(&msg{S: m}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Recv(); err != nil || got.S != m {
			t.Fatalf("echo of %q: %v, %v", m, got, err)
		}
	}
	s.CloseSend()
	if _, err := s.Recv(); err != io.EOF {
		t.Fatalf("end: %v, want io.EOF", err)
	}
	waited, waits := clock.total()
	if want := 400 * time.Millisecond; !near(waited, want) || waits != 4 {
		t.Errorf("the client waited %v in %d waits, want %v in 4", waited, waits, want)
	}
}

// TestStreamLimitWaitEnds: a wait that the stream's deadline would cut
// short fails at once with ResourceExhausted, and a stream canceled while
// its handler waits ends as canceled streams do, the handler seeing the
// stream's own error.
func TestStreamLimitWaitEnds(t *testing.T) {
	clock := newPaceClock()
	e := newStreamEnv(t, []rt.ServerOption{rt.WithStreamServerInterceptors(
		rt.StreamRecvLimit(rt.RateLimitPolicy{Rate: 0.001, Burst: 1}, clock))})

	// The second message's token comes in 1,000 s; the stream has 20.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := stream(ctx, e.cli, 1) // Sum
	if err != nil {
		t.Fatal(err)
	}
	s.Send(&msg{S: "a"})
	s.Send(&msg{S: "b"})
	s.CloseSend()
	if _, err := s.Recv(); rt.CodeOf(err) != rt.ResourceExhausted || !rt.IsRemote(err) {
		t.Fatalf("stream past its deadline: %v, want ResourceExhausted from the server", err)
	}
	<-e.feed.started
	if err := <-e.feed.ended; rt.CodeOf(err) != rt.ResourceExhausted {
		t.Fatalf("handler: %v, want ResourceExhausted", err)
	}

	// Without a deadline the handler waits (the clock holds) until the
	// client cancels.
	clock.mu.Lock()
	clock.hold = true
	clock.mu.Unlock()
	ctx, cancel = context.WithCancel(context.Background())
	s, err = stream(ctx, e.cli, 1)
	if err != nil {
		t.Fatal(err)
	}
	s.Send(&msg{S: "a"})
	s.Send(&msg{S: "b"})
	<-e.feed.started
	<-clock.held // the handler waits for the token of "b"
	cancel()
	if err := <-e.feed.ended; rt.CodeOf(err) != rt.Canceled {
		t.Fatalf("handler of the canceled stream: %v, want Canceled", err)
	}
}

package rt_test

import (
	"context"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/metrics"
)

// retriedFeed is test.Feed whose Count is idempotent and retried (3
// tries, no backoff) while it has received nothing.
func retriedFeed() *rt.ServiceDesc {
	sd := feedDesc
	sd.Methods = slices.Clone(feedDesc.Methods)
	sd.Methods[0].Policy.Idempotent = true
	sd.Methods[0].Policy.Retry = rt.RetryPolicy{Tries: 3}
	return &sd
}

// openCount opens sd's Count with request n and returns the stream.
func openCount(t *testing.T, ctx context.Context, cli *rt.Client, sd *rt.ServiceDesc, n string) *rt.GenericClientStream[msg, msg] {
	t.Helper()
	cs, err := cli.NewStream(ctx, sd, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := &rt.GenericClientStream[msg, msg]{ClientStreamer: cs}
	if err := s.Send(&msg{S: n}); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	return s
}

// clientEvents returns the client's events: whole streams (Attempt 0)
// and attempts.
func (o *streamEvents) clientEvents() (calls, attempts []metrics.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range o.client {
		if e.Attempt == 0 {
			calls = append(calls, e)
		} else {
			attempts = append(attempts, e)
		}
	}
	return calls, attempts
}

// Streams are reported as unary calls are: one event per try (Attempt n,
// its provider) and one per stream (Attempt 0, no provider) with the
// stream's final code and whole duration, whether it was tried again
// elsewhere before its first response or not.
func TestStreamMetricsPerAttempt(t *testing.T) {
	obs := &streamEvents{}
	c := newCluster(t, 2, rt.WithObserver(obs))
	c.feeds[0].refuse.Store(int32(rt.Unavailable)) // fails before the first message
	sd := retriedFeed()
	ctx := ctxT(t)
	run := func(i int) {
		s := openCount(t, ctx, c.cli, sd, "hold")
		if m, err := s.Recv(); err != nil || m.S != "0" {
			t.Fatalf("stream %d: first message %v, %v", i, m, err)
		}
		c.clock.Advance(time.Second) // the stream's whole time, not its first try's
		c.feeds[1].release <- struct{}{}
		if _, err := s.Recv(); err != io.EOF {
			t.Fatalf("stream %d: %v, want io.EOF", i, err)
		}
		waitUntil(t, func() bool { calls, _ := obs.clientEvents(); return len(calls) >= i+1 })
	}
	streams := 0
	retried := func() int { return int(c.feeds[0].refused.Load()) }
	for streams < 40 && (retried() == 0 || retried() == streams) {
		run(streams)
		streams++
	}
	// One more stream seen end to end: a late duplicate event of the
	// others would be in by now.
	run(streams)
	streams++
	// A failed try reports when its end is handled, which may come after
	// the stream's next try.
	waitUntil(t, func() bool { _, attempts := obs.clientEvents(); return len(attempts) >= streams+retried() })
	calls, attempts := obs.clientEvents()
	t.Logf("%d streams, %d retried; %d stream events, %d attempt events", streams, retried(), len(calls), len(attempts))
	if len(calls) != streams {
		t.Fatalf("%d stream events (Attempt 0) for %d streams, want one each", len(calls), streams)
	}
	if retried() == 0 || retried() == streams {
		t.Fatalf("%d of %d streams were retried: want some retried and some not", retried(), streams)
	}
	for _, e := range calls {
		if e.Instance != "" || e.Code != "OK" || e.Latency < time.Second {
			t.Errorf("stream event %+v: want no instance, OK and the stream's whole time (≥ 1s)", e)
		}
	}
	var failed, ok, second int
	for _, e := range attempts {
		switch {
		case e.Code == "Unavailable" && e.Instance == c.addr(0) && e.Attempt == 1:
			failed++
		case e.Code == "OK" && e.Instance == c.addr(1) && e.Latency >= time.Second:
			ok++
			if e.Attempt == 2 {
				second++
			}
		default:
			t.Errorf("unexpected attempt event %+v", e)
		}
	}
	if failed != retried() || second != retried() || ok != streams {
		t.Fatalf("attempt events: %d failed on %s (want %d, attempt 1), %d OK on %s (want %d, %d of them attempt 2, want %d)",
			failed, c.addr(0), retried(), ok, c.addr(1), streams, second, retried())
	}
}

// A server stream whose try failed while a retry could follow, and whose
// caller then gives up on it (cancels without reading), is still
// reported once, with its try's code.
func TestStreamAbandonedAfterAFailedTry(t *testing.T) {
	obs := &streamEvents{}
	c := newCluster(t, 1, rt.WithObserver(obs))
	c.feeds[0].refuse.Store(int32(rt.Unavailable))
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	openCount(t, ctx, c.cli, retriedFeed(), "1")
	waitUntil(t, func() bool { _, attempts := obs.clientEvents(); return len(attempts) == 1 })
	if calls, _ := obs.clientEvents(); len(calls) != 0 {
		t.Fatalf("stream events %+v before the caller decided", calls)
	}
	cancel()
	waitUntil(t, func() bool { calls, _ := obs.clientEvents(); return len(calls) == 1 })
	calls, attempts := obs.clientEvents()
	if calls[0].Code != "Unavailable" || attempts[0].Code != "Unavailable" || attempts[0].Attempt != 1 {
		t.Fatalf("stream event %+v, attempt %+v: want Unavailable, attempt 1", calls[0], attempts[0])
	}
}

// breakerOf returns the state of provider i's breaker for test.Feed.
func (c *cluster) breakerOf(i int) string {
	for _, p := range c.cli.Providers(&feedDesc) {
		if p.Addr == c.addr(i) {
			return p.Breaker
		}
	}
	return ""
}

// A provider whose streams keep failing before their first message gets
// its breaker opened: later streams go to the other provider. Once it
// serves again, the breaker's probes (half-open, on the client's clock)
// close it, and streams reach it again.
func TestStreamBreaker(t *testing.T) {
	c := newCluster(t, 2)
	c.feeds[0].refuse.Store(int32(rt.Unavailable))
	ctx := ctxT(t)
	count := func() error {
		got, err := recvAll(t, openCount(t, ctx, c.cli, &feedDesc, "1"))
		if err == io.EOF && len(got) != 1 {
			t.Fatalf("Count 1: %q", got)
		}
		return err
	}
	n := 0
	for ; c.breakerOf(0) != "open"; n++ {
		if n == 300 {
			t.Fatalf("breaker of %s %q after %d streams, %d of them failed there", c.addr(0), c.breakerOf(0), n, c.feeds[0].refused.Load())
		}
		if err := count(); err != io.EOF && rt.CodeOf(err) != rt.Unavailable {
			t.Fatalf("stream %d: %v", n, err)
		}
	}
	t.Logf("breaker of %s open after %d streams (%d failed there)", c.addr(0), n, c.feeds[0].refused.Load())
	refused := c.feeds[0].refused.Load()
	for i := range 50 {
		if err := count(); err != io.EOF {
			t.Fatalf("stream %d with the failing provider's breaker open: %v", i, err)
		}
	}
	if d := c.feeds[0].refused.Load() - refused; d != 0 {
		t.Fatalf("%d streams reached %s with its breaker open", d, c.addr(0))
	}

	c.feeds[0].refuse.Store(0)
	c.clock.Advance(time.Minute) // past OpenFor: half-open
	for n = 0; c.breakerOf(0) != "closed"; n++ {
		if n == 300 {
			t.Fatalf("breaker of the recovered %s %q after %d streams", c.addr(0), c.breakerOf(0), n)
		}
		if err := count(); err != io.EOF {
			t.Fatalf("stream %d after the recovery: %v", n, err)
		}
	}
	served := len(c.feeds[0].started)
	for range 40 {
		if err := count(); err != io.EOF {
			t.Fatal(err)
		}
	}
	if len(c.feeds[0].started) == served {
		t.Fatalf("no stream of 40 reached %s once its breaker closed", c.addr(0))
	}
}

// A lost connection ends every stream on it; it counts once against its
// provider's breaker, as it does for unary calls, not once per stream.
func TestStreamConnectionLossCountsOnce(t *testing.T) {
	var c *cluster
	conns := make(chan net.Conn, 10)
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		nc, err := c.net.Dial(ctx, addr)
		if err == nil {
			conns <- nc
		}
		return nc, err
	}
	c = newCluster(t, 1, rt.WithDialer(dial))
	ctx := ctxT(t)
	var streams []*rt.GenericClientStream[msg, msg]
	for range 10 {
		streams = append(streams, openCount(t, ctx, c.cli, &feedDesc, "block"))
		<-c.feeds[0].started
	}
	(<-conns).Close() // the connection is lost under the client
	for i, s := range streams {
		if _, err := s.Recv(); rt.CodeOf(err) != rt.Unavailable || rt.IsRemote(err) {
			t.Fatalf("stream %d: %v, want Unavailable from the client's side", i, err)
		}
	}
	if b := c.breakerOf(0); b != "closed" {
		t.Fatalf("breaker %q after one lost connection that ended %d streams, want closed", b, len(streams))
	}
	if got, err := recvAll(t, openCount(t, ctx, c.cli, &feedDesc, "1")); err != io.EOF || len(got) != 1 {
		t.Fatalf("a stream after the loss: %q, %v", got, err)
	}
}

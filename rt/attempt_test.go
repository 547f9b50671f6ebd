package rt_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/yrpc/yrpc/rt"
)

// attemptLog is a client interceptor that keeps, for the call it runs
// around, the tries OnAttempt reports, as they stand when next returns.
type attemptLog struct {
	mu    sync.Mutex
	calls [][]rt.Attempt // one per call, in the order calls ended
}

func (l *attemptLog) intercept(ctx context.Context, info *rt.CallInfo, req, resp rt.Message, next rt.InvokeFunc) error {
	var mu sync.Mutex
	var got []rt.Attempt
	if !rt.OnAttempt(ctx, func(a rt.Attempt) {
		mu.Lock()
		got = append(got, a)
		mu.Unlock()
	}) {
		return rt.Errorf(rt.Internal, "OnAttempt found no call in the interceptor's context")
	}
	err := next(ctx, info, req, resp)
	mu.Lock()
	tries := slices.Clone(got)
	mu.Unlock()
	l.mu.Lock()
	l.calls = append(l.calls, tries)
	l.mu.Unlock()
	return err
}

// last returns the tries of the last call that ended.
func (l *attemptLog) last() []rt.Attempt {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls[len(l.calls)-1]
}

// TestOnAttempt: an interceptor learns every try of its call, with the
// provider, the protocol and the outcome, before its next returns: the
// failed try and the retry of a failover call, and every fork of a
// forked one (the losers included, though the call returns with the
// first answer).
func TestOnAttempt(t *testing.T) {
	var log attemptLog
	c := newClusterWith(t, 3, func(i int, impl *testImpl) { impl.fail = i == 0 },
		rt.WithClock(wallClock{}), rt.WithRetryBudget(1, 1000), rt.WithClientInterceptors(log.intercept))
	ctx := ctxT(t)

	// Retry (index 2): calls until one starts at the failing provider
	// (the balancer picks at random among the healthy-looking; 200 calls
	// miss a third of the providers with odds of 1 in 10^35) and then
	// tries another.
	retried := false
	for i := 0; i < 200 && !retried; i++ {
		if _, err := call(ctx, c.cli, &testDesc, 2, "hi"); err != nil {
			t.Fatal(err)
		}
		tries := log.last()
		for j, a := range tries {
			failing := a.Addr == c.addr(0)
			if a.N != j+1 || a.Protocol != rt.ProtocolYRPC || a.Start.IsZero() || a.Duration < 0 ||
				failing != (rt.CodeOf(a.Err) == rt.Unavailable) || !failing && a.Err != nil {
				t.Errorf("try %d of %d: %+v; want N %d, yrpc, a start, Unavailable exactly at %s", j+1, len(tries), a, j+1, c.addr(0))
			}
		}
		if len(tries) == 0 || tries[len(tries)-1].Err != nil {
			t.Fatalf("tries of a call that succeeded: %+v; want the last one to succeed", tries)
		}
		retried = retried || len(tries) == 2
	}
	if !retried {
		t.Errorf("no call tried the failing provider and then another: %+v", log.calls)
	}

	// Fork (index 4): three forks, one per provider, all reported by
	// the time the call returns.
	before := c.obs.attempts.Load()
	if _, err := call(ctx, c.cli, &testDesc, 4, "hi"); err != nil {
		t.Fatal(err)
	}
	tries := log.last()
	addrs := make([]string, len(tries))
	for i, a := range tries {
		addrs[i] = a.Addr
	}
	slices.Sort(addrs)
	if want := []string{c.addr(0), c.addr(1), c.addr(2)}; !slices.Equal(addrs, want) {
		t.Errorf("forks at %v; want one at each of %v", addrs, want)
	}
	if n := c.obs.attempts.Load() - before; n != int64(len(tries)) {
		t.Errorf("the Observer saw %d tries of the forked call, OnAttempt %d", n, len(tries))
	}

	if rt.OnAttempt(ctx, func(rt.Attempt) { t.Error("called") }) {
		t.Error("OnAttempt outside an interceptor reported true")
	}
}

// TestOnAttemptGRPC: a try on a provider reached over gRPC says so, with
// the provider's address as the client was given it.
func TestOnAttemptGRPC(t *testing.T) {
	var log attemptLog
	g := newGRPCTarget(t, false, nil, rt.WithClientInterceptors(log.intercept))
	if _, err := call(ctxT(t), g.cli, &testDesc, 0, "hi"); err != nil {
		t.Fatal(err)
	}
	if tries := log.last(); len(tries) != 1 || tries[0].Protocol != rt.ProtocolGRPC || tries[0].Addr != "grpc://"+g.addr || tries[0].Err != nil {
		t.Errorf("tries = %+v; want one, over grpc, at grpc://%s, OK", tries, g.addr)
	}
}

// TestOnAttemptStream: a stream interceptor learns the stream's try, with
// its provider and protocol, before RecvMsg returns the end the provider
// sent (over yrpc's wire and over gRPC; 50 streams each, since the end
// and its report come from another goroutine), and a stream that never
// opened made no try.
func TestOnAttemptStream(t *testing.T) {
	e := newGRPCEnvWith(t, nil)
	for _, addr := range []string{e.addr, "grpc://" + e.addr} {
		var mu sync.Mutex
		var got []rt.Attempt
		cli := grpcCli(t, rt.WithAddrs(addr), rt.WithStreamClientInterceptors(
			func(ctx context.Context, info *rt.CallInfo, next rt.Streamer) (rt.ClientStreamer, error) {
				mu.Lock()
				got = got[:0]
				mu.Unlock()
				if !rt.OnAttempt(ctx, func(a rt.Attempt) {
					mu.Lock()
					got = append(got, a)
					mu.Unlock()
				}) {
					return nil, rt.Errorf(rt.Internal, "OnAttempt found no stream in the interceptor's context")
				}
				return next(ctx, info)
			}))
		want := rt.ProtocolYRPC
		if addr != e.addr {
			want = rt.ProtocolGRPC
		}
		for range 50 {
			if err := readToEnd(openProbe(ctxT(t), cli, 5, "3")); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			tries := slices.Clone(got)
			mu.Unlock()
			if len(tries) != 1 || tries[0].N != 1 || tries[0].Addr != addr || tries[0].Protocol != want || tries[0].Err != nil || tries[0].Start.IsZero() {
				t.Fatalf("%s: tries when RecvMsg returned io.EOF: %+v; want one, at %s over %s, OK", addr, tries, addr, want)
			}
		}
		// A stream its caller cancels: its try is reported before the
		// stream's Context ends (what an access log's line or a span
		// waits on when no RecvMsg does), and before a RecvMsg that
		// waited or a SendMsg after the cancel returns Canceled.
		for i := range 30 {
			ctx, cancel := context.WithCancel(ctxT(t))
			defer cancel()
			cs, err := cli.NewStream(ctx, &probeDesc, 7)
			if err != nil {
				t.Fatal(err)
			}
			if err := cs.SendMsg(&msg{S: "a"}); err != nil {
				t.Fatal(err)
			}
			if err := cs.RecvMsg(new(msg)); err != nil {
				t.Fatal(err)
			}
			var how string
			switch i % 3 {
			case 0:
				how = "Context ended"
				cancel()
				<-cs.Context().Done()
				if err := cs.Context().Err(); err != context.Canceled {
					t.Fatalf("%s: the canceled stream's Context().Err() = %v, want context.Canceled", addr, err)
				}
			case 1:
				how = "waiting RecvMsg returned"
				recv := make(chan error, 1)
				go func() { recv <- cs.RecvMsg(new(msg)) }()
				cancel()
				if err := <-recv; rt.CodeOf(err) != rt.Canceled {
					t.Fatalf("%s: RecvMsg of the canceled stream: %v, want Canceled", addr, err)
				}
			case 2:
				how = "SendMsg returned"
				cancel()
				if err := cs.SendMsg(&msg{S: "b"}); rt.CodeOf(err) != rt.Canceled {
					t.Fatalf("%s: SendMsg after the cancel: %v, want Canceled", addr, err)
				}
			}
			mu.Lock()
			tries := slices.Clone(got)
			mu.Unlock()
			if len(tries) != 1 || tries[0].Addr != addr || rt.CodeOf(tries[0].Err) != rt.Canceled {
				t.Fatalf("%s: tries when the canceled stream's %s: %+v; want one, at %s, Canceled", addr, how, tries, addr)
			}
		}
		ctx, cancel := context.WithCancel(ctxT(t))
		cancel()
		if _, err := cli.NewStream(ctx, &probeDesc, 5); rt.CodeOf(err) != rt.Canceled {
			t.Fatalf("%s: NewStream with a canceled context: %v", addr, err)
		}
		mu.Lock()
		if len(got) != 0 {
			t.Errorf("%s: a stream that did not open reported tries %+v", addr, got)
		}
		mu.Unlock()
	}
}

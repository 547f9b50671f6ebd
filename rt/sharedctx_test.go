package rt_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
)

// A caller that reads its own answer keeps the interrupt it registered
// with its context for the next call with the same context. That kept
// registration must still end the read when the context is canceled, and
// one kept for a context that ends while another context's call waits
// must not fail that call.
func TestSharedContextInterrupts(t *testing.T) {
	e := newEnv(t, nil)
	sleep := func(ctx context.Context) chan error {
		errc := make(chan error, 1)
		go func() {
			_, err := call(ctx, e.cli, &testDesc, 0, "sleep")
			errc <- err
		}()
		<-e.impl.started
		return errc
	}
	quick := func(ctx context.Context) {
		for i := range 20 {
			if got, err := call(ctx, e.cli, &testDesc, 0, strconv.Itoa(i)); err != nil || got != strconv.Itoa(i) {
				t.Fatalf("call %d: %q, %v", i, got, err)
			}
		}
	}
	for i := range 20 {
		// Shared: quick calls, then one that waits for the cancel.
		parent, stop := context.WithTimeout(context.Background(), 5*time.Second)
		shared, cancel := context.WithCancel(parent)
		quick(shared)
		errc := sleep(shared)
		cancel()
		if err := <-errc; rt.CodeOf(err) != rt.Canceled {
			t.Fatalf("round %d: the sleeping call with the shared context: %v, want Canceled (a lost interrupt ends it at the parent's deadline)", i, err)
		}
		<-e.impl.ended

		// Another context's call waits while the kept one ends.
		old, cancelOld := context.WithCancel(parent)
		quick(old)
		ctx, cancelNew := context.WithCancel(parent)
		errc = sleep(ctx)
		cancelOld()
		quick(context.Background())
		cancelNew()
		if err := <-errc; rt.CodeOf(err) != rt.Canceled {
			t.Fatalf("round %d: the sleeping call whose context ended last: %v, want Canceled", i, err)
		}
		<-e.impl.ended
		stop()
	}
}

// deadlineConn counts the read deadlines set in the past: the interrupts
// of a reader.
type deadlineConn struct {
	*net.TCPConn
	interrupts *atomic.Int64
}

func (c deadlineConn) SetReadDeadline(t time.Time) error {
	if !t.IsZero() && t.Before(time.Unix(1e9, 0)) {
		c.interrupts.Add(1)
	}
	return c.TCPConn.SetReadDeadline(t)
}

// TestPerCallContextNoInterrupt: a caller that makes a context for each
// call and cancels it when the call is over (context.WithTimeout with a
// deferred cancel) must not interrupt the connection's reads afterwards,
// which would cost the next reader a wake-up and syscalls.
func TestPerCallContextNoInterrupt(t *testing.T) {
	var interrupts atomic.Int64
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return deadlineConn{nc.(*net.TCPConn), &interrupts}, nil
	}
	cli := aliasClient(t, aliasServe(t, nil), rt.WithDialer(dial))
	call := func(i int) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		req, resp := &aliasMsg{S: strconv.Itoa(i)}, new(aliasMsg)
		if err := cli.Invoke(ctx, &aliasDesc, 0, req, resp); err != nil || resp.S != req.S {
			t.Fatalf("call %d: %q, %v", i, resp.S, err)
		}
	}
	for i := range 200 {
		call(i)
	}
	if n := interrupts.Load(); n != 0 {
		t.Errorf("%d reads interrupted by the contexts of calls that were over", n)
	}
}

// errOther is the error of otherContext.
var errOther = fmt.Errorf("the other context ended: %w", context.Canceled)

// otherContext reports errOther when its context is canceled, so that a
// call ended by it is told from one ended by another context.
type otherContext struct{ context.Context }

func (c otherContext) Err() error {
	if c.Context.Err() != nil {
		return errOther
	}
	return nil
}

// TestSharedContextEndsWaitingCalls: calls that share a context, which
// the connection watches for them (from the second call in a row with
// it) instead of each caller selecting on it, all end with Canceled when
// it is canceled, and their handlers see the cancel. Calls of another
// context made while the first is watched end with theirs (errOther)
// and only they do, and a context used after the first
// ended is watched in turn. A lost cancel would end the calls at the
// parent's deadline instead.
func TestSharedContextEndsWaitingCalls(t *testing.T) {
	e := newEnv(t, nil)
	parent, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	quick := func(ctx context.Context) {
		t.Helper()
		for i := range 3 {
			if got, err := call(ctx, e.cli, &testDesc, 0, strconv.Itoa(i)); err != nil || got != strconv.Itoa(i) {
				t.Fatalf("call %d: %q, %v", i, got, err)
			}
		}
	}
	// sleepers starts n calls that wait for their context's end, and
	// returns once every handler runs.
	sleepers := func(ctx context.Context, n int) chan error {
		errc := make(chan error, n)
		for range n {
			go func() {
				_, err := call(ctx, e.cli, &testDesc, 0, "sleep")
				errc <- err
			}()
		}
		for range n {
			<-e.impl.started
		}
		return errc
	}
	ended := func(what string, errc chan error, n int, other bool) {
		t.Helper()
		for range n {
			if err := <-errc; rt.CodeOf(err) != rt.Canceled || errors.Is(err, errOther) != other {
				t.Fatalf("%s: %v, want Canceled by the other context: %v", what, err, other)
			}
			if err := <-e.impl.ended; err != context.Canceled {
				t.Fatalf("%s: the handler saw %v, want context.Canceled", what, err)
			}
		}
	}
	const n = 16
	for round := range 3 {
		shared, cancelShared := context.WithCancel(parent)
		quick(shared) // watched from here on
		watched := sleepers(shared, n)
		ctx, cancelOther := context.WithCancel(parent)
		other := otherContext{ctx}
		quick(other) // not watched: the shared context's calls rely on its watch
		others := sleepers(other, n)
		cancelOther()
		ended("round "+strconv.Itoa(round)+": a call of the other context", others, n, true)
		cancelShared()
		ended("round "+strconv.Itoa(round)+": a call of the watched context", watched, n, false)
		quick(context.Background())
	}
}

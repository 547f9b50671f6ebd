package rt_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/rt"
)

// A call whose context ended before it was sent is not sent: the caller
// gets Canceled (or DeadlineExceeded) and no handler runs for it, as
// streams already behave. Before, a unary call with a canceled context
// went out and ran on the provider for no one, and a oneway call even
// reported success.
func TestCallCanceledBeforeSendingIsNotSent(t *testing.T) {
	e := newEnv(t, nil)
	if _, err := call(ctxT(t), e.cli, &testDesc, 0, "warm"); err != nil {
		t.Fatal(err)
	}
	before := e.impl.calls.Load()
	ctx, cancel := context.WithCancel(ctxT(t))
	cancel()
	_, err := call(ctx, e.cli, &testDesc, 0, "canceled")
	if rt.CodeOf(err) != rt.Canceled || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "test.Echo/Echo") {
		t.Errorf("unary call with a canceled context: %v, want Canceled naming the method", err)
	}
	err = e.cli.Invoke(ctx, &testDesc, 1, &msg{S: "canceled"}, nil)
	if rt.CodeOf(err) != rt.Canceled || !strings.Contains(err.Error(), "test.Echo/Fire") {
		t.Errorf("oneway call with a canceled context: %v, want Canceled naming the method", err)
	}
	// The server reads a connection's frames in order: once this call
	// is answered and nothing is in flight, any request sent before it
	// has run.
	if _, err := call(ctxT(t), e.cli, &testDesc, 0, "sync"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { return e.srv.Stats().InFlight == 0 })
	if n := e.impl.calls.Load() - before; n != 1 {
		t.Errorf("the handler ran %d times, want once (the last call only)", n)
	}
	select {
	case s := <-e.impl.oneways:
		t.Errorf("the oneway handler ran (%q) for a call canceled before it was sent", s)
	default:
	}
}


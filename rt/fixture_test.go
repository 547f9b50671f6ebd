package rt_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/yrpc/yrpc/rt"
)

// msg is a hand-written message for transport tests: its wire form is the
// raw bytes of S.
type msg struct{ S string }

func (m *msg) Size() int                     { return len(m.S) }
func (m *msg) get() string                   { return m.S }
func (m *msg) MarshalAppend(b []byte) []byte { return append(b, m.S...) }
func (m *msg) Unmarshal(b []byte) error {
	if bytes.HasPrefix(b, []byte("bad")) { // string(b) would copy a large message once more
		return errors.New("bad input")
	}
	m.S = string(b)
	return nil
}

// ownedMsg is msg with UnmarshalOwned, as generated messages have it: the
// client hands a response's bytes to its caller, who decodes them.
type ownedMsg struct{ msg }

func (m *ownedMsg) UnmarshalOwned(b []byte) error { return m.msg.Unmarshal(b) }

// testImpl implements the test service; each method's behaviour depends on
// the request: "sleep" waits for the context, "fail:CODE:msg" fails,
// "panic" panics, "reply:X" answers X, anything else echoes.
type testImpl struct {
	slow    time.Duration // every call waits this long first
	fail    bool          // every call fails with Unavailable
	calls   atomic.Int64
	oneways chan string
	started chan struct{}
	ended   chan error
}

func newTestImpl() *testImpl {
	return &testImpl{oneways: make(chan string, 100), started: make(chan struct{}, 100), ended: make(chan error, 100)}
}

func (t *testImpl) echo(ctx context.Context, req *msg) (*msg, error) {
	t.calls.Add(1)
	if t.slow > 0 {
		select {
		case <-time.After(t.slow):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if t.fail {
		return nil, rt.Errorf(rt.Unavailable, "instance failing")
	}
	switch {
	case req.S == "sleep":
		t.started <- struct{}{}
		<-ctx.Done()
		t.ended <- ctx.Err()
		return nil, ctx.Err()
	case strings.HasPrefix(req.S, "fail:"):
		parts := strings.SplitN(req.S, ":", 3)
		n, _ := strconv.Atoi(parts[1])
		return nil, &rt.Error{Code: rt.Code(n), Message: parts[2]}
	case req.S == "panic":
		panic("boom")
	case req.S == "md":
		rt.SetResponseMetadata(ctx, "echo", rt.IncomingMetadata(ctx).Get("k"))
		return &msg{S: "md"}, nil
	case strings.HasPrefix(req.S, "reply:"):
		return &msg{S: strings.TrimPrefix(req.S, "reply:")}, nil
	case req.S == "peer":
		return &msg{S: rt.PeerAddr(ctx).String()}, nil
	case req.S == "whoami":
		p, ok := rt.PeerFrom(ctx)
		if !ok {
			return nil, rt.Errorf(rt.Internal, "no peer in the handler's context")
		}
		return &msg{S: p.SPIFFEID + "|" + p.CommonName + "|" + p.Principal}, nil
	case strings.HasPrefix(req.S, "delay:"):
		d, _ := time.ParseDuration(strings.TrimPrefix(req.S, "delay:"))
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return req, nil
	}
	return req, nil
}

func (t *testImpl) fire(ctx context.Context, req *msg) error {
	t.oneways <- req.S
	return nil
}

var testDesc = rt.ServiceDesc{
	Name: "test.Echo",
	Methods: []rt.MethodDesc{
		{
			Name: "Echo", FullName: "test.Echo/Echo", ID: 0x1001,
			NewRequest:  func() rt.Message { return new(msg) },
			NewResponse: func() rt.Message { return new(msg) },
			Handle: func(impl any, ctx context.Context, req rt.Message) (rt.Message, error) {
				return impl.(*testImpl).echo(ctx, req.(*msg))
			},
			HashKey: func(req rt.Message, dst []byte) []byte { return append(dst, req.(*msg).S...) },
		},
		{
			Name: "Fire", FullName: "test.Echo/Fire", ID: 0x1002, Oneway: true,
			NewRequest: func() rt.Message { return new(msg) },
			Handle: func(impl any, ctx context.Context, req rt.Message) (rt.Message, error) {
				return nil, impl.(*testImpl).fire(ctx, req.(*msg))
			},
		},
		{
			Name: "Retry", FullName: "test.Echo/Retry", ID: 0x1003,
			Policy:      rt.MethodPolicy{Idempotent: true, Retry: rt.RetryPolicy{Tries: 3}},
			NewRequest:  func() rt.Message { return new(msg) },
			NewResponse: func() rt.Message { return new(msg) },
			Handle: func(impl any, ctx context.Context, req rt.Message) (rt.Message, error) {
				return impl.(*testImpl).echo(ctx, req.(*msg))
			},
		},
		{
			Name: "Hedge", FullName: "test.Echo/Hedge", ID: 0x1004,
			Policy:      rt.MethodPolicy{Idempotent: true, Hedge: 20 * time.Millisecond, Retry: rt.RetryPolicy{Tries: 2}},
			NewRequest:  func() rt.Message { return new(msg) },
			NewResponse: func() rt.Message { return new(msg) },
			Handle: func(impl any, ctx context.Context, req rt.Message) (rt.Message, error) {
				return impl.(*testImpl).echo(ctx, req.(*msg))
			},
		},
		{
			Name: "Fork", FullName: "test.Echo/Fork", ID: 0x1005,
			Policy:      rt.MethodPolicy{FaultMode: rt.FaultForking, Forks: 3},
			NewRequest:  func() rt.Message { return new(msg) },
			NewResponse: func() rt.Message { return new(msg) },
			Handle: func(impl any, ctx context.Context, req rt.Message) (rt.Message, error) {
				return impl.(*testImpl).echo(ctx, req.(*msg))
			},
		},
	},
	MethodIndex: func(id uint32) int {
		if id >= 0x1001 && id <= 0x1005 {
			return int(id - 0x1001)
		}
		return -1
	},
}

// unknownDesc has a method the server does not know.
var unknownDesc = rt.ServiceDesc{
	Name: "test.Echo",
	Methods: []rt.MethodDesc{{
		Name: "Nope", FullName: "test.Echo/Nope", ID: 0x9999,
		NewRequest:  func() rt.Message { return new(msg) },
		NewResponse: func() rt.Message { return new(msg) },
	}},
	MethodIndex: func(id uint32) int {
		if id == 0x9999 {
			return 0
		}
		return -1
	},
}

func call(ctx context.Context, c *rt.Client, sd *rt.ServiceDesc, m int, s string, opts ...rt.CallOption) (string, error) {
	var resp ownedMsg // as generated messages: decoded by the caller
	err := c.Invoke(ctx, sd, m, &msg{S: s}, &resp, opts...)
	return resp.S, err
}

// checkLeaks fails the test if goroutines started during it are still
// running at its end (after its other cleanups, registered later, ran).
func checkLeaks(t *testing.T) {
	ignore := goleak.IgnoreCurrent() // now: at cleanup it would ignore the leaks too
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

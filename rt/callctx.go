package rt

import (
	"context"
	"net"
	"sync"
	"time"
)

// callCtx is the context a handler runs under. It costs one allocation per
// call: Done's channel, the deadline timer and the AfterFunc list exist only
// once somebody asks for them. It is canceled when the client sends a cancel
// frame, when the connection closes, when the deadline passes or when the
// handler returns.
type callCtx struct {
	parent    context.Context
	drop      func()    // closes the call's connection
	deadline  time.Time // zero: none
	md        MD
	peer      *Peer  // the connection's
	principal string // the call's, from the Authenticator
	info      *CallInfo

	mu       sync.Mutex
	done     chan struct{}
	err      error
	timer    *time.Timer
	after    map[*afterFunc]struct{}
	respMD   MD
	finished bool

	proto callProto // set before the handler runs, not under mu (after finished: no padding)
}

type afterFunc struct{ f func() }

// CallInfo describes the call a handler or interceptor is serving.
type CallInfo struct {
	Service *ServiceDesc
	Method  *MethodDesc
	Index   int // Method's index in Service.Methods
}

func (c *callCtx) Deadline() (time.Time, bool) {
	if c.deadline.IsZero() {
		return c.parent.Deadline()
	}
	return c.deadline, true
}

func (c *callCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		} else if !c.deadline.IsZero() {
			d := time.Until(c.deadline)
			c.timer = time.AfterFunc(d, func() { c.cancel(context.DeadlineExceeded) })
		}
	}
	return c.done
}

func (c *callCtx) Err() error {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err == nil && !c.deadline.IsZero() && !time.Now().Before(c.deadline) {
		c.cancel(context.DeadlineExceeded)
		return context.DeadlineExceeded
	}
	return err
}

func (c *callCtx) Value(key any) any {
	switch key.(type) {
	case incomingKey:
		return c.md
	case peerKey:
		return c.peer.Addr
	case callInfoKey:
		return c.info
	case serverCallKey:
		return c
	}
	return c.parent.Value(key)
}

// AfterFunc lets context.AfterFunc and context.WithCancel children hook in
// without a goroutine per child.
func (c *callCtx) AfterFunc(f func()) func() bool {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	a := &afterFunc{f: f}
	if c.after == nil {
		c.after = make(map[*afterFunc]struct{})
	}
	c.after[a] = struct{}{}
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if _, ok := c.after[a]; !ok {
			return false
		}
		delete(c.after, a)
		return true
	}
}

// cancel ends the context with err; later calls do nothing.
func (c *callCtx) cancel(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	after := c.after
	c.after = nil
	c.mu.Unlock()
	for a := range after {
		go a.f()
	}
}

// finish marks the response as sent (SetResponseMetadata fails from now
// on), ends the context and returns the response metadata.
func (c *callCtx) finish() MD {
	c.mu.Lock()
	c.finished = true
	md := c.respMD
	c.drop = nil // it refers to the connection, which the context may outlive
	c.mu.Unlock()
	c.cancel(context.Canceled)
	return md
}

func (c *callCtx) String() string { return "rt.callCtx" }

type (
	incomingKey   struct{}
	peerKey       struct{}
	callInfoKey   struct{}
	serverCallKey struct{}
)

// IncomingMetadata returns the request metadata of the call that ctx serves.
func IncomingMetadata(ctx context.Context) MD {
	md, _ := ctx.Value(incomingKey{}).(MD)
	return md
}

// PeerAddr returns the remote address of the call that ctx serves, or nil.
func PeerAddr(ctx context.Context) net.Addr {
	a, _ := ctx.Value(peerKey{}).(net.Addr)
	return a
}

// CallInfoFrom returns the service and method of the call that ctx serves.
func CallInfoFrom(ctx context.Context) (*CallInfo, bool) {
	ci, ok := ctx.Value(callInfoKey{}).(*CallInfo)
	return ci, ok
}

// SetResponseMetadata adds kv (flattened pairs) to the metadata sent back
// with the response of the call that ctx serves. Pairs whose key starts
// with "yrpc-" are dropped: those keys are the runtime's, and a handler
// that passed one on (say, an upstream's answer forwarded whole) must not
// tell its caller that the call was refused unrun ("yrpc-refused", which
// lets clients retry non-idempotent calls elsewhere) or mocked. It reports
// false when ctx is not a handler context or the response was already
// sent.
func SetResponseMetadata(ctx context.Context, kv ...string) bool {
	c, ok := ctx.Value(serverCallKey{}).(*callCtx)
	if !ok {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished {
		return false
	}
	c.respMD = appendUnreserved(c.respMD, Pairs(kv...))
	return true
}

// DropConnection closes the transport connection of the call that ctx
// serves, without answering it: the client sees a broken connection. It is
// meant for fault injection (package rt/fault); it reports false when ctx is
// not a handler context or its call was answered already.
func DropConnection(ctx context.Context) bool {
	c, ok := ctx.Value(serverCallKey{}).(*callCtx)
	if !ok {
		return false
	}
	c.mu.Lock()
	drop := c.drop
	c.mu.Unlock()
	if drop == nil {
		return false
	}
	drop()
	return true
}

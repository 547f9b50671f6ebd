package conn

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/yrpc/yrpc/rt/internal/sock"
	"github.com/yrpc/yrpc/rt/internal/stream"
	"github.com/yrpc/yrpc/rt/wire"
)

// Stream is the client's end of a stream on a Conn. One goroutine may
// send while another receives. It ends when the server closes or resets
// it, when it is Reset, when its context ends (it then resets it with the
// context's code), or when the connection is lost (Unavailable).
type Stream struct {
	c     *Conn
	s     *stream.Stream
	name  string // "pkg.Service/Method", for errors
	ctx   context.Context
	stop  func() bool     // unregisters the context's watch
	onEnd func(end error) // called once when the stream ends

	mu        sync.Mutex
	trailer   []string
	halfDone  bool // CloseSend was called
	over      bool // removed from the connection
	endStatus error
}

// OpenStream opens a stream of r's method (r.Req, r.Resp and r.WantMD
// are not used) on the connection. onEnd (may be nil) is called once when
// the stream ends, with io.EOF for a close with status OK, else the
// stream's error, before Recv returns that end; it must be quick. Errors
// are *Error values, wrapped in *NotSent: nothing was sent when
// OpenStream fails.
func (c *Conn) OpenStream(ctx context.Context, r *Request, onEnd func(error)) (*Stream, error) {
	if c.sc == nil {
		return nil, &NotSent{Err: errorf(Unimplemented, "%s: %s does not support streams (an older yrpc?)", r.Name, c.addr)}
	}
	var timeout time.Duration
	if !r.Deadline.IsZero() {
		timeout = time.Until(r.Deadline)
		if timeout <= 0 {
			return nil, &NotSent{Err: errorf(DeadlineExceeded, "%s: deadline exceeded before opening the stream", r.Name)}
		}
	}
	h := wire.Header{Type: wire.TypeStreamOpen, Method: r.Method, Timeout: timeout}
	if err := c.checkSize(r, &h, 0); err != nil {
		return nil, &NotSent{Err: err}
	}
	cs := &Stream{c: c, name: r.Name, ctx: ctx, onEnd: onEnd}
	c.mu.Lock()
	switch {
	case c.err != nil:
		err := c.err
		c.mu.Unlock()
		return nil, &NotSent{Err: err, Lost: true}
	case c.goaway:
		c.mu.Unlock()
		return nil, &NotSent{Err: errorf(Unavailable, "connection to %s is going away", c.addr)}
	}
	if max := int(c.peer.MaxConcurrentCalls); max > 0 && len(c.pending)+len(c.streams) >= max {
		c.mu.Unlock()
		return nil, &NotSent{Err: errorf(ResourceExhausted, "%s: %d calls in flight on the connection to %s, its limit", r.Name, max, c.addr)}
	}
	c.nextID++
	if c.nextID == 0 {
		c.nextID = 1
	}
	id := c.nextID
	cs.s = stream.New(c.sc, id, ctx, r.MaxMessage)
	c.streams[id] = cs
	// Someone must read the connection while the stream lives.
	handOff := !c.reading
	if handOff {
		c.setReading(true)
	}
	c.mu.Unlock()
	if handOff {
		c.wake <- struct{}{} // capacity 1: the background goroutine is not reading
	}
	err := c.w.Write(func(b []byte) []byte { return wire.AppendStreamOpen(b, id, r.Method, timeout, r.MD) }, sock.Direct)
	if err != nil {
		// Not sent: the caller hears it from OpenStream, not onEnd.
		c.mu.Lock()
		delete(c.streams, id)
		c.mu.Unlock()
		cs.s.Leave()
		c.fail(err)
		return nil, &NotSent{Err: c.failure(), Lost: true}
	}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { cs.abort(ctxError(ctx.Err(), r.Name)) })
		cs.mu.Lock()
		if cs.over {
			stop() // it ended meanwhile; finish had nothing to stop
		} else {
			cs.stop = stop
		}
		cs.mu.Unlock()
	}
	return cs, nil
}

// Send sends m; it fails once the stream is over or CloseSend was called.
func (cs *Stream) Send(m Message) error {
	err := cs.s.Send(m)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, stream.ErrCanceled):
		return ctxError(cs.ctx.Err(), cs.name)
	case errors.Is(err, stream.ErrTooLarge):
		return errorf(ResourceExhausted, "%s: %v", cs.name, err)
	case errors.As(err, new(*Error)):
		return err
	}
	return errorf(Internal, "%s: send: %v", cs.name, err)
}

// Recv receives the next message into m; io.EOF once the server closed
// the stream with status OK, else the stream's error.
func (cs *Stream) Recv(m Message) error {
	err := cs.s.Recv(m)
	switch {
	case err == nil, err == io.EOF:
		return err
	case errors.Is(err, stream.ErrCanceled):
		return ctxError(cs.ctx.Err(), cs.name)
	case errors.As(err, new(*Error)):
		return err
	}
	return decodeError(cs.c.addr, err)
}

// CloseSend half-closes the stream: the server sees the end of its input.
func (cs *Stream) CloseSend() error {
	cs.mu.Lock()
	if cs.halfDone || cs.over {
		cs.mu.Unlock()
		return nil
	}
	cs.halfDone = true
	cs.mu.Unlock()
	cs.s.StopSending(errorf(FailedPrecondition, "%s: send after CloseSend", cs.name))
	id := cs.s.ID()
	return cs.c.w.Write(func(b []byte) []byte { return wire.AppendStreamHalfClose(b, id) }, sock.Direct)
}

// Trailer returns the metadata the server closed the stream with.
func (cs *Stream) Trailer() []string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.trailer
}

// Err returns how the stream ended: nil while it is open, io.EOF for a
// close with status OK, else its error.
func (cs *Stream) Err() error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.endStatus
}

// Reset aborts the stream with code and reason: the server's handler sees
// its context canceled, and this side's Send and Recv fail with err.
func (cs *Stream) Reset(code uint8, reason string, err error) {
	if !cs.finish(err, nil) {
		return
	}
	id := cs.s.ID()
	_ = cs.c.w.Write(func(b []byte) []byte { return wire.AppendStreamReset(b, id, code, reason) }, sock.Queued)
}

// abort resets the stream because its context ended.
func (cs *Stream) abort(err *Error) {
	cs.Reset(err.Code, err.Message, err)
}

// finish ends the stream once: it leaves the connection, and Recv returns
// recvErr once the queue is empty (Send fails with it too). It reports
// whether this call ended it.
func (cs *Stream) finish(recvErr error, trailer []string) bool {
	c := cs.c
	c.mu.Lock()
	if c.streams[cs.s.ID()] == cs {
		delete(c.streams, cs.s.ID())
	}
	c.mu.Unlock()
	cs.s.Leave()
	cs.mu.Lock()
	if cs.over {
		cs.mu.Unlock()
		return false
	}
	cs.over, cs.trailer, cs.endStatus = true, trailer, recvErr
	stop := cs.stop
	cs.mu.Unlock()
	sendErr := recvErr
	if recvErr == io.EOF {
		sendErr = errorf(FailedPrecondition, "%s: the server closed the stream", cs.name)
	}
	// onEnd first: the stream's end is reported (its attempt, the
	// breaker) before Recv can hand it to the caller.
	if cs.onEnd != nil {
		cs.onEnd(recvErr)
	}
	cs.s.End(recvErr, sendErr)
	if stop != nil {
		stop()
	}
	if c.retiredIdle() {
		c.fail(c.goneErr())
	}
	return true
}

// handleStream acts on a stream frame read by the role's holder. It
// returns false when the connection has failed.
func (c *Conn) handleStream(f *wire.Frame) bool {
	if f.Type == wire.TypeWindowUpdate && f.ID == 0 {
		if err := c.sc.Grant(f.Increment); err != nil {
			c.fail(err)
			return false
		}
		return true
	}
	c.mu.Lock()
	cs := c.streams[f.ID]
	c.mu.Unlock()
	if cs == nil { // over here; it may have crossed our reset
		if f.Type == wire.TypeStreamMessage {
			if err := c.sc.Drop(f.Body); err != nil { // the server spent credit on it
				c.fail(err)
				return false
			}
		}
		return true
	}
	switch f.Type {
	case wire.TypeStreamMessage:
		if err := cs.s.Deliver(f.Body); err != nil {
			if stream.IsConnError(err) {
				c.fail(err)
				return false
			}
			code := Internal
			if errors.Is(err, stream.ErrTooLarge) {
				code = ResourceExhausted
			}
			cs.Reset(code, err.Error(), errorf(code, "%s: %v", cs.name, err))
		}
	case wire.TypeWindowUpdate:
		if err := cs.s.Grant(f.Increment); err != nil {
			cs.Reset(Internal, "flow control", errorf(Internal, "%s: the server broke flow control: %v", cs.name, err))
		}
	case wire.TypeStreamClose:
		var md []string
		if len(f.Metadata) > 0 {
			kv, err := wire.ParseMetadata(f.Metadata, nil)
			if err != nil {
				cs.finish(errorf(Internal, "%s: bad trailer from %s: %v", cs.name, c.addr, err), nil)
				return true
			}
			md = kv
		}
		var end error = io.EOF
		if f.Status != 0 {
			end = &Error{Code: f.Status, Message: string(f.Body), Remote: true}
		}
		cs.finish(end, md)
	case wire.TypeStreamReset:
		cs.finish(&Error{Code: f.Status, Message: cs.name + ": reset by the server: " + string(f.Body), Remote: true}, nil)
	default:
		c.fail(errorf(Unavailable, "unexpected %s frame from server %s", f.Type, c.addr))
		return false
	}
	return true
}

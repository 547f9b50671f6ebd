package rt

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/yrpc/yrpc/rt/balance"
	"github.com/yrpc/yrpc/rt/internal/conn"
	"github.com/yrpc/yrpc/rt/metrics"
)

// NewStream implements Invoker: generated stubs of stream methods call it.
// The stream goes to one provider, picked as a unary call's first attempt
// is (balancer, breaker); opening it is tried on other providers while it
// provably did not reach one (no connection, a provider without streams,
// a refusal), never once it is open: a stream is not retried after its
// first message may have gone. ctx governs the whole stream: cancel it,
// or read to io.EOF, to end it. The method's timeout bounds the stream.
func (c *Client) NewStream(ctx context.Context, sd *ServiceDesc, m int, opts ...CallOption) (ClientStreamer, error) {
	if m < 0 || m >= len(sd.Methods) || sd.Methods[m].Stream == NotStream {
		return nil, Errorf(Internal, "new stream of %s: method index %d is not a stream method", sd.Name, m)
	}
	st, err := c.service(sd)
	if err != nil {
		return nil, err
	}
	var o callOptions
	for _, f := range opts {
		f(&o)
	}
	open := func(ctx context.Context, info *CallInfo) (ClientStreamer, error) {
		return c.openStream(ctx, st, info, &o)
	}
	if len(c.o.streamInterceptors) > 0 {
		open = chainStreamClient(c.o.streamInterceptors, open)
	}
	return open(ctx, st.info(m))
}

// openStream opens the stream on a provider.
func (c *Client) openStream(ctx context.Context, st *svcState, info *CallInfo, o *callOptions) (ClientStreamer, error) {
	m := info.Method
	start := c.o.clock.Now()
	v := st.current(start)
	if v == nil || len(v.eps) == 0 && v.draining == 0 {
		var err error
		if v, err = st.discover(ctx, m); err != nil {
			return nil, err
		}
	}
	if tag := o.tagKey; tag != "" {
		v = v.withTag(tag, o.tagValue, start)
	}
	var key []byte // a stream's request is not known when it opens: only WithHashKey
	if o.hasHashKey {
		key = o.hashKey
	}
	deadline := callDeadline(ctx, m.Policy.Timeout, o.timeout, c.o.timeout)
	sctx, cancel := ctx, context.CancelFunc(func() {})
	if !deadline.IsZero() {
		if d, ok := ctx.Deadline(); !ok || deadline.Before(d) {
			sctx, cancel = context.WithDeadline(ctx, deadline)
		}
	}
	var creds MD
	if cr := c.o.creds; cr != nil {
		md, err := cr.RequestMetadata(ctx, info)
		if err != nil {
			cancel()
			return nil, &Error{Code: Unauthenticated, Message: m.FullName + ": credentials: " + err.Error(), Cause: err}
		}
		creds = md
	}
	pi := balance.Info{Key: key, Now: start}
	var err error
	for n := 1; n <= maxNotRunAttempts; n++ {
		ep, i, ticket, perr := v.pick(&pi, start, st.keyName, nil)
		if ep == nil {
			if err == nil {
				err = perr
			}
			break
		}
		pi.Tried = append(pi.Tried, i)
		cs := &clientStream{c: c, st: st, info: info, ep: ep, ticket: ticket, ctx: sctx, cancel: cancel, start: start}
		if err = cs.open(n, creds); err == nil {
			return cs, nil
		}
		if !isNotSent(err) {
			break
		}
	}
	cancel()
	err = unwrapNotSent(err)
	if obs := c.o.observer; obs != nil {
		obs.Observe(metrics.Event{Side: metrics.Client, Service: st.sd.Name, Method: m.Name, Code: CodeOf(err).String(), Latency: c.o.clock.Now().Sub(start)})
	}
	return nil, err
}

// clientStream is the client's end of an open stream: it turns the
// connection's stream errors into *Error values, and settles the stream
// with its provider's breaker and the metrics when it ends.
type clientStream struct {
	c      *Client
	st     *svcState
	info   *CallInfo
	ep     *endpoint
	ticket breakerTicket
	ctx    context.Context
	cancel context.CancelFunc
	start  time.Time
	cs     connStream
	once   sync.Once
}

// open opens the stream on cs.ep; errors are marked not sent when it
// did not reach the provider (then the ticket is settled already).
func (cs *clientStream) open(n int, creds MD) error {
	c, m := cs.c, cs.info.Method
	meta := cs.ep.meta.Load()
	if meta.tls && c.o.tls == nil {
		cs.ep.br.Release(cs.ticket)
		return &errNotSent{Errorf(FailedPrecondition, "%s: provider %s requires TLS: configure the client with rt.WithTLS", m.FullName, cs.ep.addr)}
	}
	md := requestMD(nil, cs.ctx, c.o.app, n, cs.st.keyMD, creds, meta.token)
	req := conn.Request{Method: m.ID, Name: m.FullName, Deadline: deadlineOf(cs.ctx), MD: md, MaxMessage: m.Policy.MaxMessageSize}
	pc, err := cs.ep.tr.get(cs.ctx)
	if err == nil {
		cs.ep.active.Add(1)
		cs.cs, err = pc.openStream(cs.ctx, &req, cs.ended)
		if err != nil {
			cs.ep.active.Add(-1)
		}
	}
	if err != nil {
		err = fromConn(err)
		settle(cs.ep, cs.ticket, err, nil, c.o.clock.Now())
		return err
	}
	return nil
}

func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// ended is called once by the connection when the stream ends.
func (cs *clientStream) ended(end error) {
	cs.once.Do(func() {
		cs.ep.active.Add(-1)
		now := cs.c.o.clock.Now()
		var err error
		if end != io.EOF {
			err = fromConn(end)
		}
		settle(cs.ep, cs.ticket, err, nil, now)
		if obs := cs.c.o.observer; obs != nil {
			obs.Observe(metrics.Event{Side: metrics.Client, Service: cs.st.sd.Name, Method: cs.info.Method.Name, Instance: cs.ep.addr,
				Code: CodeOf(err).String(), Latency: now.Sub(cs.start)})
		}
		cs.cancel()
	})
}

func (cs *clientStream) Context() context.Context { return cs.ctx }

func (cs *clientStream) SendMsg(m Message) error { return streamError(cs.cs.Send(m)) }

func (cs *clientStream) RecvMsg(m Message) error { return streamError(cs.cs.Recv(m)) }

func (cs *clientStream) CloseSend() error { return streamError(cs.cs.CloseSend()) }

func (cs *clientStream) Trailer() MD { return MD(cs.cs.Trailer()) }

// streamError turns a connection stream's error into an *Error, leaving
// nil and io.EOF alone.
func streamError(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return err
	}
	return fromConn(err)
}

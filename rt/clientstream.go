package rt

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/rt/balance"
	"github.com/yrpc/yrpc/rt/internal/conn"
	"github.com/yrpc/yrpc/rt/metrics"
)

// NewStream implements Invoker: generated stubs of stream methods call it.
// The stream goes to one provider, picked as a unary call's first attempt
// is (balancer, breaker); opening it is tried on other providers while it
// provably did not reach one (no connection, a provider without streams,
// a refusal). A server stream whose method has a retry policy is also
// tried again elsewhere, with its one request, when it fails before its
// first response reaches the caller (as the schema's Retry promises);
// other streams are not retried once open. ctx governs the whole stream:
// cancel it, or read to io.EOF, to end it. The method's timeout bounds it.
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
	var h *streamHooks // what the interceptors ask of the stream (OnAttempt)
	open := func(ctx context.Context, info *CallInfo) (ClientStreamer, error) {
		return c.openStream(ctx, st, info, &o, h)
	}
	if len(c.o.streamInterceptors) > 0 {
		open = chainStreamClient(c.o.streamInterceptors, open)
		h = new(streamHooks)
		ctx = context.WithValue(ctx, callKey{}, h)
	}
	return open(ctx, st.info(m))
}

// openStream opens the stream on a provider. A stream that fails to open
// is reported to the observer as a call, as its tries are; one that
// opens is reported when it ends (clientStream.finish).
func (c *Client) openStream(ctx context.Context, st *svcState, info *CallInfo, o *callOptions, h *streamHooks) (ClientStreamer, error) {
	start := c.o.clock.Now()
	s, err := c.newClientStream(ctx, st, info, o, start, h)
	if err != nil {
		observeStream(c, st, info, err, start)
		return nil, err
	}
	return s, nil
}

// newClientStream resolves the stream's providers and opens it on one.
func (c *Client) newClientStream(ctx context.Context, st *svcState, info *CallInfo, o *callOptions, start time.Time, h *streamHooks) (*clientStream, error) {
	m := info.Method
	if err := ctx.Err(); err != nil {
		// The caller gave up already: opening would start the handler
		// only for the reset that follows, as a unary call would not.
		return nil, ctxError(err, m.FullName)
	}
	if lim := st.limits[info.Index]; lim != nil && !lim.Allow(start) { // per stream opened, as per call
		return nil, Errorf(ResourceExhausted, "%s: the client's rate limit for the method is exceeded (not sent)", m.FullName)
	}
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
	s := &clientStream{c: c, st: st, info: info, v: v, start: start}
	if h != nil {
		s.onAttempt = h.onAttempt // set by the interceptors before they opened it
	}
	if o.hasHashKey { // a stream's request is not known when it opens: only WithHashKey
		s.pick.Key = o.hashKey
	}
	s.pick.Now = start
	s.tries = 1
	if m.Stream == ServerStreaming {
		s.tries = triesFor(faultMode(&m.Policy, o.fault), m.Policy.Retry.Tries, o.tries)
	}
	deadline := callDeadline(ctx, m.Policy.Timeout, o.timeout, c.o.timeout)
	s.ctx, s.cancel = ctx, context.CancelFunc(func() {})
	if !deadline.IsZero() {
		if d, ok := ctx.Deadline(); !ok || deadline.Before(d) {
			s.ctx, s.cancel = context.WithDeadline(ctx, deadline)
		}
	}
	md, err := c.credentials(ctx, info)
	if err != nil {
		s.cancel()
		return nil, &Error{Code: Unauthenticated, Message: m.FullName + ": credentials: " + err.Error(), Cause: err}
	}
	s.creds = md
	if err := s.openNext(); err != nil {
		s.cancel()
		return nil, err
	}
	return s, nil
}

// observeStream reports a whole stream to the client's observer, as do
// reports a whole unary call: Attempt 0, no instance, the code its caller
// saw and its time from start.
func observeStream(c *Client, st *svcState, info *CallInfo, err error, start time.Time) {
	if obs := c.o.observer; obs != nil {
		obs.Observe(metrics.Event{Side: metrics.Client, Service: st.sd.Name, Method: info.Method.Name,
			Code: CodeOf(err).String(), Latency: c.o.clock.Now().Sub(start)})
	}
}

// clientStream is the client's end of an open stream: it turns the
// connection's stream errors into *Error values, and tries a failed
// server stream again elsewhere before its first response.
//
// The observer sees each try as an attempt (Attempt n, its provider) when
// it ends, and the stream once as a call (Attempt 0) when its last try
// has ended: when a try ends and no retry may follow, or when RecvMsg
// gives up retrying, or when the context ends while a retry was possible.
type clientStream struct {
	c      *Client
	st     *svcState
	info   *CallInfo
	v      *svcView
	pick   balance.Info // providers tried
	creds  MD
	ctx    context.Context // the stream's context at the connections: the caller's, or under the method's deadline
	cancel context.CancelFunc
	uctx   streamContext // Context(), made by its first call
	ctxed  sync.Once     // makes uctx
	start  time.Time
	tries  int // server streams: how many providers may be tried in all
	// onAttempt is what stream interceptors gave OnAttempt; nil without.
	onAttempt func(Attempt)

	// sendMu serializes SendMsg, CloseSend and a retry's replay; recvMu
	// serializes RecvMsg. A SendMsg and a RecvMsg run at once.
	sendMu, recvMu sync.Mutex

	mu       sync.Mutex
	opened   int                       // tries opened (or being opened); the last is the current one
	cur      atomic.Pointer[streamTry] // set under mu, read without it
	replay   []byte                    // a retryable server stream's request, to send again
	halfDone bool                      // CloseSend was called
	received bool                      // a response reached the caller: no more retries
	finished bool                      // the stream's call event is out
	pending  func() bool               // stops finishing on the context's end while a retry may follow
	live     int                       // tries opened (or being opened) whose end is not reported yet
	ended    bool                      // ctx ended, or RecvMsg returned the stream's end
	endErr   error                     // then: ctx's error, or Canceled
	watched  bool                      // uctx is made
	uended   bool                      // uctx ended, or is ending
	unwatch  func() bool               // stops watching ctx for uctx

	// RecvMsg returned the stream's end, or a message (so received is
	// set); guarded by recvMu.
	recvOver, recvSeen bool
}

// streamTry is the stream on one provider; it settles with that
// provider's breaker and reports an attempt event when it ends.
type streamTry struct {
	s      *clientStream
	n      int // 1, 2, ...: the attempt number
	ep     *endpoint
	ticket breakerTicket
	pc     transportConn
	cs     connStream
	start  time.Time
	once   sync.Once
}

// openNext opens the stream on the next provider the balancer picks,
// passing over those it provably did not reach.
func (s *clientStream) openNext() error {
	var err error
	again := false // a try lost with its connection went back to its provider
	for range maxNotRunAttempts {
		ep, i, ticket, perr := s.v.pick(&s.pick, s.start, s.info.Method.FullName, s.st.keyName, nil)
		if ep == nil {
			if err == nil {
				err = perr
			}
			return unwrapNotSent(err)
		}
		s.pick.Tried = append(s.pick.Tried, i)
		s.mu.Lock()
		s.opened++
		s.live++
		t := &streamTry{s: s, n: s.opened, ep: ep, ticket: ticket, start: s.c.o.clock.Now()}
		stop := s.pending // the last try's end no longer ends the stream
		s.pending = nil
		s.mu.Unlock()
		if stop != nil {
			stop()
		}
		if err = t.open(); err == nil {
			s.mu.Lock()
			s.cur.Store(t)
			s.mu.Unlock()
			return nil
		}
		if !isNotSent(err) {
			break
		}
		if !again && isLostBeforeSent(err) {
			// The connection was lost before the stream left (a provider
			// restarted since the last call): the provider may take it
			// on a new connection, once.
			again = true
			s.pick.Tried = s.pick.Tried[:len(s.pick.Tried)-1]
		}
	}
	return unwrapNotSent(err)
}

// open opens the stream on t.ep; errors are marked not sent when it did
// not reach the provider. A try that fails to open is settled and
// reported here; one that opens, when it ends.
func (t *streamTry) open() error {
	s := t.s
	c, m := s.c, s.info.Method
	meta := t.ep.meta.Load()
	if meta.tls && c.o.tls == nil {
		t.ep.br.Release(t.ticket)
		err := &errNotSent{err: Errorf(FailedPrecondition, "%s: provider %s requires TLS: configure the client with rt.WithTLS", m.FullName, t.ep.addr)}
		t.observe(err, c.o.clock.Now())
		return err
	}
	md := requestMD(nil, s.ctx, c.o.app, t.n, s.st.keyMD, s.creds, meta.token)
	req := conn.Request{Method: m.ID, Name: m.FullName, Deadline: deadlineOf(s.ctx), MD: md, MaxMessage: m.Policy.MaxMessageSize}
	pc, err := t.ep.tr.get(s.ctx)
	if err == nil {
		t.pc = pc
		t.ep.active.Add(1)
		t.cs, err = pc.openStream(s.ctx, &req, t.ended)
		if err != nil {
			t.ep.active.Add(-1)
		}
	}
	if err != nil {
		t.done(err, false)
		return fromConn(err)
	}
	return nil
}

func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// ended is called once by the connection when the try's stream ends.
func (t *streamTry) ended(end error) {
	t.once.Do(func() {
		t.ep.active.Add(-1)
		var err error
		if end != io.EOF {
			err = end
		}
		t.done(err, true)
	})
}

// done settles the try's ticket and reports the try's end; connErr is
// the connection's error (nil: success). When the try opened and is the
// stream's last, the stream is over unless a retry may follow.
func (t *streamTry) done(connErr error, opened bool) {
	s := t.s
	now := s.c.o.clock.Now()
	var lost *conn.Conn
	if connErr != nil && t.pc != nil {
		lost = t.pc.lostWith(connErr) // one loss, however many streams it ends
	}
	err := streamError(connErr)
	settle(t.ep, t.ticket, err, lost, now)
	t.observe(err, now)
	if s.onAttempt != nil {
		s.onAttempt(Attempt{N: t.n, Addr: t.ep.addr, Protocol: t.ep.protocol(), Err: err, Start: t.start, Duration: now.Sub(t.start)})
	}
	defer s.settle(false, true)
	if s.c.o.observer == nil || !opened {
		return // not opened: openNext's caller reports the stream
	}
	s.mu.Lock()
	last, over := t.n == s.opened, s.finished || s.pending != nil
	mayRetry := s.opened < s.tries && !s.received && retryableCode(CodeOf(err)) && s.ctx.Err() == nil
	if last && !over && mayRetry {
		// RecvMsg decides; should the caller give up on the stream
		// instead, its context's end reports it.
		s.pending = context.AfterFunc(s.ctx, func() { s.finish(err) })
	}
	s.mu.Unlock()
	if last && !mayRetry {
		s.finish(err)
	}
}

// observe reports the try to the client's observer.
func (t *streamTry) observe(err error, now time.Time) {
	s := t.s
	if obs := s.c.o.observer; obs != nil {
		obs.Observe(metrics.Event{Side: metrics.Client, Service: s.st.sd.Name, Method: s.info.Method.Name, Instance: t.ep.addr,
			Attempt: t.n, Code: CodeOf(err).String(), Latency: now.Sub(t.start)})
	}
}

// finish reports the whole stream once, with err as its end.
func (s *clientStream) finish(err error) {
	s.mu.Lock()
	finished, pending := s.finished, s.pending
	s.finished, s.pending = true, nil
	s.mu.Unlock()
	if finished {
		return
	}
	if pending != nil {
		pending()
	}
	observeStream(s.c, s.st, s.info, err, s.start)
}

func (s *clientStream) try() *streamTry { return s.cur.Load() }

// Context is the stream's context: the caller's values and deadline, and
// an end of its own that comes once the caller's context has ended (or
// the method's deadline passed), or RecvMsg has returned the stream's
// end, and every try of the stream has been reported (to OnAttempt, the
// observer, the breaker). An access log's line or a span that waits on it
// thus finds the stream settled. It is made by the first call, as most
// streams are never asked for it.
func (s *clientStream) Context() context.Context {
	s.ctxed.Do(s.watchContext)
	return &s.uctx
}

// streamContext is a client stream's Context (see clientStream.Context):
// the values, deadline and cause of the stream's context, and an end of
// its own. It implements AfterFunc (which the context package looks
// for), so that the contexts derived from it and context.AfterFunc wait
// on that end, and the derived ones end with its error.
type streamContext struct {
	parent context.Context // the stream's context (clientStream.ctx)
	end    context.Context // c's own end, which finish brings
	cancel context.CancelFunc
	err    error // set before cancel
}

func (c *streamContext) Deadline() (time.Time, bool) { return c.parent.Deadline() }
func (c *streamContext) Done() <-chan struct{}       { return c.end.Done() }
func (c *streamContext) Value(key any) any           { return c.parent.Value(key) }

// Err is the error of the stream's context if that had ended when this
// one ended, else Canceled (the stream ended).
func (c *streamContext) Err() error {
	if c.end.Err() == nil {
		return nil
	}
	return c.err
}

// AfterFunc is context.AfterFunc of c.
func (c *streamContext) AfterFunc(f func()) (stop func() bool) {
	return context.AfterFunc(c.end, f)
}

func (c *streamContext) String() string { return "rt client stream context" }

// finish ends c with err.
func (c *streamContext) finish(err error) {
	c.err = err
	c.cancel()
}

// watchContext makes Context: it ends when ctx does, or RecvMsg returns
// the stream's end, after the tries (settle).
func (s *clientStream) watchContext() {
	s.uctx.parent = s.ctx
	s.uctx.end, s.uctx.cancel = context.WithCancel(context.Background())
	s.mu.Lock()
	s.watched = true
	s.mu.Unlock()
	if s.ctx.Done() != nil {
		stop := context.AfterFunc(s.ctx, s.ctxEnded) // at once if ctx has ended
		s.mu.Lock()
		s.unwatch = stop
		over := s.uended
		s.mu.Unlock()
		if over {
			stop()
		}
	}
	s.settle(false, false) // the stream may be over already
}

func (s *clientStream) ctxEnded() { s.settle(true, false) }

// settle records that the stream ended (ctx, or RecvMsg returned its
// end) or that a try's end was reported, then ends Context if the stream
// has ended and no try is left to report.
func (s *clientStream) settle(ended, tryEnded bool) {
	s.mu.Lock()
	if ended && !s.ended {
		s.ended = true
		if s.endErr = s.ctx.Err(); s.endErr == nil {
			s.endErr = context.Canceled
		}
	}
	if tryEnded {
		s.live--
	}
	end := s.watched && s.ended && s.live == 0 && !s.uended
	if end {
		s.uended = true
	}
	stop, err := s.unwatch, s.endErr
	s.mu.Unlock()
	if !end {
		return
	}
	s.uctx.finish(err)
	if stop != nil {
		stop()
	}
}

// settled returns err, which ends the stream for its caller, once the
// stream's tries are reported when its context has ended (and err came of
// that, most likely): the connection's watch of the context reports the
// try, but SendMsg and RecvMsg may see the end first, and what the
// caller's interceptors do with err (end a log line, a span) should find
// the try reported.
func (s *clientStream) settled(err error) error {
	if err != nil && s.ctx.Err() != nil {
		<-s.Context().Done()
	}
	return err
}

// over marks the stream's end, as RecvMsg returns it.
func (s *clientStream) over() {
	s.recvOver = true
	s.cancel()
	s.settle(true, false)
}

// SendMsg sends m. A message the stream cannot take (over the method's
// MaxMessageSize or the server's frame size) ends the stream, as gRPC
// does: the server's handler is canceled, and the error is returned.
// Calls from several goroutines take turns.
func (s *clientStream) SendMsg(m Message) error {
	if m == nil {
		return nilMessage(s.info.Method.FullName)
	}
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if err := s.ctx.Err(); err != nil {
		// The caller gave up: the stream is being reset (the context's
		// watch may not have run yet), so the message would be lost.
		return s.settled(ctxError(err, s.info.Method.FullName))
	}
	t := s.try()
	if s.tries > 1 {
		s.mu.Lock()
		if s.replay == nil && !s.received {
			s.replay = m.MarshalAppend(nil) // the one request, should a retry need it
		}
		s.mu.Unlock()
	}
	err := streamError(t.cs.Send(m))
	if CodeOf(err) == ResourceExhausted && !IsRemote(err) {
		e := unwrapNotSent(err).(*Error)
		t.cs.Reset(uint8(e.Code), e.Message, &conn.Error{Code: uint8(e.Code), Message: e.Message})
	}
	return s.settled(err)
}

// RecvMsg receives the next message; io.EOF at the end. A server stream
// that fails before its first response is tried on another provider
// while its policy allows. Calls from several goroutines take turns.
func (s *clientStream) RecvMsg(m Message) error {
	if m == nil {
		return nilMessage(s.info.Method.FullName)
	}
	s.recvMu.Lock()
	defer s.recvMu.Unlock()
	if err := s.ctx.Err(); err != nil && !s.recvOver {
		// The caller gave up: messages that came before are not for it.
		err = ctxError(err, s.info.Method.FullName)
		s.finish(err)
		s.over()
		return s.settled(err)
	}
	for {
		t := s.try()
		err := t.cs.Recv(m)
		switch {
		case err == nil:
			if !s.recvSeen {
				s.recvSeen = true
				s.mu.Lock()
				s.received = true
				s.mu.Unlock()
			}
			return nil
		case err == io.EOF:
			s.over()
			return err
		}
		err = fromConn(err)
		if s.retry(err) {
			continue
		}
		s.finish(err)
		s.over()
		return s.settled(err)
	}
}

// retry tries the stream again on another provider after err, when the
// stream is a server stream with tries left that has received nothing,
// sent its request and half-closed, and err is worth a retry; it reports
// whether the new try is open.
func (s *clientStream) retry(err error) bool {
	s.mu.Lock()
	replay, ok := s.replay, !s.received && s.replay != nil && s.halfDone && s.opened < s.tries
	s.mu.Unlock()
	if !ok || !retryableCode(CodeOf(err)) || s.ctx.Err() != nil {
		return false
	}
	now := s.c.o.clock.Now()
	if !s.st.budget.retry(now) {
		return false
	}
	if d := backoff(s.info.Method.Policy.Retry, s.opened, rand.Float64()); d > 0 {
		select {
		case <-s.c.o.clock.After(d):
		case <-s.ctx.Done():
			return false
		}
	}
	s.sendMu.Lock() // a SendMsg now goes to the new try, after the replay
	defer s.sendMu.Unlock()
	if s.openNext() != nil {
		return false
	}
	t := s.try()
	if t.cs.Send(rawMessage(replay)) != nil || t.cs.CloseSend() != nil {
		return false
	}
	return true
}

// CloseSend half-closes the stream, after a SendMsg under way.
func (s *clientStream) CloseSend() error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	s.halfDone = true
	s.mu.Unlock()
	return streamError(s.try().cs.CloseSend())
}

func (s *clientStream) Trailer() MD { return MD(s.try().cs.Trailer()) }

// rawMessage is a message already encoded.
type rawMessage []byte

func (r rawMessage) Size() int                     { return len(r) }
func (r rawMessage) MarshalAppend(b []byte) []byte { return append(b, r...) }
func (r rawMessage) Unmarshal([]byte) error        { return errors.New("rt: rawMessage is for sending") }

// streamError turns a connection stream's error into an *Error, leaving
// nil and io.EOF alone.
func streamError(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return err
	}
	return fromConn(err)
}

package rt

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/yrpc/yrpc/rt/balance"
	"github.com/yrpc/yrpc/rt/metrics"
)

// callRef carries the per-call state through client interceptors.
type callRef struct {
	st *svcState
	cs *callState
}

type callRefKey struct{}

// call is the InvokeFunc under the interceptors.
func (c *Client) call(ctx context.Context, info *CallInfo, req, resp Message) error {
	ref, _ := ctx.Value(callRefKey{}).(*callRef)
	if ref == nil {
		return Errorf(Internal, "%s: call state lost (an interceptor replaced the context with one not derived from it)", info.Method.FullName)
	}
	return c.do(ctx, ref.st, info, ref.cs, req, resp)
}

// do runs the call path: forced mock, providers, balancer, breaker,
// connection, retries, fallback.
//
// The client's clock is read twice per call when all goes well: when it
// starts and when its attempt ends; breakers, the retry budget and the
// metrics share these readings.
func (c *Client) do(ctx context.Context, st *svcState, info *CallInfo, cs *callState, req, resp Message) error {
	start := c.o.clock.Now()
	cs.end = time.Time{}
	cs.mocked = ""
	err := c.run(ctx, st, info, cs, req, resp, start)
	if c.o.observer != nil {
		end := cs.end
		if end.IsZero() {
			end = c.o.clock.Now()
		}
		c.o.observer.Observe(metrics.Event{Side: metrics.Client, Service: st.sd.Name, Method: info.Method.Name,
			Code: CodeOf(err).String(), Latency: end.Sub(start), Mocked: cs.mocked})
	}
	return err
}

// run is do without the call's metrics; now is the call's start.
func (c *Client) run(ctx context.Context, st *svcState, info *CallInfo, cs *callState, req, resp Message, now time.Time) error {
	m, idx := info.Method, info.Index

	v := st.current(now)
	if v == nil {
		if err := st.waitReady(ctx, m, callDeadline(ctx, now, m.Policy.Timeout, cs.opts.timeout, c.o.timeout)); err != nil {
			return err
		}
		v = st.current(now)
	}
	mock := v.mock(idx, m, now)
	if mock.Mode == MockForce {
		return applyMock(mock, m, resp, cs, "forced")
	}
	if tag := cs.opts.tagKey; tag != "" {
		v = v.withTag(tag, cs.opts.tagValue, now)
	}

	deadline := callDeadline(ctx, now, m.Policy.Timeout, cs.opts.timeout, c.o.timeout)
	pol := m.Policy
	mode := cs.opts.fault
	if mode == FaultDefault {
		mode = pol.FaultMode
	}
	if mode == FaultDefault {
		mode = FaultFailfast
		if pol.Idempotent {
			mode = FaultFailover
		}
	}
	switch {
	case m.Oneway:
	case mode == FaultForking:
		err := c.race(ctx, st, v, info, req, resp, deadline, max(pol.Forks, 2), 0)
		return c.finish(err, mode, mock, m, resp, cs)
	case pol.Hedge > 0 && pol.Idempotent:
		tries := max(pol.Retry.Tries, 2)
		err := c.race(ctx, st, v, info, req, resp, deadline, tries, pol.Hedge)
		return c.finish(err, mode, mock, m, resp, cs)
	}
	tries := 1
	if mode == FaultFailover {
		tries = pol.Retry.Tries
		if cs.opts.tries > 0 {
			tries = cs.opts.tries
		}
		if tries < 1 {
			tries = defaultTries
		}
	}

	var key []byte
	if cs.opts.hasHashKey {
		key = cs.opts.hashKey
	} else if m.HashKey != nil {
		cs.keyBuf = m.HashKey(req, cs.keyBuf[:0])
		key = cs.keyBuf
	}
	pi := &cs.pick
	*pi = balance.Info{Key: key, Tried: cs.tried[:0], Now: now}

	var err error
	ran := 0 // attempts that may have executed
	for attempt := 1; ; attempt++ {
		ep, i, ticket, perr := v.pick(pi, now, st.keyName, c.o.debug, c.o.logger)
		if ep == nil {
			if err == nil {
				err = perr
			}
			break
		}
		// Request metadata is encoded before the attempt returns, so
		// the call's scratch slice is reused.
		md := cs.md[:0]
		if attempt > 1 {
			md = append(md, MDAttempt, strconv.Itoa(attempt))
		}
		md = appendOutgoing(ctx, md, c.o.app)
		cs.md = md
		err = c.attempt(ctx, st, ep, m, req, resp, md, cs, deadline, attempt, now)
		settle(ep, ticket, err, cs.lost, cs.end)
		if attempt == 1 {
			st.budget.request(now)
		}
		if err == nil {
			return nil
		}
		pi.Tried = append(pi.Tried, i)
		var ns *errNotSent
		notRun := errors.As(err, &ns)
		if !notRun {
			ran++
		}
		if !retryable(err, notRun, mode, m, ran, tries, attempt) {
			break
		}
		now = cs.end
		if !st.budget.retry(now) {
			c.o.logger.Debug("rt: retry budget exhausted", "method", m.FullName)
			break
		}
		if !notRun {
			if !sleepBackoff(ctx, pol.Retry, ran, deadline) {
				break
			}
			now = c.o.clock.Now()
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			break
		}
	}
	cs.tried = pi.Tried[:0:cap(pi.Tried)]
	return c.finish(unwrapNotSent(err), mode, mock, m, resp, cs)
}

// defaultTries is the number of attempts of an idempotent method whose
// schema sets no retry policy (as Dubbo's default of two retries).
const defaultTries = 3

// maxNotRunAttempts bounds attempts of calls that never ran (refused,
// no connection, breaker open) for methods that may not retry otherwise.
const maxNotRunAttempts = 3

// retryable decides whether a failed attempt is tried again elsewhere.
func retryable(err error, notRun bool, mode FaultMode, m *MethodDesc, ran, tries, attempt int) bool {
	if m.Oneway && !notRun {
		return false
	}
	if notRun {
		return attempt < max(tries, maxNotRunAttempts)+ran
	}
	if mode != FaultFailover || ran >= tries {
		return false
	}
	switch CodeOf(err) {
	case Unavailable, DeadlineExceeded, Internal, ResourceExhausted, Aborted:
		return CodeOf(err) != DeadlineExceeded || !IsRemote(err)
	}
	return false
}

// settle reports an attempt's outcome to the provider's breaker. A call
// canceled by its caller says nothing about the provider: its place is
// released without counting. A lost connection fails every call in flight
// on it at once; it counts as one failure, not one per call (lost is the
// connection whose loss failed this attempt, if any). A failure the
// provider answered itself counts toward the error rate, but not toward
// the run of consecutive failures that trips on providers that do not
// answer: answers come in batches, which would line up failures that
// successes were interleaved with.
func settle(ep *endpoint, t breakerTicket, err error, lost *clientConn, now time.Time) {
	switch {
	case CodeOf(err) == Canceled:
		ep.br.Release(t)
	case lost != nil && ep.lastLost.Swap(lost) == lost:
		ep.br.Release(t)
	case !countsAsFailure(err):
		ep.br.Done(now, t, true)
	case IsRemote(err):
		ep.br.DoneAnswered(now, t)
	default:
		ep.br.Done(now, t, false)
	}
}

// countsAsFailure says which outcomes count against a provider's breaker:
// transport errors, timeouts, Unavailable and Internal do; client mistakes
// and application errors do not.
func countsAsFailure(err error) bool {
	switch CodeOf(err) {
	case OK, InvalidArgument, NotFound, AlreadyExists, PermissionDenied, FailedPrecondition,
		OutOfRange, Unimplemented, Unauthenticated, Canceled, Unknown, Aborted:
		return false
	case ResourceExhausted:
		return false // the provider is healthy, just busy with others
	}
	return true
}

func unwrapNotSent(err error) error {
	var ns *errNotSent
	if errors.As(err, &ns) {
		return ns.err
	}
	return err
}

// attempt makes one call to ep.
//
// start is when the attempt starts; it sets cs.end to when it ended.
func (c *Client) attempt(ctx context.Context, st *svcState, ep *endpoint, m *MethodDesc, req, resp Message, md MD, cs *callState, deadline time.Time, n int, start time.Time) error {
	cs.lost = nil
	conn, err := ep.pool.get(ctx)
	if err == nil {
		ep.active.Add(1)
		cs.wantMD = cs.opts.respMD != nil
		err = conn.call(ctx, deadline, m, req, resp, md, cs)
		ep.active.Add(-1)
		// A call that found its connection already lost (not sent) is
		// part of the same loss as the calls in flight on it.
		if err != nil && conn.lostWith(unwrapNotSent(err)) {
			cs.lost = conn
		}
		if cs.opts.respMD != nil {
			*cs.opts.respMD = cs.respMD
		}
	}
	cs.end = c.o.clock.Now()
	if c.o.observer != nil {
		c.o.observer.Observe(metrics.Event{Side: metrics.Client, Service: st.sd.Name, Method: m.Name, Instance: ep.addr,
			Attempt: n, Code: CodeOf(err).String(), Latency: cs.end.Sub(start)})
	}
	if c.o.debug && err != nil {
		c.o.logger.Debug("rt: attempt failed", "method", m.FullName, "addr", ep.addr, "attempt", n, "err", err)
	}
	return err
}

// pick chooses a provider whose breaker admits the call.
func (v *svcView) pick(pi *balance.Info, now time.Time, key string, debug bool, log *slog.Logger) (*endpoint, int, breakerTicket, error) {
	open := 0
	for range len(v.eps) + 1 {
		i := v.picker.Pick(pi)
		if i < 0 {
			break
		}
		ep := v.eps[i]
		if t, ok := ep.br.Allow(now); ok {
			return ep, i, t, nil
		}
		open++
		pi.Tried = append(pi.Tried, i)
		if debug {
			log.Debug("rt: provider excluded: breaker open", "key", key, "addr", ep.addr)
		}
	}
	switch {
	case len(v.eps) == 0 && v.draining > 0:
		return nil, -1, breakerTicket{}, Errorf(Unavailable, "no provider of %s: all %d draining", key, v.draining)
	case len(v.eps) == 0:
		return nil, -1, breakerTicket{}, Errorf(Unavailable, "no provider of %s", key)
	case open > 0:
		return nil, -1, breakerTicket{}, Errorf(Unavailable, "no provider of %s available: %d of %d with open breakers", key, open, len(v.eps))
	}
	return nil, -1, breakerTicket{}, Errorf(Unavailable, "no provider of %s left to try", key)
}

// maxReadyWait bounds the wait for a service's first registry snapshot when
// the call has no deadline.
const maxReadyWait = 10 * time.Second

// waitReady waits for the first registry snapshot of the service, until
// the call's deadline (zero: maxReadyWait).
func (st *svcState) waitReady(ctx context.Context, m *MethodDesc, deadline time.Time) error {
	wait := maxReadyWait
	if !deadline.IsZero() {
		wait = time.Until(deadline)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-st.ready:
		return nil
	case <-ctx.Done():
		return ctxError(ctx.Err(), m.FullName)
	case <-st.c.done:
		return ErrClientClosed
	case <-t.C:
		return Errorf(Unavailable, "%s: no providers known for %s yet: the registry has not answered in %v", m.FullName, st.keyName, wait.Round(time.Millisecond))
	}
}

// callDeadline is the earliest of ctx's deadline and now plus the call's
// timeout (call option, else schema, else client default).
func callDeadline(ctx context.Context, now time.Time, schema, opt, def time.Duration) time.Time {
	d := opt
	if d == 0 {
		d = schema
	}
	if d == 0 {
		d = def
	}
	var dl time.Time
	if d > 0 {
		dl = now.Add(d)
	}
	if cd, ok := ctx.Deadline(); ok && (dl.IsZero() || cd.Before(dl)) {
		dl = cd
	}
	return dl
}

// sleepBackoff waits before retry number n (1-based); false means the wait
// would pass the deadline or ctx ended.
func sleepBackoff(ctx context.Context, p RetryPolicy, n int, deadline time.Time) bool {
	d := p.Interval
	if d <= 0 {
		return true
	}
	if p.Backoff > 1 {
		for i := 1; i < n; i++ {
			d = time.Duration(float64(d) * p.Backoff)
			if p.MaxInterval > 0 && d >= p.MaxInterval {
				d = p.MaxInterval
				break
			}
		}
	}
	if p.Jitter > 0 {
		d += time.Duration((rand.Float64()*2 - 1) * p.Jitter * float64(d))
	}
	if !deadline.IsZero() && time.Now().Add(d).After(deadline) {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// appendOutgoing adds ctx's outgoing metadata and the app name to md.
func appendOutgoing(ctx context.Context, md MD, app string) MD {
	if out := OutgoingMetadata(ctx); len(out) > 0 {
		md = append(md, out...)
	}
	if app != "" {
		md = append(md, MDApp, app)
	}
	return md
}

// finish applies the fault mode and the on-failure mock to a failed call.
func (c *Client) finish(err error, mode FaultMode, mock MockPolicy, m *MethodDesc, resp Message, cs *callState) error {
	if err == nil {
		return nil
	}
	if CodeOf(err) == Canceled {
		return err
	}
	if mock.Mode == MockOnFailure {
		c.o.logger.Debug("rt: answering with mock after failure", "method", m.FullName, "err", err)
		return applyMock(mock, m, resp, cs, "fallback")
	}
	if mode == FaultFailsafe {
		c.o.logger.Debug("rt: failsafe call failed", "method", m.FullName, "err", err)
		if resp != nil {
			_ = resp.Unmarshal(nil)
		}
		return nil
	}
	return err
}

// errRaceLost is the error of a race with no attempt sent.
var errRaceLost = errors.New("rt: no attempt could be sent")

// race sends the call to up to n providers, the first at once and each next
// one delay later (all at once when delay is 0: forking; hedging
// otherwise), and returns the first success. Attempts that lose are
// canceled. Each attempt decodes into its own response message.
func (c *Client) race(ctx context.Context, st *svcState, v *svcView, info *CallInfo, req, resp Message, deadline time.Time, n int, delay time.Duration) error {
	m := info.Method
	now := c.o.clock.Now()
	pi := balance.Info{Now: now}
	type result struct {
		resp Message
		err  error
	}
	results := make(chan result, n)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	launch := func() {
		ep, i, ticket, err := v.pick(&pi, now, st.keyName, c.o.debug, c.o.logger)
		if ep == nil {
			results <- result{nil, err}
			return
		}
		pi.Tried = append(pi.Tried, i)
		attempt := len(pi.Tried)
		go func() {
			r := m.NewResponse()
			cs := &callState{done: make(chan struct{}, 1)}
			var md MD
			if attempt > 1 {
				md = MD{MDAttempt, strconv.Itoa(attempt)}
			}
			err := c.attempt(ctx, st, ep, m, req, r, appendOutgoing(ctx, md, c.o.app), cs, deadline, attempt, c.o.clock.Now())
			settle(ep, ticket, err, cs.lost, cs.end)
			results <- result{r, err}
		}()
	}
	// launch always delivers one result: the attempt's or the pick's
	// error. sent counts launches, so the race ends after n of them.
	sent, pending := 0, 0
	first := 1
	if delay == 0 {
		first = n
	}
	for range first {
		launch()
		sent++
		pending++
	}
	var timer *time.Timer
	var tick <-chan time.Time
	if delay > 0 && sent < n {
		timer = time.NewTimer(delay)
		defer timer.Stop()
		tick = timer.C
	}
	var lastErr error
	for pending > 0 {
		select {
		case r := <-results:
			pending--
			if r.err == nil && r.resp != nil {
				// Cancel the losers and wait for them: they may still
				// be encoding req, which the caller owns again once we
				// return.
				cancel()
				for ; pending > 0; pending-- {
					<-results
				}
				return copyMessage(resp, r.resp)
			}
			if r.err != nil {
				lastErr = r.err
			}
			if delay > 0 && sent < n && pending == 0 {
				// The attempt failed before the hedge delay: hedge now.
				launch()
				sent++
				pending++
			}
		case <-tick:
			tick = nil
			if sent < n {
				launch()
				sent++
				pending++
				if sent < n {
					timer.Reset(delay)
					tick = timer.C
				}
			}
		}
	}
	if lastErr == nil {
		lastErr = errRaceLost
	}
	return unwrapNotSent(lastErr)
}

// copyMessage copies src into dst through the wire format (no reflection).
func copyMessage(dst, src Message) error {
	if err := dst.Unmarshal(src.MarshalAppend(nil)); err != nil {
		return Errorf(Internal, "copy response: %v", err)
	}
	return nil
}

package rt

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/yrpc/yrpc/rt/balance"
	"github.com/yrpc/yrpc/rt/internal/conn"
	"github.com/yrpc/yrpc/rt/metrics"
)

// call is one call on its way from a stub to a provider: the service it
// calls, the policy resolved for it, and the scratch its attempts reuse.
// Invoke takes one from the client's pool and puts it back when the call
// returns. The path, in the order of the methods below: do (metrics) ->
// run (the providers' view, a forced mock, the fault mode) -> failover
// (pick a provider, attempt, decide on a retry, wait) or race (hedged and
// forked calls) -> finish (an on-failure mock or failsafe).
type call struct {
	c    *Client
	st   *svcState
	info *CallInfo
	opts callOptions

	ctx context.Context
	req Message
	// resp is the caller's response message; nil when the call makes
	// one (InvokeNew), which it then sets once it has it: from the
	// connection, which makes it with newResp when the answer arrives,
	// from a mock, or empty for a failsafe call.
	resp     Message
	newResp  conn.NewResponse // k.newResponse, made once per pooled call
	v        *svcView         // the providers the call picks from
	start    time.Time        // when the call started, client clock
	deadline time.Time        // wall clock; zero: none
	mode     FaultMode        // resolved from the method and the call options
	tries    int              // attempts a failover call may make
	mock     MockPolicy       // the mock in force
	mocked   string           // how a mock answered ("forced", "fallback"), for metrics
	creds    MD               // the credentials' metadata
	// onAttempt is what OnAttempt gave, called after each attempt; nil
	// without it.
	onAttempt func(Attempt)

	a     attempt      // the attempt of the sequential path, reused
	raced []*attempt   // the attempts of races (hedging, forking), reused
	racer racer        // the state of the call's race, reused
	pick  balance.Info // the balancer's input; Tried is kept as scratch
	key   []byte       // hash key scratch
}

func newCall(c *Client) *call {
	k := &call{c: c}
	k.newResp = k.newResponse
	k.a = attempt{k: k, p: conn.NewPending()}
	k.pick.Tried = make([]int, 0, 8)
	return k
}

// newResponse is the method's NewResponseWithRoom as the connection calls
// it.
func (k *call) newResponse(n int) (conn.Message, []byte) {
	return k.info.Method.NewResponseWithRoom(n)
}

// emptyResponse sets the call's response to an empty message, making one
// if the call has none: a failsafe call's answer, or a mock's before its
// value is copied in.
func (k *call) emptyResponse() {
	if k.resp != nil {
		_ = k.resp.Unmarshal(nil)
	} else if m := k.info.Method; !m.Oneway {
		k.resp = m.NewResponse()
	}
}

// reset drops what the call refers to before it is pooled.
func (k *call) reset() {
	k.st, k.info, k.ctx, k.req, k.resp, k.v, k.creds = nil, nil, nil, nil, nil, nil, nil
	k.mock = MockPolicy{}
	k.onAttempt = nil
	k.a.reset()
}

// do runs the call and reports it to the observer.
//
// The client's clock is read twice per call when all goes well: when it
// starts and when its attempt ends; breakers, the retry budget and the
// metrics share these readings.
func (k *call) do(ctx context.Context, req, resp Message) error {
	k.ctx, k.req, k.resp = ctx, req, resp
	k.start = k.c.o.clock.Now()
	k.a.end = time.Time{}
	k.mocked = ""
	err := k.run()
	if k.c.o.observer != nil {
		k.observe(err)
	}
	return err
}

// observe reports the call's end to the observer.
func (k *call) observe(err error) {
	end := k.a.end
	if end.IsZero() {
		end = k.c.o.clock.Now()
	}
	k.c.o.observer.Observe(metrics.Event{Side: metrics.Client, Service: k.st.sd.Name, Method: k.info.Method.Name,
		Code: CodeOf(err).String(), Latency: end.Sub(k.start), Mocked: k.mocked})
}

// run resolves the call's providers, mock and fault mode, and sends it the
// way the mode says.
func (k *call) run() error {
	m, now := k.info.Method, k.start
	pol := &m.Policy
	if lim := k.st.limits[k.info.Index]; lim != nil && !lim.Allow(now) {
		return Errorf(ResourceExhausted, "%s: the client's rate limit for the method is exceeded (not sent)", m.FullName)
	}
	v := k.st.current(now)
	if v == nil || len(v.eps) == 0 && v.draining == 0 {
		// Discovery is not charged to the method's timeout: its wait is
		// bounded on its own (WithDiscoveryWait), and by ctx.
		var err error
		if v, err = k.st.discover(k.ctx, m); err != nil {
			return err
		}
	}
	k.deadline = callDeadline(k.ctx, pol.Timeout, k.opts.timeout, k.c.o.timeout)
	k.mock = v.mock(k.info.Index, m, now)
	if k.mock.Mode == MockForce {
		return k.applyMock("forced")
	}
	k.setView(v, now)
	md, err := k.c.credentials(k.ctx, k.info)
	if err != nil {
		return &Error{Code: Unauthenticated, Message: m.FullName + ": credentials: " + err.Error(), Cause: err}
	}
	k.creds = md
	k.mode = faultMode(pol, k.opts.fault)
	switch {
	case m.Oneway:
	case k.mode == FaultForking:
		return k.finish(k.race(max(pol.Forks, 2), 0))
	case pol.Hedge > 0 && pol.Idempotent:
		return k.finish(k.race(max(pol.Retry.Tries, 2), pol.Hedge))
	}
	k.tries = triesFor(k.mode, pol.Retry.Tries, k.opts.tries)
	return k.finish(k.failover())
}

// failover makes attempts one after the other, each on a provider not
// tried yet, until one succeeds or the policy says stop.
func (k *call) failover() error {
	tried := k.pick.Tried[:0]
	k.pick = balance.Info{} // then filled in place: see attempt.run
	k.pick.Key, k.pick.Tried, k.pick.Now = k.hashKey(), tried, k.start
	now := k.start
	again := false // an attempt lost with its connection went back to its provider
	var err error
	ran, att := 0, 0    // attempts that may have executed, attempts made
	for n := 1; ; n++ { // n counts picks: attempts and picks that found no provider
		ep, i, ticket, perr := k.v.pick(&k.pick, now, k.info.Method.FullName, k.st.keyName, k.debugLog())
		if ep == nil {
			if err == nil {
				err = perr
			}
			var ok bool
			if now, ok = k.awaitProvider(n); !ok {
				break
			}
			continue
		}
		att++
		if cerr := k.ctx.Err(); cerr != nil {
			// The caller is gone: no attempt leaves after its context
			// ended (it could run on the provider for no one), the first
			// one included (a oneway call would report success).
			ep.br.Release(ticket)
			if err == nil {
				err = unsentError(cerr, k.info.Method.FullName)
			}
			break
		}
		a := &k.a
		a.ep, a.ticket, a.n, a.start, a.ctx, a.resp = ep, ticket, att, now, k.ctx, k.resp
		a.deadline = k.deadline
		if k.mode == FaultFailover && k.tries > 1 {
			a.deadline = tryDeadline(time.Now(), k.deadline, k.tryTimeout(), ran+1 >= k.tries)
		}
		err = a.run()
		if k.opts.respMD != nil {
			*k.opts.respMD = a.p.MD
		}
		if att == 1 {
			k.st.budget.request(now)
		}
		if err == nil {
			if k.resp == nil {
				k.resp = a.p.Response()
			}
			return nil
		}
		// An attempt that did not leave because its connection was lost
		// (a provider restarted since the last call) may go to the same
		// provider once more, on a new connection: with one provider, the
		// first call after a restart would fail otherwise.
		if !again && isLostBeforeSent(err) {
			again = true
		} else {
			k.pick.Tried = append(k.pick.Tried, i)
		}
		notRun := isNotSent(err)
		if !notRun {
			ran++
		}
		if !retryable(err, notRun, k.mode, k.info.Method, ran, k.tries, att) {
			break
		}
		var ok bool
		if now, ok = k.retryWait(notRun, ran); !ok {
			break
		}
	}
	return unwrapNotSent(err)
}

// setView makes v, narrowed to the call's tag if it has one, the
// providers the call picks from.
func (k *call) setView(v *svcView, now time.Time) {
	if tag := k.opts.tagKey; tag != "" {
		v = v.withTag(tag, k.opts.tagValue, now)
	}
	k.v = v
}

// awaitProvider decides what a pick that found no provider before
// attempt n does. Nothing was sent, so a call whose policy allows more
// tries waits the retry interval (with its backoff) and picks again from
// the providers known then: a provider list that is empty for a moment
// (providers restarting, or all draining) costs a try, not the call. It
// returns the time to go on from, and false when the call must stop: no
// tries left, every provider listed already tried or refused by its
// breaker, the deadline or the context.
func (k *call) awaitProvider(n int) (time.Time, bool) {
	if n >= k.tries || k.mode != FaultFailover || len(k.v.eps) > 0 && len(k.pick.Tried) >= len(k.v.eps) {
		return time.Time{}, false
	}
	if !k.sleep(max(backoff(k.info.Method.Policy.Retry, n, rand.Float64()), minRepickWait)) {
		return time.Time{}, false
	}
	now := k.c.o.clock.Now()
	v := k.st.current(now)
	if v == nil || k.ended() {
		return time.Time{}, false
	}
	k.setView(v, now)
	k.pick.Tried = k.pick.Tried[:0] // indexes of the old view
	return now, true
}

// retryWait spends the retry budget and waits out the backoff (for
// attempts that may have run) before the next attempt. It returns the
// time to go on from (client clock), and false when the call must stop
// instead: no attempt leaves once the call's context or deadline ended.
func (k *call) retryWait(notRun bool, ran int) (time.Time, bool) {
	now := k.a.end
	// A call that provably did not run adds no load where it failed:
	// retrying it elsewhere is not charged to the budget (maxNotRunAttempts
	// bounds it).
	if !notRun && !k.st.budget.retry(now) {
		k.c.o.logger.Debug("rt: retry budget exhausted", "method", k.info.Method.FullName)
		return now, false
	}
	if !notRun {
		if !k.sleep(backoff(k.info.Method.Policy.Retry, ran, rand.Float64())) {
			return now, false
		}
		now = k.c.o.clock.Now()
	}
	return now, !k.ended()
}

// unsentError is the error of a call of method whose context ended (cerr)
// before its first attempt left.
func unsentError(cerr error, method string) error {
	e := ctxError(cerr, method).(*Error)
	e.Message += " before sending"
	return e
}

// ended reports whether the call may send no more attempts: its context
// is done or its deadline (wall clock) has passed.
func (k *call) ended() bool {
	return k.ctx.Err() != nil || !k.deadline.IsZero() && !time.Now().Before(k.deadline)
}

// sleep waits d on the client's clock; false means the wait would pass
// the deadline or the call's context ended.
func (k *call) sleep(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	if !k.deadline.IsZero() && time.Until(k.deadline) < d {
		return false
	}
	select {
	case <-k.c.o.clock.After(d):
		return true
	case <-k.ctx.Done():
		return false
	}
}

// tryTimeout is the call option's try timeout, else the schema's.
func (k *call) tryTimeout() time.Duration {
	if d := k.opts.tryTimeout; d > 0 {
		return d
	}
	return k.info.Method.Policy.TryTimeout
}

// hashKey returns the call's consistent-hash key: the call option's, else
// the method's hash-key field (an empty field is the empty key, never
// none), else none.
func (k *call) hashKey() []byte {
	if k.opts.hasHashKey {
		return k.opts.hashKey
	}
	if hk := k.info.Method.HashKey; hk != nil {
		k.key = hk(k.req, k.key[:0])
		if k.key == nil {
			// An empty field is a key too: nil would make the call's
			// provider random, and only until the pooled call has had
			// a key once.
			k.key = []byte{}
		}
		return k.key
	}
	return nil
}

// debugLog is the logger of WithDebug's exclusion traces; nil without it.
func (k *call) debugLog() *slog.Logger {
	if !k.c.o.debug {
		return nil
	}
	return k.c.o.logger
}

// finish applies the on-failure mock or the failsafe mode to a failed call.
func (k *call) finish(err error) error {
	if err == nil || CodeOf(err) == Canceled {
		return err
	}
	m := k.info.Method
	if k.mock.Mode == MockOnFailure {
		k.c.o.logger.Debug("rt: answering with mock after failure", "method", m.FullName, "err", err)
		return k.applyMock("fallback")
	}
	if k.mode == FaultFailsafe {
		k.c.o.logger.Debug("rt: failsafe call failed", "method", m.FullName, "err", err)
		k.emptyResponse()
		return nil
	}
	return err
}

// attempt is one try of a call on one provider.
type attempt struct {
	k        *call
	ctx      context.Context
	ep       *endpoint
	ticket   breakerTicket
	n        int       // 1 for the first attempt
	start    time.Time // client clock
	deadline time.Time // the attempt's (wall clock; zero: none)
	resp     Message   // the call's, or the attempt's own in a race
	req      conn.Request
	p        *conn.Pending
	md       MD // scratch of req.MD

	// Results.
	end  time.Time  // when the attempt ended, client clock
	lost *conn.Conn // the connection whose loss failed the attempt
	err  error      // for the race
}

func (a *attempt) reset() {
	a.ctx, a.ep, a.resp, a.lost = nil, nil, nil, nil
	a.req.Req, a.req.Resp, a.req.MD = nil, nil, nil
	a.p.Reset()
}

// run makes the attempt and settles its outcome with the provider's
// breaker.
func (a *attempt) run() error {
	k := a.k
	m := k.info.Method
	a.lost, a.p.MD = nil, nil
	meta := a.ep.meta.Load()
	if meta.tls && k.c.o.tls == nil {
		return a.refuseTLS()
	}
	a.md = requestMD(a.md[:0], a.ctx, k.c.o.app, a.n, k.st.keyMD, k.creds, meta.token)
	// Filled in place: a composite literal would be built in this frame
	// first, which stays on the stack while the call waits (see Invoke).
	r := &a.req
	*r = conn.Request{}
	r.Method, r.Name, r.Oneway, r.Deadline = m.ID, m.FullName, m.Oneway, a.deadline
	r.Req, r.Resp, r.MD, r.WantMD = k.req, a.resp, a.md, k.opts.respMD != nil
	if a.resp == nil && !m.Oneway {
		r.NewResp = k.newResp
	}
	cn, err := a.ep.tr.get(a.ctx)
	if err == nil {
		a.ep.active.Add(1)
		err = cn.Call(a.ctx, &a.req, a.p)
		a.ep.active.Add(-1)
		// A call that found its connection already lost (not sent) is
		// part of the same loss as the calls in flight on it.
		if err != nil {
			a.lost = cn.lostWith(err)
		}
	}
	if err != nil {
		err = a.connError(err)
	}
	return a.done(err)
}

// refuseTLS fails an attempt on a provider that requires TLS, from a
// client without it: not attempted, nothing for the breaker to count.
func (a *attempt) refuseTLS() error {
	k := a.k
	a.ep.br.Release(a.ticket)
	a.end = k.c.o.clock.Now()
	return &errNotSent{err: Errorf(FailedPrecondition, "%s: provider %s requires TLS: configure the client with rt.WithTLS", k.info.Method.FullName, a.ep.addr)}
}

// connError turns the error of the connection's Call into the attempt's.
func (a *attempt) connError(err error) error {
	err = fromConn(err)
	if CodeOf(err) == Unimplemented && IsRemote(err) {
		// The server knows the method by its ID only.
		e := unwrapNotSent(err).(*Error)
		e.Message = a.k.info.Method.FullName + ": " + e.Message
	}
	return err
}

// done records the end of the attempt, reports it and settles it with
// the provider's breaker; it returns err.
func (a *attempt) done(err error) error {
	k, m := a.k, a.k.info.Method
	a.end = k.c.o.clock.Now()
	if obs := k.c.o.observer; obs != nil {
		obs.Observe(metrics.Event{Side: metrics.Client, Service: k.st.sd.Name, Method: m.Name, Instance: a.ep.addr,
			Attempt: a.n, Code: CodeOf(err).String(), Latency: a.end.Sub(a.start)})
	}
	if k.onAttempt != nil {
		a.report(err)
	}
	if k.c.o.debug && err != nil {
		k.c.o.logger.Debug("rt: attempt failed", "method", m.FullName, "addr", a.ep.addr, "attempt", a.n, "err", err)
	}
	settle(a.ep, a.ticket, err, a.lost, a.end)
	return err
}

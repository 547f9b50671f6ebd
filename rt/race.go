package rt

import (
	"cmp"
	"context"
	"time"

	"github.com/yrpc/yrpc/rt/balance"
	"github.com/yrpc/yrpc/rt/internal/conn"
)

// errRaceLost is the error of a race with no attempt sent.
var errRaceLost = &Error{Code: Unavailable, Message: "no attempt could be sent"}

// race sends the call to up to n providers, the first at once and each next
// one delay later (all at once when delay is 0: forking; hedging
// otherwise, the delay on the client's clock), and returns the first
// success. Attempts that lose are canceled. Each attempt decodes into its
// own response message: the winner's becomes the call's, or is copied
// into the caller's (Invoke).
func (k *call) race(n int, delay time.Duration) error {
	ctx, cancel := context.WithCancel(k.ctx)
	defer cancel()
	now := k.c.o.clock.Now()
	// The call keeps its racer, the providers-tried scratch and the
	// results channel for its next race: the last race's results have
	// all been received.
	results := k.racer.results
	if cap(results) < n {
		results = make(chan *attempt, n)
	}
	r := &k.racer
	*r = racer{k: k, ctx: ctx, now: now, pi: balance.Info{Now: now, Tried: k.pick.Tried[:0]}, results: results}
	defer r.release() // every attempt has delivered its result by then
	first := 1
	if delay == 0 {
		first = n
	} else {
		k.st.budget.request(now) // hedges are retries sent early: see hedge
	}
	for range first {
		r.launch()
	}
	var tick <-chan time.Time
	if delay > 0 && r.sent < n {
		tick = k.c.o.clock.After(delay)
	}
	for r.pending > 0 {
		select {
		case a := <-r.results:
			r.pending--
			if a.err == nil && a.ep != nil || definitive(a.err) {
				// Cancel the losers and wait for them: they may still be
				// encoding the request, which the caller owns again once
				// we return.
				cancel()
				for ; r.pending > 0; r.pending-- {
					<-r.results
				}
				return r.finish(a)
			}
			r.lost(a)
			if delay > 0 && r.sent < n && r.pending == 0 {
				r.hedge() // the attempt failed before the hedge delay: hedge now
			}
		case <-tick:
			tick = nil
			if r.sent < n && r.hedge() {
				if r.sent < n {
					tick = k.c.o.clock.After(delay)
				}
			}
		}
	}
	return r.err()
}

// racer is the state of one race: its attempts deliver their results on
// results, sent counts the launches and pending the results not yet
// received.
type racer struct {
	k       *call
	ctx     context.Context // canceled when the race ends
	now     time.Time
	pi      balance.Info
	results chan *attempt
	sent    int
	pending int
	used    int // attempts of k.raced launched
	// The last error of an attempt, and of a pick that found no provider.
	attemptErr, pickErr error
}

// hedge launches the next attempt of a hedged call if the retry budget
// allows it, and reports whether it did. Hedges are retries sent early:
// without the budget, a method hedged over several tries would multiply
// the load on a cluster that fails every call, the case the budget is for.
func (r *racer) hedge() bool {
	k := r.k
	if !k.st.budget.retry(k.c.o.clock.Now()) {
		k.c.o.logger.Debug("rt: retry budget exhausted: no hedge", "method", k.info.Method.FullName)
		return false
	}
	r.launch()
	return true
}

// launch picks a provider not tried yet and starts an attempt on it. It
// always delivers one result: the attempt's or the pick's error.
func (r *racer) launch() {
	k := r.k
	r.sent++
	r.pending++
	ep, i, ticket, err := k.v.pick(&r.pi, r.now, k.info.Method.FullName, k.st.keyName, k.debugLog())
	if ep == nil {
		r.results <- &attempt{err: err}
		return
	}
	if err := r.ctx.Err(); err != nil { // the caller is gone: send nothing more
		ep.br.Release(ticket)
		r.results <- &attempt{err: ctxError(err, k.info.Method.FullName)}
		return
	}
	r.pi.Tried = append(r.pi.Tried, i)
	a := k.raceAttempt(r.used)
	r.used++
	a.ctx, a.ep, a.ticket, a.n, a.deadline = r.ctx, ep, ticket, len(r.pi.Tried), k.deadline
	if k.info.Method.NewResponseWithRoom == nil {
		a.resp = k.info.Method.NewResponse() // else the connection makes it
	}
	go func() {
		a.start = k.c.o.clock.Now()
		a.err = a.run()
		r.results <- a
	}()
}

// release resets the attempts the race sent, which the call keeps for
// its next races; their results have all been received.
func (r *racer) release() {
	for _, a := range r.k.raced[:r.used] {
		a.reset()
		a.err = nil
	}
	r.k.pick.Tried = r.pi.Tried[:0] // the scratch, grown or not
	r.ctx, r.attemptErr, r.pickErr = nil, nil, nil
}

// raceAttempt returns the call's i-th attempt for races, made on its
// first use: the pooled call keeps it, and with it the connection's
// record (conn.Pending) and the buffers that keeps across calls, so that
// a hedged or forked call's attempts are not made anew each time.
func (k *call) raceAttempt(i int) *attempt {
	for len(k.raced) <= i {
		k.raced = append(k.raced, &attempt{k: k, p: conn.NewPending()})
	}
	return k.raced[i]
}

// lost records the error of an attempt that did not end the race.
func (r *racer) lost(a *attempt) {
	switch {
	case a.err != nil && a.ep != nil:
		r.attemptErr = a.err
	case a.err != nil:
		r.pickErr = a.err
	}
}

// finish ends the race with a, a success or a definitive failure: its
// response metadata and message become the call's.
func (r *racer) finish(a *attempt) error {
	if md := r.k.opts.respMD; md != nil {
		*md = a.p.MD
	}
	if a.err != nil {
		return unwrapNotSent(a.err)
	}
	got := a.resp
	if got == nil {
		got = a.p.Response()
	}
	if r.k.resp == nil {
		r.k.resp = got
		return nil
	}
	return copyMessage(r.k.resp, got)
}

// err is the error of a race that no attempt won: the last attempt's,
// else the last pick's.
func (r *racer) err() error {
	return unwrapNotSent(cmp.Or(r.attemptErr, r.pickErr, error(errRaceLost)))
}

// copyMessage copies src into dst through the wire format (no reflection).
func copyMessage(dst, src Message) error {
	if err := dst.Unmarshal(src.MarshalAppend(nil)); err != nil {
		return Errorf(Internal, "copy response: %v", err)
	}
	return nil
}

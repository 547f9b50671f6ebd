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
// otherwise), and returns the first success. Attempts that lose are
// canceled. Each attempt decodes into its own response message, and the
// winner's is copied into the call's.
func (k *call) race(n int, delay time.Duration) error {
	m := k.info.Method
	now := k.c.o.clock.Now()
	pi := balance.Info{Now: now}
	results := make(chan *attempt, n)
	ctx, cancel := context.WithCancel(k.ctx)
	defer cancel()
	launch := func() {
		ep, i, ticket, err := k.v.pick(&pi, now, k.st.keyName, k.debugLog())
		if ep == nil {
			results <- &attempt{err: err}
			return
		}
		pi.Tried = append(pi.Tried, i)
		a := &attempt{k: k, ctx: ctx, ep: ep, ticket: ticket, n: len(pi.Tried), deadline: k.deadline, resp: m.NewResponse(), p: conn.NewPending()}
		go func() {
			a.start = k.c.o.clock.Now()
			a.err = a.run()
			results <- a
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
	var attemptErr, pickErr error // the last of each
	for pending > 0 {
		select {
		case a := <-results:
			pending--
			if a.err == nil && a.resp != nil || definitive(a.err) {
				// Cancel the losers and wait for them: they may still
				// be encoding the request, which the caller owns again
				// once we return.
				cancel()
				for ; pending > 0; pending-- {
					<-results
				}
				if k.opts.respMD != nil {
					*k.opts.respMD = a.p.MD
				}
				if a.err != nil {
					return unwrapNotSent(a.err)
				}
				return copyMessage(k.resp, a.resp)
			}
			switch {
			case a.err != nil && a.ep != nil:
				attemptErr = a.err
			case a.err != nil:
				pickErr = a.err
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
	if attemptErr == nil {
		attemptErr = cmp.Or(pickErr, error(errRaceLost))
	}
	return unwrapNotSent(attemptErr)
}

// copyMessage copies src into dst through the wire format (no reflection).
func copyMessage(dst, src Message) error {
	if err := dst.Unmarshal(src.MarshalAppend(nil)); err != nil {
		return Errorf(Internal, "copy response: %v", err)
	}
	return nil
}

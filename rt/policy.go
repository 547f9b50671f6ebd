package rt

import (
	"cmp"
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/yrpc/yrpc/rt/internal/conn"
)

// The call policy's decisions, as pure functions of the method's policy,
// the call's options and an attempt's outcome (settle is the one with an
// effect: it reports the outcome to a breaker). call.go applies them.

// defaultTries is the number of attempts of an idempotent method whose
// schema sets no retry policy (as Dubbo's default of two retries).
const defaultTries = 3

// maxNotRunAttempts bounds attempts of calls that never ran (refused,
// no connection, breaker open) for methods that may not retry otherwise.
const maxNotRunAttempts = 3

// minRepickWait is the least a call waits before it picks again after
// finding no provider (see call.awaitProvider), so that a method with no
// retry interval still gives the registry a moment to list one.
const minRepickWait = 10 * time.Millisecond

// faultMode is the call's fault mode: the call option's, else the
// schema's, else failover for idempotent methods and failfast otherwise.
func faultMode(p *MethodPolicy, override FaultMode) FaultMode {
	switch {
	case override != FaultDefault:
		return override
	case p.FaultMode != FaultDefault:
		return p.FaultMode
	case p.Idempotent:
		return FaultFailover
	}
	return FaultFailfast
}

// triesFor is how many attempts a call in mode may make: 1 unless it
// fails over; then the call option's count, else the schema's, else
// defaultTries.
func triesFor(mode FaultMode, schema, override int) int {
	switch {
	case mode != FaultFailover:
		return 1
	case override > 0:
		return override
	case schema >= 1:
		return schema
	}
	return defaultTries
}

// retryable decides whether a failed attempt is tried again elsewhere:
// attempt is its number (1-based), ran the attempts so far that may have
// executed, notRun whether this one provably did not.
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
	return retryableCode(CodeOf(err))
}

// retryableCode says which failures of a call that may have run are worth
// another provider's try. DeadlineExceeded, local or from the server, is
// the end of a try, whose deadline may come before the call's; retryWait
// stops once the call's own deadline has passed.
func retryableCode(c Code) bool {
	switch c {
	case Unavailable, DeadlineExceeded, Internal, ResourceExhausted, Aborted:
		return true
	}
	return false
}

// definitive reports whether err is an answer another provider would
// give too (an application error, a refusal by the service's rules), so
// that racing attempts are not worth waiting for.
func definitive(err error) bool {
	return IsRemote(err) && !isNotSent(err) && !retryableCode(CodeOf(err))
}

// isNotSent reports whether err marks a call that provably did not run.
func isNotSent(err error) bool {
	var ns *errNotSent
	return errors.As(err, &ns)
}

// isLostBeforeSent reports whether err marks a call that did not leave
// because its connection was lost: its provider may take it on a new
// connection.
func isLostBeforeSent(err error) bool {
	var ns *errNotSent
	return errors.As(err, &ns) && ns.lost
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
func settle(ep *endpoint, t breakerTicket, err error, lost *conn.Conn, now time.Time) {
	br := ep.br
	switch {
	case CodeOf(err) == Canceled:
		br.Release(t)
	case lost != nil && ep.lastLost.Swap(lost) == lost:
		br.Release(t)
	case !countsAsFailure(err):
		br.Done(now, t, true)
	case IsRemote(err):
		br.DoneAnswered(now, t)
	default:
		br.Done(now, t, false)
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

// callDeadline is the earliest of ctx's deadline and now plus the call's
// timeout (call option, else schema, else client default); zero: none.
// Deadlines are wall-clock time (they go on the wire and on sockets), so
// now is read from the wall clock, and only when a timeout applies.
func callDeadline(ctx context.Context, schema, opt, def time.Duration) time.Time {
	return earliest(ctx, time.Now, cmp.Or(opt, schema, def))
}

// earliest is the earlier of ctx's deadline and now()+d (d > 0).
func earliest(ctx context.Context, now func() time.Time, d time.Duration) time.Time {
	var dl time.Time
	if d > 0 {
		dl = now().Add(d)
	}
	if cd, ok := ctx.Deadline(); ok && (dl.IsZero() || cd.Before(dl)) {
		dl = cd
	}
	return dl
}

// tryDeadline is the deadline of an attempt that starts at now (wall
// clock) of a call that must end by deadline (zero: none). With a try
// timeout (the call option's, else the schema's TryTimeout) it is now plus
// that. Without one, an attempt that may be followed by another (lastTry
// false) gets half the time left, so that a provider that hangs costs one
// try and leaves the rest for the others, and the last try gets all of
// it. Never past the call's deadline; zero when neither bounds it.
func tryDeadline(now, deadline time.Time, try time.Duration, lastTry bool) time.Time {
	var dl time.Time
	switch {
	case try > 0:
		dl = now.Add(try)
	case lastTry || deadline.IsZero():
		return deadline
	default:
		dl = now.Add(deadline.Sub(now) / 2)
	}
	if !deadline.IsZero() && deadline.Before(dl) {
		return deadline
	}
	return dl
}

// backoff is the wait before retry number n (1-based): the interval,
// multiplied by Backoff per earlier retry up to MaxInterval, then moved by
// ±Jitter of itself; u in [0, 1) picks the jitter (0.5: none).
func backoff(p RetryPolicy, n int, u float64) time.Duration {
	d := p.Interval
	if d <= 0 {
		return 0
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
		d += time.Duration((u*2 - 1) * p.Jitter * float64(d))
	}
	return d
}

// requestMD appends a request's metadata to dst: the attempt number of a
// retry, ctx's outgoing metadata, the app name, and then more (the group
// and version, the credentials' metadata, the provider's registry token).
func requestMD(dst MD, ctx context.Context, app string, attempt int, more ...MD) MD {
	if attempt > 1 {
		dst = append(dst, MDAttempt, strconv.Itoa(attempt))
	}
	if out := OutgoingMetadata(ctx); len(out) > 0 {
		dst = append(dst, out...)
	}
	if app != "" {
		dst = append(dst, MDApp, app)
	}
	for _, m := range more {
		dst = append(dst, m...)
	}
	return dst
}

// ctxError turns a context's error into an *Error naming what waited.
func ctxError(err error, what string) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: DeadlineExceeded, Message: what + ": deadline exceeded", Cause: err}
	}
	return &Error{Code: Canceled, Message: what + ": canceled", Cause: err}
}

// Package limiter admits or refuses work by rate and by concurrency: a
// token bucket ([Bucket]), a table of buckets keyed by client address
// ([ClientIP], [ClientKey]) or calling app ([Keyed]) and an in-flight
// limiter ([Concurrency]).
//
// Time is always a parameter: every decision takes the caller's now, so the
// limiters are deterministic under a fake clock and never read the system
// clock to decide. [Bucket.Wait] and [Bucket.WaitN] are the only blocking
// calls; they sleep through an injected [Clock] and fail at once, without
// sleeping, when the context's deadline comes before a token would.
//
// # Algorithm
//
// [Bucket] and [Keyed] implement the token bucket as GCRA (the generic cell
// rate algorithm, ITU-T I.371): the whole state of a bucket is one
// int64, the "theoretical arrival time" tat at which the bucket would be
// full again. Taking n tokens at now moves tat to max(tat, now)+n·T, where
// T is the interval between tokens, and is allowed when the result is at
// most now+burst·T. Refill is therefore lazy and fractional: a bucket with
// rate 10/s that was emptied has half a token 50 ms later, not nothing until
// a whole second has passed. Because the state is a single word, [Bucket]
// decides with one compare-and-swap and no lock.
//
// T is kept in whole nanoseconds, so a rate is exact to within half a
// nanosecond per token: exact for the usual 1–10⁶ tokens/s, about 0.5 %
// off at 10⁷/s; rates at or above 10⁹/s (less than a nanosecond per token)
// are unlimited.
//
// # Limits at the edges
//
// For all limiters in this package:
//
//   - rate ≥ [Inf] (or +Inf, or ≥ 10⁹/s) admits everything and ignores burst;
//   - rate ≤ 0 (or NaN) admits nothing: it is a closed valve;
//   - burst < 1 with a positive finite rate means burst 1: one event per
//     1/rate, no bursts;
//   - a request for more tokens than burst is never admitted;
//   - [Concurrency] with max ≤ 0 is unlimited (it still counts).
//
// Pass time.Now() values (or a fake clock's) as now: the limiters measure
// time from a fixed origin with time.Time.Sub, which uses the monotonic
// clock when both sides carry it, so wall-clock steps do not disturb them.
// Times more than about 290 years from the process start are out of range.
package limiter

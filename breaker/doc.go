// Package breaker is a circuit breaker: it stops calls to a failing
// instance for a while, then lets a few probe calls through to see whether
// it has recovered.
//
// A [Breaker] is closed (calls pass), open (calls fail fast) or half-open
// (a fixed number of probe calls pass). It trips from closed to open when,
// within a sliding time window of recent results, there are at least
// MinRequests results and the share of failures reaches ErrorRate, or when
// ConsecutiveFailures failures come in a row. After OpenFor it becomes
// half-open and admits exactly HalfOpenProbes probes: if they all succeed
// it closes with an empty window; any failure opens it again. A probe that
// does not report within ProbeTimeout frees its place for another probe.
//
// Every call is bracketed by [Breaker.Allow], which returns a [Ticket], and
// [Breaker.Done] with that ticket and the call's outcome. A ticket carries
// the breaker's generation, which changes with every state change, so a
// result that arrives after the state has changed (a slow call admitted
// before the breaker opened, a probe that was given up on) is ignored
// instead of polluting the new state.
//
// Which outcomes are failures is the caller's decision: the breaker only
// sees success or failure, and whether a failure came with an answer of
// the instance ([Breaker.DoneAnswered]: it counts toward the error rate
// but ends a run of consecutive failures, which is meant for instances
// that do not answer at all). The yrpc client counts transport errors and
// the codes DeadlineExceeded, Unavailable and Internal as failures, those
// the server sent as answered ones, and not InvalidArgument, NotFound or
// application errors, which say nothing about the instance's health. A call whose outcome says nothing either, such as
// one its caller canceled, ends with [Breaker.Release] instead of Done: it
// is not counted, and a half-open probe's place is freed at once.
//
// [Breaker.Reset] starts over, closed and with nothing counted, for an
// instance replaced by a new one: the yrpc client resets a provider's
// breaker when the provider registers again at the same address with a
// new start time (a restarted process), so that a breaker opened by the
// old process's refused connections does not refuse the new process for
// its open period.
//
// Time is a parameter of every method: the breaker never reads the clock,
// so tests drive it with a fake one. Pass time.Now() values in production;
// durations are measured with time.Time.Sub, which uses the monotonic
// clock, so wall-clock steps do not disturb the breaker.
package breaker

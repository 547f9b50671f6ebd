package limiter

import (
	"math"
	"time"
)

// Inf is the rate of a limiter that admits everything.
const Inf = math.MaxFloat64

// maxBurst caps the burst, far above any useful one, so that a token
// still lasts at least a nanosecond within maxTau.
const maxBurst = int64(1) << 40

// maxTau caps the time to refill an empty bucket (about 73 years) so that
// now+tau never overflows.
const maxTau = int64(1) << 61

// epoch is the origin of the nanosecond times the limiters keep. Taking
// differences from a time.Now() value makes them use the monotonic clock
// for callers that pass time.Now() values too, so a step of the wall clock
// cannot block a bucket. It is set once and never changes.
var epoch = time.Now()

// nanos returns t as nanoseconds since epoch.
func nanos(t time.Time) int64 { return int64(t.Sub(epoch)) }

// mode says how a limit decides.
type mode uint8

const (
	modeFinite    mode = iota // GCRA with unit and tau
	modeUnlimited             // admit everything
	modeClosed                // admit nothing
)

// limit is an immutable rate and burst, with the derived GCRA constants.
type limit struct {
	rate  float64 // as given
	burst int     // as given
	mode  mode
	n     int64 // effective burst, ≥ 1
	unit  int64 // nanoseconds per token, ≥ 1
	tau   int64 // n·unit: nanoseconds to refill an empty bucket
}

// newLimit derives the GCRA constants of rate and burst as the package doc
// describes.
func newLimit(rate float64, burst int) limit {
	l := limit{rate: rate, burst: burst}
	switch {
	case rate != rate || rate <= 0: // NaN or non-positive
		l.mode = modeClosed
		return l
	case rate >= 1e9: // Inf too: less than 1 ns per token
		l.mode = modeUnlimited
		return l
	}
	l.n = min(max(int64(burst), 1), maxBurst)
	u := math.Round(float64(time.Second) / rate) // ≥ 1 as rate < 1e9
	if u*float64(l.n) > float64(maxTau) {
		u = float64(maxTau / l.n)
	}
	l.unit = int64(u)
	l.tau = l.unit * l.n
	return l
}

// take decides whether n tokens may be taken at now from a bucket whose
// theoretical arrival time is tat, allowing a wait of at most maxWait
// nanoseconds. It returns the new tat and the wait. n must be in [1, l.n]
// and l.mode must be modeFinite.
func (l *limit) take(tat, now int64, n int64, maxWait int64) (next, wait int64, ok bool) {
	next = max(tat, now) + n*l.unit // idle time beyond a full bucket is lost
	wait = next - now - l.tau
	if wait <= 0 {
		return next, 0, true
	}
	return next, wait, wait <= maxWait
}

// tokens returns how many tokens a bucket with theoretical arrival time tat
// holds at now.
func (l *limit) tokens(tat, now int64) float64 {
	switch l.mode {
	case modeUnlimited:
		return Inf
	case modeClosed:
		return 0
	}
	deficit := l.deficit(tat, now)
	return float64(l.tau-deficit) / float64(l.unit)
}

// convert returns the tat under l of a bucket whose tat under old is tat at
// now, keeping its number of missing tokens. A bucket that was unlimited
// or closed starts full.
func (l *limit) convert(old *limit, tat, now int64) int64 {
	if l.mode != modeFinite || old.mode != modeFinite {
		return math.MinInt64
	}
	deficit := old.deficit(tat, now)
	if deficit == 0 {
		return math.MinInt64
	}
	missing := float64(deficit) / float64(old.unit)
	d := min(math.Round(missing*float64(l.unit)), float64(l.tau))
	return now + int64(d)
}

// deficit returns how far (in nanoseconds, within [0, tau]) a bucket with
// theoretical arrival time tat is from full at now.
func (l *limit) deficit(tat, now int64) int64 {
	if tat <= now { // also keeps tat-now from overflowing for math.MinInt64
		return 0
	}
	return min(tat-now, l.tau)
}

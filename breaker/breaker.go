package breaker

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// State is a breaker's state.
type State uint8

// States.
const (
	Closed   State = iota // calls pass; results are counted
	Open                  // calls fail fast
	HalfOpen              // a fixed number of probe calls pass
)

// String returns "closed", "open" or "half-open".
func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Settings configures a [Breaker]. The zero value means the defaults given
// per field; negative numbers also mean the defaults.
type Settings struct {
	// Window is the span of the sliding window of results; 0 means 10s.
	Window time.Duration
	// Buckets is how many time buckets the window is kept in; 0 means 10.
	// Buckets start at the first result counted; the oldest leaves the
	// window as a whole, so the window covers between
	// Window−Window/Buckets and Window of history.
	Buckets int
	// MinRequests is how many results the window must hold before the
	// error rate can trip the breaker; 0 means 20.
	MinRequests int
	// ErrorRate trips the breaker when failures/results in the window
	// reaches it (≥); 0 means 0.5. A value above 1 turns this trip off.
	ErrorRate float64
	// ConsecutiveFailures trips the breaker after that many failures in a
	// row, whatever the window holds; 0 means off. A failure reported with
	// DoneAnswered (the instance answered) ends a run, as a success does.
	ConsecutiveFailures int
	// OpenFor is how long the breaker stays open before it lets probes
	// through; 0 means 5s.
	OpenFor time.Duration
	// HalfOpenProbes is how many probe calls the half-open breaker admits;
	// all must succeed to close it. 0 means 3: one lucky success on a
	// flapping instance is not enough evidence, and three probes cost
	// little.
	HalfOpenProbes int
	// ProbeTimeout is how long a probe may go without reporting before its
	// place is given to another probe (its late result is then ignored);
	// 0 means OpenFor.
	ProbeTimeout time.Duration
	// OnStateChange, if not nil, is called after every state change, in
	// the order of the changes, outside the breaker's lock, on the
	// goroutine whose Allow, Done, DoneAnswered, State, Counts or Reset call
	// caused the change.
	// It may call the breaker's methods. Keep it short: while it runs,
	// later changes queue behind it (calls on other goroutines do not
	// wait), and it must not panic.
	OnStateChange func(from, to State)
}

// Ticket is the admission of one call; hand it back to [Breaker.Done]. Its
// zero value is a ticket that Done ignores.
type Ticket struct {
	gen   uint64 // generation the call was admitted in
	probe uint64 // probe sequence number; 0 for a call in the closed state
}

// Counts is a snapshot of a breaker, for metrics and debugging.
type Counts struct {
	State State
	// Generation counts state changes and resets; it starts at 1.
	Generation uint64
	// Requests and Failures are the results in the window (closed state).
	Requests, Failures int
	// ConsecutiveFailures is the current run of failures (closed state).
	ConsecutiveFailures int
	// Probes is how many half-open probes are in flight, and
	// ProbeSuccesses how many have succeeded so far.
	Probes, ProbeSuccesses int
}

// Breaker is a circuit breaker (see the package doc). Allow is lock-free
// while the breaker is closed and while it is open before OpenFor ends;
// Done is lock-free for a success in the closed state (except for the
// first result of each time bucket) and takes a short lock otherwise.
// Neither allocates.
//
// A Breaker is safe for concurrent use. Its zero value is not usable; make
// one with [New]. It must not be copied after first use.
type Breaker struct {
	// word is gen<<2 | state, for the lock-free paths of Allow.
	word atomic.Uint64
	// openUntil is when the open state ends, in nanoseconds since epoch.
	openUntil atomic.Int64

	// consec is uint32(gen)<<32 | failures in a row in that generation.
	consec atomic.Uint64
	// win is the closed state's window of results.
	win window
	_   [64]byte // keeps the lock's cache line apart from the words above

	mu        sync.Mutex
	set       settings
	state     State
	gen       uint64
	probes    []probe  // half-open: probe places
	successes int      // half-open: probes that succeeded
	seq       uint64   // last probe sequence number given out
	pending   []change // state changes not yet reported
	notifying bool     // a goroutine is calling OnStateChange
}

// settings are Settings with the defaults applied, in nanoseconds.
type settings struct {
	width       int64 // of a bucket
	minRequests int
	errorRate   float64
	consecutive int
	openFor     int64
	probes      int
	probeFor    int64
	onChange    func(from, to State)
}

// probe is a half-open probe place.
type probe struct {
	seq      uint64 // 0: free
	deadline int64
}

// change is a state change to report.
type change struct{ from, to State }

// New returns a closed breaker with settings s.
func New(s Settings) *Breaker {
	d := func(v, def time.Duration) time.Duration {
		if v <= 0 {
			return def
		}
		return v
	}
	i := func(v, def int) int {
		if v <= 0 {
			return def
		}
		return v
	}
	span := d(s.Window, 10*time.Second)
	buckets := i(s.Buckets, 10)
	openFor := d(s.OpenFor, 5*time.Second)
	rate := s.ErrorRate
	if !(rate > 0) { // also NaN
		rate = 0.5
	}
	b := &Breaker{
		set: settings{
			width:       max(int64(span)/int64(buckets), 1),
			minRequests: i(s.MinRequests, 20),
			errorRate:   rate,
			consecutive: max(s.ConsecutiveFailures, 0),
			openFor:     int64(openFor),
			probes:      i(s.HalfOpenProbes, 3),
			probeFor:    int64(d(s.ProbeTimeout, openFor)),
			onChange:    s.OnStateChange,
		},
		gen: 1,
	}
	b.win = window{width: b.set.width, ring: make([]slot, buckets)}
	b.probes = make([]probe, b.set.probes)
	b.word.Store(b.gen<<2 | uint64(Closed))
	b.consec.Store(uint64(uint32(b.gen)) << 32)
	return b
}

// Allow reports whether a call may go ahead at now and, if so, returns the
// ticket to pass to Done when it ends. A caller that gets false must not
// make the call (and must not call Done).
func (b *Breaker) Allow(now time.Time) (Ticket, bool) {
	w := b.word.Load()
	switch State(w & 3) {
	case Closed:
		return Ticket{gen: w >> 2}, true
	case Open:
		if nanos(now) < b.openUntil.Load() {
			return Ticket{}, false
		}
	}
	b.mu.Lock()
	t := nanos(now)
	b.advance(t)
	var tk Ticket
	ok := false
	switch b.state {
	case Closed:
		tk, ok = Ticket{gen: b.gen}, true
	case HalfOpen:
		tk, ok = b.admitProbe(t)
	}
	b.unlockAndNotify()
	return tk, ok
}

// admitProbe gives a probe place to a call if one is free and fewer than
// HalfOpenProbes probes have been admitted without being given up on.
func (b *Breaker) admitProbe(t int64) (Ticket, bool) {
	free, busy := -1, 0
	for i := range b.probes {
		p := &b.probes[i]
		if p.seq != 0 && p.deadline <= t {
			p.seq = 0 // hung: give its place away
		}
		if p.seq != 0 {
			busy++
		} else if free < 0 {
			free = i
		}
	}
	if free < 0 || busy+b.successes >= b.set.probes {
		return Ticket{}, false
	}
	b.seq++
	b.probes[free] = probe{seq: b.seq, deadline: t + b.set.probeFor}
	return Ticket{gen: b.gen, probe: b.seq}, true
}

// Done reports the outcome of a call admitted by Allow with ticket tk.
// Results from an earlier generation than the current one, of probes given
// up on, and of the zero Ticket are ignored.
func (b *Breaker) Done(now time.Time, tk Ticket, success bool) {
	// A success in the closed state is counted without the lock. If the
	// state changes meanwhile, the window is emptied and the count fails
	// its stamp check, sending the result to the locked path, which drops
	// it; only a whole open/half-open/closed cycle within one bucket's
	// span could let it count in the new window.
	if success && tk.probe == 0 && b.word.Load() == tk.gen<<2|uint64(Closed) && b.win.addSuccess(nanos(now)) {
		b.clearConsec(tk.gen)
		return
	}
	outcome := failed
	if success {
		outcome = succeeded
	}
	b.done(now, tk, outcome)
}

// DoneAnswered reports a call admitted with ticket tk that failed with an
// answer of the instance itself, such as an error status. It counts as a
// failure toward the error rate and fails a probe, as Done(now, tk, false)
// does, but it ends a run of consecutive failures instead of extending
// it: the answer shows that the instance is alive, and
// ConsecutiveFailures is there for instances that do not answer at all.
// (Answers that come in batches would otherwise line up failures that
// were interleaved with successes.)
func (b *Breaker) DoneAnswered(now time.Time, tk Ticket) { b.done(now, tk, answered) }

// outcome is how a call ended, for done.
type outcome uint8

const (
	succeeded outcome = iota
	failed            // no answer: extends the run of failures
	answered          // an error answer: a failure that ends the run
)

func (b *Breaker) done(now time.Time, tk Ticket, o outcome) {
	b.mu.Lock()
	if tk.gen != b.gen {
		b.mu.Unlock()
		return
	}
	t := nanos(now)
	switch b.state {
	case Closed:
		if tk.probe == 0 {
			b.record(t, o)
		}
	case HalfOpen:
		for i := range b.probes {
			p := &b.probes[i]
			if p.seq == 0 || p.seq != tk.probe {
				continue
			}
			p.seq = 0
			if o != succeeded {
				b.toOpen(t)
			} else if b.successes++; b.successes >= b.set.probes {
				b.to(Closed)
			}
			break
		}
	}
	b.unlockAndNotify()
}

// Release ends a call admitted with ticket tk whose outcome says nothing
// about the instance, such as a call the caller canceled: nothing is
// counted, and a probe's place is freed at once for another probe instead
// of after ProbeTimeout. Releasing a stale or zero ticket does nothing.
func (b *Breaker) Release(tk Ticket) {
	if tk.probe == 0 {
		return // closed-state calls hold nothing
	}
	b.mu.Lock()
	if tk.gen == b.gen && b.state == HalfOpen {
		for i := range b.probes {
			if b.probes[i].seq == tk.probe {
				b.probes[i].seq = 0
				break
			}
		}
	}
	b.mu.Unlock()
}

// Reset forgets everything b has seen, as if it had just been made: it
// closes b if it is open or half-open (reporting the change to
// OnStateChange) and empties the window and the run of failures. It starts
// a new generation, so the results of calls admitted before it are
// ignored. Use it when the instance behind b is replaced by a new one,
// such as a provider that restarted: what the old one did says nothing
// about the new one.
func (b *Breaker) Reset() {
	b.mu.Lock()
	if b.state != Closed {
		b.to(Closed)
	} else {
		b.renew()
	}
	b.unlockAndNotify()
}

// record counts a result in the closed state's window and trips the
// breaker if a threshold is reached.
func (b *Breaker) record(t int64, o outcome) {
	idx := b.win.add(t, o != succeeded)
	switch o {
	case succeeded:
		b.clearConsec(b.gen)
		return
	case answered:
		b.clearConsec(b.gen)
	case failed:
		if n := b.addConsec(); b.set.consecutive > 0 && n >= b.set.consecutive {
			b.toOpen(t)
			return
		}
	}
	total, failures := b.win.sums(idx)
	if total >= b.set.minRequests && float64(failures) >= b.set.errorRate*float64(total) {
		b.toOpen(t)
	}
}

// clearConsec ends the run of failures of generation gen, if any. It is
// safe to call without the lock and writes nothing when there is no run.
func (b *Breaker) clearConsec(gen uint64) {
	for {
		c := b.consec.Load()
		if uint32(c>>32) != uint32(gen) || uint32(c) == 0 || b.consec.CompareAndSwap(c, c&^countMask) {
			return
		}
	}
}

// addConsec extends the current generation's run of failures and returns
// its length. The lock must be held.
func (b *Breaker) addConsec() int {
	for {
		c := b.consec.Load()
		n := uint64(0)
		if uint32(c>>32) == uint32(b.gen) {
			n = c & countMask
		}
		if n == countMask {
			return int(n)
		}
		if b.consec.CompareAndSwap(c, uint64(uint32(b.gen))<<32|(n+1)) {
			return int(n + 1)
		}
	}
}

// consecutive returns the current generation's run of failures.
func (b *Breaker) consecutive() int {
	c := b.consec.Load()
	if uint32(c>>32) != uint32(b.gen) {
		return 0
	}
	return int(c & countMask)
}

// advance applies the change that time alone causes: open to half-open.
func (b *Breaker) advance(t int64) {
	if b.state == Open && t >= b.openUntil.Load() {
		b.to(HalfOpen)
	}
}

// toOpen opens the breaker at t.
func (b *Breaker) toOpen(t int64) {
	b.openUntil.Store(t + b.set.openFor)
	b.to(Open)
}

// to changes the state, starts a new generation with a clean slate for
// the new state and queues the change for OnStateChange.
func (b *Breaker) to(s State) {
	from := b.state
	b.state = s
	b.renew()
	if b.set.onChange != nil {
		b.pending = append(b.pending, change{from, s})
	}
}

// renew starts a new generation of the current state with a clean slate:
// an empty window, no run of failures, no probes. The lock must be held.
func (b *Breaker) renew() {
	b.gen++
	b.win.reset()
	b.consec.Store(uint64(uint32(b.gen)) << 32)
	clear(b.probes)
	b.successes = 0
	b.word.Store(b.gen<<2 | uint64(b.state))
}

// unlockAndNotify unlocks b and reports queued state changes, in order and
// outside the lock, unless another goroutine is already doing so (it will
// report them too).
func (b *Breaker) unlockAndNotify() {
	if len(b.pending) == 0 || b.notifying {
		b.mu.Unlock()
		return
	}
	b.notifying = true
	for len(b.pending) > 0 {
		c := b.pending[0]
		b.pending = append(b.pending[:0], b.pending[1:]...)
		b.mu.Unlock()
		b.set.onChange(c.from, c.to)
		b.mu.Lock()
	}
	b.notifying = false
	b.mu.Unlock()
}

// State returns the state at now, applying the open to half-open change if
// OpenFor has passed.
func (b *Breaker) State(now time.Time) State {
	if w := b.word.Load(); State(w&3) == Closed {
		return Closed
	}
	b.mu.Lock()
	b.advance(nanos(now))
	s := b.state
	b.unlockAndNotify()
	return s
}

// Counts returns a snapshot of b at now, applying the open to half-open
// change if OpenFor has passed.
func (b *Breaker) Counts(now time.Time) Counts {
	b.mu.Lock()
	t := nanos(now)
	b.advance(t)
	c := Counts{
		State:               b.state,
		Generation:          b.gen,
		ConsecutiveFailures: b.consecutive(),
		ProbeSuccesses:      b.successes,
	}
	if b.state == Closed && b.win.started.Load() {
		c.Requests, c.Failures = b.win.sums(b.win.index(t))
	}
	for _, p := range b.probes {
		if p.seq != 0 && p.deadline > t {
			c.Probes++
		}
	}
	b.unlockAndNotify()
	return c
}

// epoch is the origin of the nanosecond times the breaker keeps; see
// nanos. It is set once and never changes.
var epoch = time.Now()

// nanos returns t as nanoseconds since epoch. time.Time.Sub uses the
// monotonic clock when t carries it, as time.Now() values do.
func nanos(t time.Time) int64 { return int64(t.Sub(epoch)) }

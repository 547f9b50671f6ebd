package breaker

import (
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// run makes one call per letter of pattern at now: S succeeds, F fails.
// Every call must be admitted.
func run(t *testing.T, b *Breaker, now time.Time, pattern string) {
	t.Helper()
	for i, c := range pattern {
		tk, ok := b.Allow(now)
		if !ok {
			t.Fatalf("call %d of %q refused", i, pattern)
		}
		b.Done(now, tk, c == 'S')
	}
}

func TestTrips(t *testing.T) {
	type batch struct {
		at      time.Duration
		pattern string
		want    State
	}
	F := func(n int) string { return strings.Repeat("F", n) }
	S := func(n int) string { return strings.Repeat("S", n) }
	tests := []struct {
		name    string
		s       Settings
		batches []batch
	}{
		{"19 of 19 failures do not trip, the 20th does", Settings{}, []batch{
			{0, F(19), Closed}, {0, F(1), Open},
		}},
		{"min requests counts successes too", Settings{MinRequests: 10}, []batch{
			{0, S(5) + F(4), Closed}, {0, F(1), Open},
		}},
		{"error rate below threshold stays closed", Settings{}, []batch{
			{0, strings.Repeat("SSSSSSFFFF", 10), Closed}, // 40 %
			{time.Second, strings.Repeat("SF", 50) + "S", Closed},
		}},
		{"error rate at threshold trips", Settings{}, []batch{
			{0, S(10) + F(9), Closed}, {0, F(1), Open}, // 10 of 20
		}},
		{"custom error rate", Settings{ErrorRate: 0.2, MinRequests: 5}, []batch{
			{0, S(8) + F(1), Closed}, {0, F(1), Open}, // 2 of 10
		}},
		{"error rate above 1 never trips", Settings{ErrorRate: 1.5}, []batch{
			{0, F(1000), Closed},
		}},
		{"old buckets age out", Settings{Window: 10 * time.Second, Buckets: 10}, []batch{
			{0, F(15), Closed},
			{10 * time.Second, F(5), Closed}, // the t=0 bucket has left
			{19 * time.Second, F(14), Closed},
			{19 * time.Second, F(1), Open}, // 5 + 15 in buckets 10 and 19
		}},
		{"buckets inside the window count", Settings{Window: 10 * time.Second, Buckets: 10}, []batch{
			{0, F(15), Closed}, {9*time.Second + 999*time.Millisecond, F(5), Open},
		}},
		{"successes age out too", Settings{}, []batch{
			{0, S(30), Closed},
			{10 * time.Second, F(19), Closed},
			{10 * time.Second, F(1), Open}, // 20 of 20: the successes have left
		}},
		{"successes across buckets count", Settings{}, []batch{
			{0, S(10), Closed},
			{5 * time.Second, F(9), Closed},
			{9*time.Second + 900*time.Millisecond, F(1), Open}, // 10 of 20
		}},
		{"consecutive failures trip", Settings{ConsecutiveFailures: 5, MinRequests: 1000}, []batch{
			{0, S(100) + F(4) + "S" + F(4), Closed}, {0, F(1), Open},
		}},
		{"consecutive failures across buckets", Settings{ConsecutiveFailures: 3, MinRequests: 1000}, []batch{
			{0, F(2), Closed}, {time.Minute, F(1), Open},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(tt.s)
			for i, bt := range tt.batches {
				run(t, b, at(bt.at), bt.pattern)
				if got := b.State(at(bt.at)); got != bt.want {
					t.Fatalf("after batch %d: State = %v, want %v (%+v)", i, got, bt.want, b.Counts(at(bt.at)))
				}
			}
		})
	}
}

// trip opens b at now with failures, ConsecutiveFailures being 1.
func trip(t *testing.T, b *Breaker, now time.Time) {
	t.Helper()
	run(t, b, now, "F")
	if s := b.State(now); s != Open {
		t.Fatalf("State = %v after a failure, want open", s)
	}
}

func TestOpenFor(t *testing.T) {
	b := New(Settings{ConsecutiveFailures: 1, OpenFor: 5 * time.Second})
	trip(t, b, t0)
	steps := []struct {
		at   time.Duration
		want State
		ok   bool
	}{
		{0, Open, false},
		{4*time.Second + 999*time.Millisecond, Open, false},
		{5 * time.Second, HalfOpen, true},
	}
	for _, s := range steps {
		if _, ok := b.Allow(at(s.at)); ok != s.ok {
			t.Errorf("Allow(t0+%v) = %v, want %v", s.at, ok, s.ok)
		}
		if got := b.State(at(s.at)); got != s.want {
			t.Errorf("State(t0+%v) = %v, want %v", s.at, got, s.want)
		}
	}
}

func TestHalfOpenProbes(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		for _, failAt := range []int{-1, 0, n - 1} { // which probe fails; -1: none
			b := New(Settings{ConsecutiveFailures: 1, OpenFor: time.Second, HalfOpenProbes: n})
			trip(t, b, t0)
			now := at(time.Second)
			var tks []Ticket
			for {
				tk, ok := b.Allow(now)
				if !ok {
					break
				}
				tks = append(tks, tk)
				if len(tks) > n {
					break
				}
			}
			if len(tks) != n {
				t.Fatalf("n=%d: half-open admitted %d probes", n, len(tks))
			}
			for i, tk := range tks {
				b.Done(now, tk, i != failAt)
				want := HalfOpen
				switch {
				case i >= failAt && failAt >= 0:
					want = Open
				case i == n-1:
					want = Closed
				}
				if got := b.State(now); got != want {
					t.Fatalf("n=%d, failAt=%d: after probe %d State = %v, want %v", n, failAt, i, got, want)
				}
				// While probes are out, no extra call is admitted.
				if _, ok := b.Allow(now); ok != (want == Closed) {
					t.Fatalf("n=%d, failAt=%d: after probe %d Allow = %v", n, failAt, i, ok)
				}
			}
		}
	}
}

func TestDefaults(t *testing.T) {
	b := New(Settings{})
	run(t, b, t0, strings.Repeat("F", 20))
	if b.State(t0) != Open {
		t.Fatal("20 failures did not trip a default breaker")
	}
	if b.State(at(5*time.Second-1)) != Open || b.State(at(5*time.Second)) != HalfOpen {
		t.Fatal("default OpenFor is not 5s")
	}
	now := at(5 * time.Second)
	for i := range 3 {
		if _, ok := b.Allow(now); !ok {
			t.Fatalf("probe %d refused", i)
		}
	}
	if _, ok := b.Allow(now); ok {
		t.Fatal("default breaker admitted a 4th probe")
	}
	// The probes hang: the default ProbeTimeout (OpenFor) frees them.
	if _, ok := b.Allow(at(10*time.Second - 1)); ok {
		t.Fatal("probe place freed before ProbeTimeout")
	}
	if _, ok := b.Allow(at(10 * time.Second)); !ok {
		t.Fatal("probe place not freed at ProbeTimeout")
	}
}

func TestStaleGeneration(t *testing.T) {
	b := New(Settings{MinRequests: 4, OpenFor: time.Second, HalfOpenProbes: 1})
	// Two slow calls admitted while closed.
	slow1, _ := b.Allow(t0)
	slow2, _ := b.Allow(t0)
	run(t, b, t0, "FFFF")
	if b.State(t0) != Open {
		t.Fatal("not open")
	}
	// Close again through a probe.
	now := at(time.Second)
	probe, ok := b.Allow(now)
	if !ok {
		t.Fatal("probe refused")
	}
	b.Done(now, probe, true)
	if b.State(now) != Closed {
		t.Fatal("not closed after the probe")
	}
	// The slow calls fail now: they belong to an old generation.
	b.Done(now, slow1, false)
	b.Done(now, slow2, false)
	b.Done(now, probe, false) // reported twice: ignored too
	b.Done(now, Ticket{}, false)
	c := b.Counts(now)
	if c.Requests != 0 || c.Failures != 0 || c.ConsecutiveFailures != 0 {
		t.Fatalf("stale results counted: %+v", c)
	}
	if c.Generation != 4 {
		t.Fatalf("Generation = %d after 3 changes, want 4", c.Generation)
	}
	run(t, b, now, "FFF")
	if b.State(now) != Closed {
		t.Fatal("3 fresh failures tripped: stale ones were counted")
	}
}

func TestHungProbe(t *testing.T) {
	b := New(Settings{ConsecutiveFailures: 1, OpenFor: time.Second, HalfOpenProbes: 1, ProbeTimeout: 2 * time.Second})
	trip(t, b, t0)
	hung, ok := b.Allow(at(time.Second))
	if !ok {
		t.Fatal("probe refused")
	}
	steps := []struct {
		at time.Duration
		ok bool
	}{
		{time.Second, false},
		{3*time.Second - 1, false},
		{3 * time.Second, true}, // the hung probe's place is freed
		{3 * time.Second, false},
	}
	var probe Ticket
	for i, s := range steps {
		tk, ok := b.Allow(at(s.at))
		if ok != s.ok {
			t.Fatalf("step %d: Allow(t0+%v) = %v, want %v", i, s.at, ok, s.ok)
		}
		if ok {
			probe = tk
		}
	}
	c := b.Counts(at(3 * time.Second))
	if c.State != HalfOpen || c.Probes != 1 {
		t.Fatalf("Counts = %+v, want half-open with 1 probe", c)
	}
	b.Done(at(4*time.Second), hung, false) // too late: ignored
	if s := b.State(at(4 * time.Second)); s != HalfOpen {
		t.Fatalf("late result of a freed probe changed the state to %v", s)
	}
	b.Done(at(4*time.Second), probe, true)
	if s := b.State(at(4 * time.Second)); s != Closed {
		t.Fatalf("State = %v after the probe succeeded, want closed", s)
	}
}

func TestOnStateChange(t *testing.T) {
	var got []string
	var b *Breaker
	b = New(Settings{
		ConsecutiveFailures: 1, OpenFor: time.Second, HalfOpenProbes: 1,
		OnStateChange: func(from, to State) {
			// Calls back into the breaker: must not deadlock.
			got = append(got, from.String()+">"+to.String()+"@"+b.State(t0).String())
		},
	})
	trip(t, b, t0)                       // closed > open
	tk, _ := b.Allow(at(time.Second))    // open > half-open
	b.Done(at(time.Second), tk, false)   // half-open > open
	tk, _ = b.Allow(at(2 * time.Second)) // open > half-open
	b.Done(at(2*time.Second), tk, true)  // half-open > closed
	wantList := []string{
		"closed>open@open", "open>half-open@half-open", "half-open>open@open",
		"open>half-open@half-open", "half-open>closed@closed",
	}
	if strings.Join(got, " ") != strings.Join(wantList, " ") {
		t.Fatalf("changes:\n got %v\nwant %v", got, wantList)
	}
}

// TestParallel drives one breaker from many goroutines under the race
// detector and checks that the reported changes form a chain.
func TestParallel(t *testing.T) {
	var mu sync.Mutex
	var changes []change
	b := New(Settings{
		MinRequests: 10, OpenFor: 10 * time.Millisecond, HalfOpenProbes: 2, ConsecutiveFailures: 3,
		OnStateChange: func(from, to State) {
			mu.Lock()
			changes = append(changes, change{from, to})
			mu.Unlock()
		},
	})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5000 {
				now := at(time.Duration(i) * time.Millisecond)
				if tk, ok := b.Allow(now); ok {
					b.Done(now, tk, (i+w)%7 < 3) // mostly failing
				}
				b.State(now)
			}
		}()
	}
	wg.Wait()
	if len(changes) == 0 {
		t.Fatal("no state changes")
	}
	prev := Closed
	for i, c := range changes {
		if c.from != prev || c.from == c.to {
			t.Fatalf("change %d is %v>%v after %v", i, c.from, c.to, prev)
		}
		prev = c.to
	}
}

func TestStateString(t *testing.T) {
	for s, want := range map[State]string{Closed: "closed", Open: "open", HalfOpen: "half-open", 9: "State(9)"} {
		if s.String() != want {
			t.Errorf("%d.String() = %q, want %q", s, s.String(), want)
		}
	}
}

func TestRelease(t *testing.T) {
	b := New(Settings{ConsecutiveFailures: 1, OpenFor: time.Second, HalfOpenProbes: 2})
	closedTk, _ := b.Allow(t0)
	b.Release(closedTk) // nothing to free; nothing counted
	if c := b.Counts(t0); c.Requests != 0 {
		t.Fatalf("Release counted a result: %+v", c)
	}
	trip(t, b, t0)
	now := at(time.Second)
	p1, _ := b.Allow(now)
	p2, _ := b.Allow(now)
	if _, ok := b.Allow(now); ok {
		t.Fatal("a third probe was admitted")
	}
	b.Release(p1) // canceled by its caller
	b.Release(p1) // twice: no effect
	p3, ok := b.Allow(now)
	if !ok {
		t.Fatal("released probe place not reused")
	}
	if _, ok := b.Allow(now); ok {
		t.Fatal("a double Release freed two places")
	}
	b.Done(now, p1, false) // released: its result is ignored
	b.Done(now, p2, true)
	if s := b.State(now); s != HalfOpen {
		t.Fatalf("State = %v after 1 of 2 probes succeeded, want half-open", s)
	}
	b.Done(now, p3, true)
	if s := b.State(now); s != Closed {
		t.Fatalf("State = %v after 2 of 2 probes succeeded, want closed", s)
	}
}

// TestParallelCounts checks that successes counted without the lock from
// many goroutines are all there.
func TestParallelCounts(t *testing.T) {
	const workers, calls = 4, 1000
	b := New(Settings{})
	run(t, b, t0, "S") // starts the window at t0
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				now := at(time.Duration(i) * time.Millisecond) // all in the first bucket
				tk, ok := b.Allow(now)
				if !ok {
					t.Error("closed breaker refused a call")
					return
				}
				b.Done(now, tk, true)
			}
		}()
	}
	wg.Wait()
	if c := b.Counts(at(time.Second - 1)); c.Requests != workers*calls+1 || c.Failures != 0 {
		t.Fatalf("Counts = %+v, want %d requests", c, workers*calls+1)
	}
}

// Failures the instance answered count toward the error rate but end a run
// of consecutive failures instead of extending it; they fail a probe.
func TestDoneAnswered(t *testing.T) {
	answer := func(b *Breaker, now time.Time, n int) {
		t.Helper()
		for i := range n {
			tk, ok := b.Allow(now)
			if !ok {
				t.Fatalf("answered failure %d refused", i+1)
			}
			b.DoneAnswered(now, tk)
		}
	}
	// No trip by the run: 10 answered failures in a row, with the error
	// rate's minimum volume out of reach.
	b := New(Settings{ConsecutiveFailures: 3, MinRequests: 1000})
	answer(b, at(0), 10)
	if s := b.State(at(0)); s != Closed {
		t.Fatalf("10 answered failures in a row with ConsecutiveFailures 3: %v, want closed", s)
	}
	// They end a run: F F, answer, F F does not reach 3 in a row; one
	// more F does.
	run(t, b, at(0), "FF")
	answer(b, at(0), 1)
	run(t, b, at(0), "FF")
	if s := b.State(at(0)); s != Closed {
		t.Fatalf("runs of 2 split by an answered failure tripped a breaker of 3: %v", s)
	}
	run(t, b, at(0), "F")
	if s := b.State(at(0)); s != Open {
		t.Fatalf("3 failures in a row: %v, want open", s)
	}

	// They count toward the error rate.
	b = New(Settings{MinRequests: 4})
	run(t, b, at(0), "SS")
	answer(b, at(0), 1)
	if s := b.State(at(0)); s != Closed {
		t.Fatalf("1 of 3 failed: %v, want closed", s)
	}
	answer(b, at(0), 1)
	if s := b.State(at(0)); s != Open {
		t.Fatalf("2 of 4 failed (rate 0.5): %v, want open", s)
	}

	// They fail a probe.
	b = New(Settings{ConsecutiveFailures: 1, OpenFor: time.Second})
	run(t, b, at(0), "F")
	tk, ok := b.Allow(at(time.Second))
	if !ok || b.State(at(time.Second)) != HalfOpen {
		t.Fatal("no probe after OpenFor")
	}
	b.DoneAnswered(at(time.Second), tk)
	if s := b.State(at(time.Second)); s != Open {
		t.Fatalf("probe answered with a failure: %v, want open", s)
	}
}

// Reset closes the breaker from any state with a clean slate: what was
// counted before, and results of calls admitted before, no longer count.
func TestReset(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(b *Breaker) Ticket // brings b to its state; returns a ticket admitted before Reset
		now     time.Duration           // of Reset
		from    State
		changes string // reported by OnStateChange, Reset's included
	}{
		{"open", func(b *Breaker) Ticket {
			tk, _ := b.Allow(t0)
			run(t, b, t0, "FFF")
			return tk
		}, time.Second / 2, Open, "closed>open open>closed"},
		{"half-open", func(b *Breaker) Ticket {
			run(t, b, t0, "FFF")
			tk, _ := b.Allow(at(time.Second))
			return tk
		}, time.Second, HalfOpen, "closed>open open>half-open half-open>closed"},
		{"closed with a run of failures", func(b *Breaker) Ticket {
			tk, _ := b.Allow(t0)
			run(t, b, t0, "FF")
			return tk
		}, 0, Closed, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var changes []string
			b := New(Settings{ConsecutiveFailures: 3, MinRequests: 4, OpenFor: time.Second, HalfOpenProbes: 1,
				OnStateChange: func(from, to State) { changes = append(changes, from.String()+">"+to.String()) }})
			stale := tc.setup(b)
			now := at(tc.now)
			if s := b.State(now); s != tc.from {
				t.Fatalf("before Reset: %v, want %v", s, tc.from)
			}
			gen := b.Counts(now).Generation
			b.Reset()
			c := b.Counts(now)
			if c.State != Closed || c.Generation != gen+1 || c.Requests != 0 || c.ConsecutiveFailures != 0 || c.Probes != 0 {
				t.Fatalf("after Reset: %+v, want closed, generation %d, nothing counted", c, gen+1)
			}
			if got := strings.Join(changes, " "); got != tc.changes {
				t.Fatalf("changes %q, want %q", got, tc.changes)
			}
			b.Done(now, stale, false) // admitted before Reset: ignored
			run(t, b, now, "FF")      // a fresh run of 2 of the 3 that trip
			if s := b.State(now); s != Closed {
				t.Fatalf("tripped by 2 fresh failures: %v; stale results were counted", s)
			}
			run(t, b, now, "F")
			if s := b.State(now); s != Open {
				t.Fatalf("3 fresh failures in a row: %v, want open", s)
			}
		})
	}
}

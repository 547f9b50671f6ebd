package suite

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yrpc/yrpc/internal/zktest"
	"github.com/yrpc/yrpc/rt/fault"
)

var soakFor = flag.Duration("soak", 0, "run TestSoak for this long (at least 2m is meaningful); also $YRPC_SUITE_SOAK")

// soakDuration returns how long TestSoak runs, or 0 to skip it.
func soakDuration(t *testing.T) time.Duration {
	if *soakFor > 0 {
		return *soakFor
	}
	if s := os.Getenv("YRPC_SUITE_SOAK"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("YRPC_SUITE_SOAK=%q: %v", s, err)
		}
		return d
	}
	return 0
}

// soakPhases are the fault rules the consumer sends as call metadata, one
// phase at a time: (fraction of calls, rule). A metadata rule goes with
// every attempt of its call, so an aborted call fails on every provider
// (it counts as injected). Drops are not sent this way: a call that drops
// every connection it is retried on takes down the calls in flight on all
// providers (see TestSoak's doc); providers drop connections on their own
// instead (soakDrops).
var soakPhases = []struct {
	name string
	frac float64
	rule string
}{
	{"none", 0, ""},
	{"delay", 0.05, "delay=20ms"},
	{"abort", 0.02, "abort=Unavailable:soak"},
}

// soakDrops are p1's own faults, on for 10s and off for 10s: one attempt
// in 500 has its connection dropped. Only p1 drops: with every provider
// dropping, every breaker opens (TestDropsOnEveryProvider).
const soakDrops = "Get:0.002:drop|Put:0.002:drop"

func soakProvider(name, addr string) provOpts {
	o := provOpts{addr: addr, faultMD: true}
	if name == "p1" {
		o.faults, o.cycle = soakDrops, "10s"
	}
	return o
}

// sample is one reading of the consumer's goroutines and live heap.
type sample struct {
	at         time.Duration
	goroutines int
	heap       uint64 // HeapAlloc after runtime.GC
}

func takeSample(start time.Time) sample {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return sample{at: time.Since(start), goroutines: runtime.NumGoroutine(), heap: ms.HeapAlloc}
}

// TestSoak runs steady load with periodic faults (delays and aborts as
// per-call fault metadata, in phases of 10s; connection drops by one
// provider's Injector, 10s on, 10s off) and a provider restart every 30s
// (graceful and SIGKILL in turn), sampling the consumer's goroutines and
// live heap every 5s. Off by default: -soak=2m or YRPC_SUITE_SOAK=2m.
//
// Why drops are not metadata rules: with 0.05% of the calls carrying
// "drop" (about 10/s), each such call was retried on all three providers
// and dropped each one's connection with every call in flight on it; all
// three breakers opened ("3 of 3 with open breakers") and about two thirds
// of the Gets in the drop phases failed fast. That is a query of death
// spread by retries, worth knowing, but not what a soak is for.
//
// Thresholds: after the load stops, goroutines return to the baseline
// taken before it plus 10 (the load's own are gone; connections to the same
// three addresses remain); the mean live heap of the last third of the
// samples is at most 1.3x that of the first third plus 1 MiB (a leak of
// per-call state at ~10k calls/s would exceed it within a minute).
func TestSoak(t *testing.T) {
	dur := soakDuration(t)
	if dur == 0 {
		t.Skip("soak is off: go test ./rt/fault/suite -run Soak -soak=2m (or YRPC_SUITE_SOAK=2m)")
	}
	c := newCluster(t, zktest.Addr(t))
	ps := make([]*proc, 3)
	for i := range ps {
		name := fmt.Sprintf("p%d", i+1)
		ps[i] = c.start(name, soakProvider(name, ""))
	}
	k := c.newConsumer("")
	k.waitProviders(t, 20*time.Second, ps...)

	start := time.Now()
	base := takeSample(start)
	var phase atomic.Int32
	l := startLoad(k, loadOpts{ctx: func(rnd *rand.Rand, ctx context.Context) (context.Context, bool) {
		// A metadata rule goes with every attempt of its call, so an abort
		// or a drop fails the call on any provider: those calls count as
		// injected. The other calls on a dropped connection must succeed.
		p := soakPhases[phase.Load()]
		if p.frac > 0 && rnd.Float64() < p.frac {
			return fault.Metadata(ctx, p.rule), p.name == "abort"
		}
		return ctx, false
	}})

	var samples []sample
	restarts, kills := 0, 0
	tick := time.NewTicker(5 * time.Second) // the soak's pace: a fixed-length load phase
	defer tick.Stop()
	for n := 1; time.Since(start) < dur; n++ {
		<-tick.C
		at := n * 5
		if at%10 == 0 {
			phase.Store(int32((at / 10) % len(soakPhases)))
		}
		if at%30 == 0 {
			i := (at / 30) % len(ps)
			old := ps[i]
			if (at/30)%2 == 1 {
				if err := old.term(10 * time.Second); err != nil {
					t.Errorf("graceful restart of %s: %v", old.name, err)
				}
				restarts++
			} else {
				old.kill()
				kills++
			}
			ps[i] = c.start(old.name, soakProvider(old.name, old.addr))
		}
		s := takeSample(start)
		samples = append(samples, s)
		t.Logf("soak %5.0fs phase=%-5s calls=%d get_fail=%d injected=%d goroutines=%d heap=%.1fMiB last_err=%q",
			s.at.Seconds(), soakPhases[phase.Load()].name, l.calls(), l.getFail.Load(), l.injected.Load(), s.goroutines, float64(s.heap)/(1<<20), l.err())
	}
	l.stop()
	dups := c.checkPuts(l)
	l.check(t, false)

	settle, ok := waitFor(10*time.Second, func() bool { return runtime.NumGoroutine() <= base.goroutines+10 })
	end := takeSample(start)
	if !ok {
		t.Errorf("goroutines: %d after the load stopped, baseline %d (+10 allowed)", end.goroutines, base.goroutines)
	}
	third := len(samples) / 3
	if third == 0 {
		t.Fatalf("only %d samples: run the soak for at least 30s", len(samples))
	}
	mean := func(ss []sample) float64 {
		var sum float64
		for _, s := range ss {
			sum += float64(s.heap)
		}
		return sum / float64(len(ss))
	}
	first, last := mean(samples[:third]), mean(samples[len(samples)-third:])
	if last > 1.3*first+(1<<20) {
		t.Errorf("live heap grew: mean %.1f MiB in the first third, %.1f MiB in the last", first/(1<<20), last/(1<<20))
	}
	figures(t, "soak", l, dups, "duration="+ms(dur), fmt.Sprintf("restarts=%d kills=%d", restarts, kills),
		fmt.Sprintf("goroutines_base=%d goroutines_end=%d settle=%s", base.goroutines, end.goroutines, ms(settle)),
		fmt.Sprintf("heap_first_third=%.1fMiB heap_last_third=%.1fMiB", first/(1<<20), last/(1<<20)),
		fmt.Sprintf("injected_failures=%d failed_attempts=%d", l.injected.Load(), k.obs.failed.Load()))
}

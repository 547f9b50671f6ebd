package harness

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Client makes calls for the harness. Call may be called concurrently for
// distinct workers w in [0, c), where c is the concurrency the client was
// dialed for; calls of one worker are sequential. Call returns an error when
// the call fails or the reply does not check.
type Client interface {
	Call(ctx context.Context, w int) error
	Close() error
}

// Driver is implemented by clients that run a phase themselves instead of
// being called once per request. Drive makes n requests with at most c in
// flight, stores request i's latency in lat[i] (len(lat) == n) and returns
// the number of failed requests and the first failure.
type Driver interface {
	Drive(ctx context.Context, c int, lat []time.Duration) (errs int, first error)
}

// Phase is the outcome of one run of n calls.
type Phase struct {
	Elapsed time.Duration
	// Lat holds every call's latency, sorted ascending.
	Lat []time.Duration
	// Errors counts failed calls; FirstErr is the first of them.
	Errors   int
	FirstErr error
	// Mallocs and TotalAlloc are this process's runtime.MemStats deltas
	// over the phase.
	Mallocs    uint64
	TotalAlloc uint64
	// Starts holds, for RunTimeline, when each call started (Unix
	// nanoseconds), in the order the calls were made, unsorted: call i
	// started at Starts[i] and took Took[i]. Nil for Run, and for a Driver.
	Starts []int64
	Took   []time.Duration
}

// Run makes n calls with c workers (Drive for a Driver) and measures them.
// The latency slice is allocated before the allocation counters are read,
// so the deltas cover only the calls and the workers.
func Run(ctx context.Context, cl Client, c, n int) Phase {
	return run(ctx, cl, c, n, false)
}

// RunTimeline is Run that also keeps when each call started and what it
// took, in call order (Phase.Starts and Phase.Took), for telling apart
// when the slow calls happened. It holds 16 more bytes per call for the
// phase, allocated before it.
func RunTimeline(ctx context.Context, cl Client, c, n int) Phase {
	return run(ctx, cl, c, n, true)
}

func run(ctx context.Context, cl Client, c, n int, timeline bool) Phase {
	if c < 1 {
		c = 1
	}
	lat := make([]time.Duration, n)
	var starts []int64
	if _, drives := cl.(Driver); timeline && !drives {
		starts = make([]int64, n)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	var errs int
	var first error
	if d, ok := cl.(Driver); ok {
		errs, first = d.Drive(ctx, c, lat)
	} else {
		errs, first = spread(ctx, cl, c, lat, starts)
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&m1)
	ph := Phase{
		Elapsed:    elapsed,
		Errors:     errs,
		FirstErr:   first,
		Mallocs:    m1.Mallocs - m0.Mallocs,
		TotalAlloc: m1.TotalAlloc - m0.TotalAlloc,
	}
	if starts != nil {
		ph.Starts, ph.Took = starts, slices.Clone(lat)
	}
	sortDurations(lat)
	ph.Lat = lat
	return ph
}

// spread has c workers take call indexes from a shared counter until
// len(lat) calls are made; with starts, each call's start goes into it
// as lat does its latency.
func spread(ctx context.Context, cl Client, c int, lat []time.Duration, starts []int64) (int, error) {
	n := int64(len(lat))
	var (
		next  atomic.Int64
		errs  atomic.Int64
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	wg.Add(c)
	for w := range c {
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= n {
					return
				}
				t0 := time.Now()
				if starts != nil {
					starts[i] = t0.UnixNano()
				}
				err := cl.Call(ctx, w)
				lat[i] = time.Since(t0)
				if err != nil {
					errs.Add(1)
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					if ctx.Err() != nil {
						errs.Add(n - min(next.Swap(n), n))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	return int(errs.Load()), first
}

// FanIn is one Client made of several, each dialed for its share of the
// workers (at least ceil(c/len(f)) each): worker w calls client w%len(f)
// as that client's worker w/len(f). So c workers spread evenly over
// len(f) clients, and through them over as many connections.
type FanIn []Client

// Call makes worker w's call through its client.
func (f FanIn) Call(ctx context.Context, w int) error {
	return f[w%len(f)].Call(ctx, w/len(f))
}

// Close closes every client and returns the first error.
func (f FanIn) Close() error {
	var first error
	for _, c := range f {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

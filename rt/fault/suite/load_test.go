package suite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yrpc/yrpc/examples/tour/tourrpc"
	"github.com/yrpc/yrpc/internal/freeze"
	"github.com/yrpc/yrpc/rt"
)

// loadOpts shape a load.
type loadOpts struct {
	workers  int // default 16
	putEvery int // one call in putEvery is a Put; default 8, <0 none
	// ctx, when set, may give a call a context with a fault rule; inject
	// says the rule fails every attempt of the call (abort, drop), which
	// then counts as injected, not as a caller failure.
	ctx    func(rnd *rand.Rand, ctx context.Context) (_ context.Context, inject bool)
	idBase int64 // Put ids are idBase+1, idBase+2, ...
	// timeout, when set, replaces the schema's call timeout (1s for Get and
	// Put) with rt.WithCallTimeout.
	timeout time.Duration
}

// load calls Get (and Put with unique ids) from many goroutines until
// stopped, counting what the callers see.
type load struct {
	start                   time.Time
	gets, puts              atomic.Int64 // calls made
	getFail                 atomic.Int64
	injected                atomic.Int64 // calls failed by their own fault rule
	mu                      sync.Mutex
	putFail                 map[rt.Code]int
	idBase                  int64
	putOK                   []uint64 // bit id-idBase-1: acknowledged (a bitset keeps the soak's heap flat)
	lastErr                 string
	freezes                 *freeze.Watcher // the longest freeze of this process (see package freeze)
	served                  sync.Map        // provider name -> *atomic.Int64
	mark, firstOK, lastFail atomic.Int64    // unix nanos
	nextID                  atomic.Int64
	cancel                  context.CancelFunc
	wg                      sync.WaitGroup
}

func startLoad(k *consumer, o loadOpts) *load {
	if o.workers == 0 {
		o.workers = 16
	}
	if o.putEvery == 0 {
		o.putEvery = 8
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{start: time.Now(), putFail: map[rt.Code]int{}, cancel: cancel, freezes: freeze.New(0, 0)}
	l.idBase = o.idBase
	l.nextID.Store(o.idBase)
	var opts []rt.CallOption
	if o.timeout > 0 {
		opts = append(opts, rt.WithCallTimeout(o.timeout))
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		l.freezes.Run(ctx)
	}()
	for w := range o.workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for ctx.Err() == nil {
				cctx, inject := ctx, false
				if o.ctx != nil {
					cctx, inject = o.ctx(rnd, ctx)
				}
				if o.putEvery > 0 && rnd.IntN(o.putEvery) == 0 {
					id := l.nextID.Add(1)
					e, err := k.store.Put(cctx, &tourrpc.Entry{ID: id, Value: "x"}, opts...)
					l.done(ctx, true, inject, id, e, err)
				} else {
					e, err := k.store.Get(cctx, &tourrpc.Key{ID: rnd.Int64N(10_000)}, opts...)
					l.done(ctx, false, inject, 0, e, err)
				}
			}
		}()
	}
	return l
}

func (l *load) done(ctx context.Context, put, inject bool, id int64, e *tourrpc.Entry, err error) {
	if err != nil && ctx.Err() != nil {
		return // stopped mid-call
	}
	if inject && err != nil {
		l.injected.Add(1)
		return
	}
	if put {
		l.puts.Add(1)
	} else {
		l.gets.Add(1)
	}
	now := time.Now().UnixNano()
	if err == nil {
		if m := l.mark.Load(); m != 0 && l.firstOK.Load() == 0 && now > m {
			l.firstOK.CompareAndSwap(0, now)
		}
		v, ok := l.served.Load(e.ServedBy)
		if !ok {
			v, _ = l.served.LoadOrStore(e.ServedBy, new(atomic.Int64))
		}
		v.(*atomic.Int64).Add(1)
		if put {
			l.mu.Lock()
			i := id - l.idBase - 1
			for int(i/64) >= len(l.putOK) {
				l.putOK = append(l.putOK, 0)
			}
			l.putOK[i/64] |= 1 << (i % 64)
			l.mu.Unlock()
		}
		return
	}
	l.lastFail.Store(now)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lastErr = err.Error()
	if put {
		l.putFail[rt.CodeOf(err)]++
	} else {
		l.getFail.Add(1)
	}
}

// markNow starts timing a recovery: firstOK becomes the first success
// after now.
func (l *load) markNow() time.Time {
	now := time.Now()
	l.firstOK.Store(0)
	l.mark.Store(now.UnixNano())
	return now
}

// recovered waits (bounded) for the first success after the mark and
// returns its delay from the mark.
func (l *load) recovered(t *testing.T) time.Duration {
	t.Helper()
	if _, ok := waitFor(10*time.Second, func() bool { return l.firstOK.Load() != 0 }); !ok {
		t.Fatalf("no successful call within 10s of the fault (last error: %s)", l.err())
	}
	return time.Duration(l.firstOK.Load() - l.mark.Load())
}

// run lets the load run for d: a load phase of fixed length.
func (l *load) run(d time.Duration) { time.Sleep(d) }

func (l *load) stop() {
	l.cancel()
	l.wg.Wait()
}

func (l *load) calls() int64 { return l.gets.Load() + l.puts.Load() }

func (l *load) servedBy(name string) int64 {
	if v, ok := l.served.Load(name); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

func (l *load) putsOK() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []int64
	for w, bits := range l.putOK {
		for b := range 64 {
			if bits&(1<<b) != 0 {
				ids = append(ids, l.idBase+1+int64(w*64+b))
			}
		}
	}
	return ids
}

func (l *load) err() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastErr
}

// putFailures returns the count of failed Puts and their codes, e.g.
// "3(Unavailable:2,DeadlineExceeded:1)".
func (l *load) putFailures() (int, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	var parts []string
	for code, k := range l.putFail {
		n += k
		parts = append(parts, fmt.Sprintf("%s:%d", code, k))
	}
	sort.Strings(parts)
	if n == 0 {
		return 0, "0"
	}
	return n, fmt.Sprintf("%d(%s)", n, strings.Join(parts, ","))
}

// check fails the test on any Get failure, on Put failures other than
// Unavailable and DeadlineExceeded, or on any Put failure at all when
// strict.
func (l *load) check(t *testing.T, strictPuts bool) {
	t.Helper()
	if n := l.getFail.Load(); n > 0 {
		t.Errorf("%d Get calls failed (last error: %s)", n, l.err())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for code, n := range l.putFail {
		if strictPuts || (code != rt.Unavailable && code != rt.DeadlineExceeded) {
			t.Errorf("%d Put calls failed with %s (last error: %s)", n, code, l.lastErr)
		}
	}
}

// figures logs the scenario's one-line summary, in the format the doc
// shows, with extra "name=value" fields.
func figures(t *testing.T, scenario string, l *load, dups int, extra ...string) {
	_, pf := l.putFailures()
	t.Logf("FIGURES scenario=%s calls=%d gets=%d puts=%d get_fail=%d put_fail=%s dup_puts=%d stall_max=%s %s",
		scenario, l.calls(), l.gets.Load(), l.puts.Load(), l.getFail.Load(), pf, dups,
		ms(l.freezes.Longest()), strings.Join(extra, " "))
}

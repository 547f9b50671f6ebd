package soak

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/examples/tour/tourrpc"
	"github.com/yrpc/yrpc/internal/freeze"
	"github.com/yrpc/yrpc/rt"
)

// maxFailures is how many failed calls the report lists one by one.
const maxFailures = 200

// Failure is one failed call, as the report lists it.
type Failure struct {
	At     float64 `json:"at_s"` // seconds since the load started
	Method string  `json:"method"`
	Code   string  `json:"code"`
	Error  string  `json:"error"`
	// FreezeMS is the longest freeze of the consumer process during the
	// call's timeout before At (0: none over minFreeze): a call cannot
	// outlast a freeze of its whole timeout, whatever yrpc does.
	FreezeMS float64 `json:"freeze_ms,omitempty"`
}

// Freeze is a time the consumer process went unscheduled for at least
// minFreeze: it ended At seconds after the load started and lasted MS.
type Freeze struct {
	At float64 `json:"at_s"`
	MS float64 `json:"ms"`
}

// minFreeze is the shortest freeze the report lists; maxFreezes bounds the
// list.
const (
	minFreeze  = 200 * time.Millisecond
	maxFreezes = 1000
)

// load makes Gets and Puts from several workers at a paced rate until
// stopped, counting what the callers see.
type load struct {
	start      time.Time
	gets, puts atomic.Int64
	behind     atomic.Int64    // calls the pacer could not hand out: the workers were all busy
	frz        *freeze.Watcher // this process's freezes; nil in tests
	freezes    []Freeze        // tests' freezes, when frz is nil

	mu       sync.Mutex
	getFail  map[string]int // by code
	putFail  map[string]int
	failures []Failure
	putOK    []uint64 // bit id-1: acknowledged Put ids (a bitset keeps the heap flat)

	nextID atomic.Int64
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// loadOptions shape a load.
type loadOptions struct {
	workers  int
	rate     int           // calls per second, all workers together
	putEvery int           // one call in putEvery is a Put
	timeout  time.Duration // call timeout; 0: the schema's
}

// startLoad starts the workers, the pacer and the stall watcher.
func startLoad(store *tourrpc.StoreClient, o loadOptions) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{start: time.Now(), getFail: map[string]int{}, putFail: map[string]int{}, cancel: cancel,
		frz: freeze.New(minFreeze, maxFreezes)}
	var opts []rt.CallOption
	if o.timeout > 0 {
		opts = append(opts, rt.WithCallTimeout(o.timeout))
	}
	tokens := make(chan struct{}, o.workers)
	l.wg.Add(2 + o.workers)
	go l.pace(ctx, tokens, o.rate)
	go func() {
		defer l.wg.Done()
		l.frz.Run(ctx)
	}()
	for w := range o.workers {
		go func() {
			defer l.wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for {
				select {
				case <-ctx.Done():
					return
				case <-tokens:
				}
				if rnd.IntN(o.putEvery) == 0 {
					id := l.nextID.Add(1)
					_, err := store.Put(ctx, &tourrpc.Entry{ID: id, Value: "x"}, opts...)
					l.done(ctx, "Put", id, err)
				} else {
					_, err := store.Get(ctx, &tourrpc.Key{ID: rnd.Int64N(10_000)}, opts...)
					l.done(ctx, "Get", 0, err)
				}
			}
		}()
	}
	return l
}

// paceTick is the pacer's period: it hands out the calls due since its
// last tick, rate/100 at a time when it keeps pace.
const paceTick = 10 * time.Millisecond

// pace hands out rate calls per second to the workers, by the time that
// passed (a ticker drops ticks when the process falls behind); a call that
// finds every worker busy is counted as behind and dropped.
func (l *load) pace(ctx context.Context, tokens chan<- struct{}, rate int) {
	defer l.wg.Done()
	tick := time.NewTicker(paceTick)
	defer tick.Stop()
	last := time.Now()
	var owed float64
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			owed += float64(rate) * now.Sub(last).Seconds()
			last = now
		}
		for ; owed >= 1; owed-- {
			select {
			case tokens <- struct{}{}:
			default:
				l.behind.Add(1)
			}
		}
	}
}

// done counts one call.
func (l *load) done(ctx context.Context, method string, id int64, err error) {
	if err != nil && ctx.Err() != nil {
		return // stopped mid-call
	}
	if method == "Put" {
		l.puts.Add(1)
	} else {
		l.gets.Add(1)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		if method == "Put" {
			i := id - 1
			for int(i/64) >= len(l.putOK) {
				l.putOK = append(l.putOK, 0)
			}
			l.putOK[i/64] |= 1 << (i % 64)
		}
		return
	}
	code := rt.CodeOf(err).String()
	if method == "Put" {
		l.putFail[code]++
	} else {
		l.getFail[code]++
	}
	if len(l.failures) < maxFailures {
		l.failures = append(l.failures, Failure{At: time.Since(l.start).Seconds(), Method: method, Code: code, Error: err.Error()})
	}
}

// stop stops the load and waits for its calls to end.
func (l *load) stop() {
	l.cancel()
	l.wg.Wait()
}

// acked returns the acknowledged Put ids, ascending.
func (l *load) acked() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []int64
	for w, bits := range l.putOK {
		for b := range 64 {
			if bits&(1<<b) != 0 {
				ids = append(ids, int64(w*64+b)+1)
			}
		}
	}
	return ids
}

// counts returns copies of the failure counts, the listed failures and
// the freezes.
func (l *load) counts() (getFail, putFail map[string]int, failures []Failure, freezes []Freeze) {
	freezes = slices.Clone(l.freezes)
	if l.frz != nil {
		freezes = nil
		for _, f := range l.frz.Freezes() {
			freezes = append(freezes, Freeze{At: f.At.Seconds(), MS: float64(f.Len) / 1e6})
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.getFail), maps.Clone(l.putFail), slices.Clone(l.failures), freezes
}

// longestFreeze returns the longest of freezes that overlaps the window
// seconds before at, in ms; 0 when none does.
func longestFreeze(freezes []Freeze, at, window float64) float64 {
	longest := 0.0
	for _, f := range freezes {
		if f.At >= at-window && f.At-f.MS/1e3 <= at {
			longest = max(longest, f.MS)
		}
	}
	return longest
}

// total returns the sum of a failure count map.
func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

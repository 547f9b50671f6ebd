package balance

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"
)

// rng is a lock-free random source: SplitMix64 (Steele, Lea and Flood,
// "Fast splittable pseudorandom number generators", 2014) over an atomic
// counter, so concurrent Picks each get a distinct number without a lock.
// A user Source replaces it.
type rng struct {
	src   rand.Source
	state atomic.Uint64
}

func (r *rng) init(o *Options) {
	r.src = o.Source
	seed := o.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	r.state.Store(seed)
}

func (r *rng) uint64() uint64 {
	if r.src != nil {
		return r.src.Uint64()
	}
	z := r.state.Add(0x9E3779B97F4A7C15)
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// intn returns a number in [0, n) for n > 0, by Lemire's multiply-shift
// (the bias, n/2^64, is negligible here).
func (r *rng) intn(n int64) int64 {
	hi, _ := bits.Mul64(r.uint64(), uint64(n))
	return int64(hi)
}

// warmWeight returns node's weight at now: its configured weight, reduced
// linearly during warm-up as Dubbo does, and the time its warm-up ends
// (zero when it is not warming up).
func warmWeight(n *Node, now time.Time, warmUp time.Duration) (w int64, end time.Time) {
	w = min(int64(n.Weight), MaxWeight) // sums of many cannot overflow
	if w <= 0 {
		w = DefaultWeight
	}
	if warmUp <= 0 || n.StartTime.IsZero() {
		return w, time.Time{}
	}
	uptime := now.Sub(n.StartTime)
	if uptime >= warmUp {
		return w, time.Time{}
	}
	// A start time in the future (clock skew) counts as just started.
	ww := int64(float64(w) * float64(max(uptime, 0)) / float64(warmUp))
	return min(max(ww, 1), w), n.StartTime.Add(warmUp)
}

// table holds the effective weights of a node list, fixed at Build.
type table struct {
	w       []int64 // effective weight of each node, >= 1
	cum     []int64 // cum[i] = w[0] + ... + w[i]
	total   int64
	uniform bool      // all weights equal: pick by index
	expires time.Time // when the warm-up weights are next due; zero: never
}

func newTable(nodes []Node, now time.Time, o *Options) table {
	warmUp := o.warmUp()
	t := table{w: make([]int64, len(nodes)), cum: make([]int64, len(nodes)), uniform: true}
	var last time.Time
	for i := range nodes {
		w, end := warmWeight(&nodes[i], now, warmUp)
		t.w[i] = w
		t.total += w
		t.cum[i] = t.total
		t.uniform = t.uniform && w == t.w[0]
		if end.After(last) {
			last = end
		}
	}
	if !last.IsZero() {
		t.expires = now.Add(max(warmUp/10, time.Second))
		if last.Before(t.expires) {
			t.expires = last
		}
	}
	return t
}

// Expires implements Expirer for the pickers that embed a table.
func (t *table) Expires() time.Time { return t.expires }

// pick returns a node drawn by weight; there must be at least one node.
func (t *table) pick(r *rng) int {
	if t.uniform {
		return int(r.intn(int64(len(t.w))))
	}
	return t.search(r.intn(t.total))
}

// search returns the node whose weight interval [cum[i]-w[i], cum[i])
// holds x, for 0 <= x < total: the first i with cum[i] > x.
func (t *table) search(x int64) int {
	lo, hi := 0, len(t.cum)-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.cum[m] <= x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// pickOther returns a node drawn by weight among all but a, in O(log n):
// the draw skips a's interval. There must be at least two nodes.
func (t *table) pickOther(r *rng, a int) int {
	if t.uniform {
		b := int(r.intn(int64(len(t.w) - 1)))
		if b >= a {
			b++
		}
		return b
	}
	x := r.intn(t.total - t.w[a])
	if x >= t.cum[a]-t.w[a] {
		x += t.w[a]
	}
	return t.search(x)
}

// pickExcluding returns a node drawn by weight among those neither in
// tried nor equal to extra (pass -1 for none), or -1 when none is left.
// It is linear in the number of nodes times len(tried), which is small.
func (t *table) pickExcluding(r *rng, tried []int, extra int) int {
	rem := t.total
	for j, i := range tried {
		if i >= 0 && i < len(t.w) && i != extra && !slices.Contains(tried[:j], i) {
			rem -= t.w[i]
		}
	}
	if extra >= 0 {
		rem -= t.w[extra]
	}
	if rem <= 0 { // weights are >= 1, so every node is excluded
		return -1
	}
	x := r.intn(rem)
	for i, w := range t.w {
		if i == extra || slices.Contains(tried, i) {
			continue
		}
		if x < w {
			return i
		}
		x -= w
	}
	return -1 // unreachable: x < rem
}

// actives copies the nodes' in-flight counters; nil ones read as 0.
func actives(nodes []Node) []*atomic.Int64 {
	a := make([]*atomic.Int64, len(nodes))
	for i := range nodes {
		a[i] = nodes[i].Active
	}
	return a
}

func load(a *atomic.Int64) int64 {
	if a == nil {
		return 0
	}
	return a.Load()
}

// none is the Picker of an empty node list.
type none struct{}

func (none) Pick(*Info) int { return -1 }

// tried returns info's Tried list, nil for a nil info.
func tried(info *Info) []int {
	if info == nil {
		return nil
	}
	return info.Tried
}

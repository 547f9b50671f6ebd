package balance

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// rrPicker is the "round_robin" balancer: an atomic counter over the nodes,
// starting at a random node so that many clients do not all begin with the
// same one.
type rrPicker struct {
	n    uint64
	next atomic.Uint64
}

func buildRoundRobin(nodes []Node, _ time.Time, o *Options) Picker {
	if len(nodes) == 0 {
		return none{}
	}
	p := &rrPicker{n: uint64(len(nodes))}
	var r rng
	r.init(o)
	p.next.Store(uint64(r.intn(int64(len(nodes)))))
	return p
}

func (p *rrPicker) Pick(info *Info) int {
	i := (p.next.Add(1) - 1) % p.n
	t := tried(info)
	for range p.n {
		if !slices.Contains(t, int(i)) {
			return int(i)
		}
		if i++; i == p.n {
			i = 0
		}
	}
	return -1
}

// wrrPicker is the "weighted_round_robin" balancer: nginx's smooth
// weighted round robin (ngx_http_upstream_get_peer). Each pick adds every
// candidate's weight to its current weight, takes the candidate with the
// largest current weight (the first on ties) and subtracts the candidates'
// total from it. Weights 5, 1, 1 give a a b a c a a.
//
// Starting from zero current weights the sequence repeats every W picks,
// W the sum of the weights divided by their greatest common divisor, so
// when W is small the picker computes one period at Build and a Pick is an
// atomic counter and an index, with no lock. Larger W, and picks with
// nodes tried (which are not candidates, as in nginx), run the algorithm
// under a mutex.
type wrrPicker struct {
	table
	sched []int32 // one period of picks; nil when W is too large
	next  atomic.Uint64

	mu  sync.Mutex
	cur []int64 // current weights, guarded by mu
}

// Limits of the precomputed period: its length, and the work to build it
// (length times nodes).
const (
	maxSchedule     = 4096
	maxScheduleWork = 1 << 18
)

func buildWRR(nodes []Node, now time.Time, o *Options) Picker {
	return newWRR(nodes, now, o, maxSchedule)
}

func newWRR(nodes []Node, now time.Time, o *Options, maxSched int64) Picker {
	if len(nodes) == 0 {
		return none{}
	}
	p := &wrrPicker{table: newTable(nodes, now, o), cur: make([]int64, len(nodes))}
	g := int64(0)
	for _, w := range p.w {
		g = gcd(g, w)
	}
	if period := p.total / g; period <= maxSched && period*int64(len(nodes)) <= maxScheduleWork {
		p.sched = make([]int32, period)
		for k := range p.sched {
			p.sched[k] = int32(p.smooth(nil))
		}
		// The current weights are back to zero after one period (and the
		// picks with nodes tried start from zero too).
	}
	return p
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func (p *wrrPicker) Pick(info *Info) int {
	t := tried(info)
	if p.sched != nil && len(t) == 0 {
		return int(p.sched[(p.next.Add(1)-1)%uint64(len(p.sched))])
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.smooth(t)
}

// smooth runs one step of nginx's algorithm over the nodes not in tried
// and returns the pick, or -1 when all are tried. The caller holds mu, or
// owns p during Build.
func (p *wrrPicker) smooth(tried []int) int {
	best, total := -1, int64(0)
	for i, w := range p.w {
		if len(tried) > 0 && slices.Contains(tried, i) {
			continue
		}
		p.cur[i] += w
		total += w
		if best < 0 || p.cur[i] > p.cur[best] {
			best = i
		}
	}
	if best >= 0 {
		p.cur[best] -= total
	}
	return best
}

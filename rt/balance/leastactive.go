package balance

import (
	"math"
	"slices"
	"sync/atomic"
	"time"
)

// laPicker is the "least_active" balancer, as Dubbo's
// LeastActiveLoadBalance: the candidates with the fewest calls in flight,
// then a weighted random choice among them (uniform when their weights are
// equal).
type laPicker struct {
	table
	active []*atomic.Int64
	r      rng
}

func buildLeastActive(nodes []Node, now time.Time, o *Options) Picker {
	if len(nodes) == 0 {
		return none{}
	}
	p := &laPicker{table: newTable(nodes, now, o), active: actives(nodes)}
	p.r.init(o)
	return p
}

func (p *laPicker) Pick(info *Info) int {
	t := tried(info)
	// First pass: the least active count, how many nodes have it and
	// their total weight. Nothing is stored, so Pick does not allocate.
	least, first, count, sumW, sameW := int64(math.MaxInt64), -1, 0, int64(0), true
	for i, a := range p.active {
		if len(t) > 0 && slices.Contains(t, i) {
			continue
		}
		switch n := load(a); {
		case n < least:
			least, first, count, sumW, sameW = n, i, 1, p.w[i], true
		case n == least:
			count++
			sumW += p.w[i]
			sameW = sameW && p.w[i] == p.w[first]
		}
	}
	if count <= 1 {
		return first // -1 when every node was tried
	}
	// Second pass: the x-th unit of weight (or the x-th node) among the
	// least active. The counts may have moved since the first pass; if the
	// draw then falls past the end, the first least active node is as good.
	var x int64
	if sameW {
		x = p.r.intn(int64(count))
	} else {
		x = p.r.intn(sumW)
	}
	for i, a := range p.active[first:] {
		i += first
		if load(a) != least || len(t) > 0 && slices.Contains(t, i) {
			continue
		}
		w := p.w[i]
		if sameW {
			w = 1
		}
		if x < w {
			return i
		}
		x -= w
	}
	return first
}

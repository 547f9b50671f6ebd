package balance

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/yrpc/yrpc/hashring"
)

// chPicker is the "consistent_hash" balancer.
type chPicker struct {
	ring   *hashring.Ring
	rand   table           // configured weights, no warm-up: for calls without a key
	active []*atomic.Int64 // nil unless Options.BoundedLoad
	r      rng
}

func buildConsistentHash(nodes []Node, now time.Time, o *Options) Picker {
	if len(nodes) == 0 {
		return none{}
	}
	ro := o.Ring
	if ro.WeightUnit == 0 {
		ro.WeightUnit = DefaultWeight
	}
	members := make([]hashring.Node, len(nodes))
	for i, n := range nodes {
		w := min(n.Weight, MaxWeight)
		if w <= 0 {
			w = DefaultWeight
		}
		members[i] = hashring.Node{Key: n.Addr, Weight: w}
	}
	noWarmUp := *o
	noWarmUp.WarmUp = -1
	p := &chPicker{ring: hashring.New(members, ro), rand: newTable(nodes, now, &noWarmUp)}
	if o.BoundedLoad {
		p.active = actives(nodes)
	}
	p.r.init(o)
	return p
}

func (p *chPicker) Pick(info *Info) int {
	if info == nil || info.Key == nil {
		if t := tried(info); len(t) > 0 {
			return p.rand.pickExcluding(&p.r, t, -1)
		}
		return p.rand.pick(&p.r)
	}
	t := info.Tried
	if p.active != nil {
		var total int64
		for _, a := range p.active {
			total += load(a)
		}
		i := p.ring.Next(info.Key, func(i int) bool {
			return load(p.active[i]) < p.ring.Capacity(i, total) && !slices.Contains(t, i)
		})
		if i >= 0 {
			return i
		}
		// Only tried nodes have room: ignore the loads.
	}
	if len(t) == 0 {
		return p.ring.Get(info.Key)
	}
	return p.ring.Next(info.Key, func(i int) bool { return !slices.Contains(t, i) })
}

package balance

import (
	"sync/atomic"
	"time"
)

// p2cPicker is the "p2c" balancer: the power of two choices (Mitzenmacher,
// "The Power of Two Choices in Randomized Load Balancing", 2001) weighted:
// two distinct candidates are drawn by weight and the one with the lower
// (active+1)/weight wins, so idle nodes are compared by weight and busy
// ones by load per unit of weight.
type p2cPicker struct {
	table
	active []*atomic.Int64
	r      rng
}

func buildP2C(nodes []Node, now time.Time, o *Options) Picker {
	if len(nodes) == 0 {
		return none{}
	}
	p := &p2cPicker{table: newTable(nodes, now, o), active: actives(nodes)}
	p.r.init(o)
	return p
}

func (p *p2cPicker) Pick(info *Info) int {
	var a, b int
	if t := tried(info); len(t) > 0 {
		if a = p.pickExcluding(&p.r, t, -1); a < 0 {
			return -1
		}
		if b = p.pickExcluding(&p.r, t, a); b < 0 {
			return a
		}
	} else {
		if len(p.w) == 1 {
			return 0
		}
		a = p.pick(&p.r)
		b = p.pickOther(&p.r, a)
	}
	// Compare (la+1)/wa with (lb+1)/wb without dividing.
	la, lb := float64(load(p.active[a])+1), float64(load(p.active[b])+1)
	if lb*float64(p.w[a]) < la*float64(p.w[b]) {
		return b
	}
	return a
}

package balance

import "time"

// randomPicker is the "random" balancer.
type randomPicker struct {
	table
	r rng
}

func buildRandom(nodes []Node, now time.Time, o *Options) Picker {
	if len(nodes) == 0 {
		return none{}
	}
	p := &randomPicker{table: newTable(nodes, now, o)}
	p.r.init(o)
	return p
}

func (p *randomPicker) Pick(info *Info) int {
	if t := tried(info); len(t) > 0 {
		return p.pickExcluding(&p.r, t, -1)
	}
	return p.pick(&p.r)
}

package balance

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/yrpc/yrpc/hashring"
)

func TestRandomWeights(t *testing.T) {
	tests := []struct {
		name    string
		weights []int
		tried   []int
		want    []float64
	}{
		{"equal", []int{100, 100, 100, 100}, nil, []float64{.25, .25, .25, .25}},
		{"1:2:3:4", []int{100, 200, 300, 400}, nil, []float64{.1, .2, .3, .4}},
		{"default weight", []int{0, -1, 200}, nil, []float64{.25, .25, .5}},
		{"huge weights", []int{math.MaxInt, math.MaxInt, 100}, nil, []float64{.5, .5, 0}},
		{"tried", []int{100, 200, 300, 400}, []int{3, 3}, []float64{1. / 6, 2. / 6, 3. / 6, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewRandom(Options{Seed: 1}).Build(mkNodes(tt.weights...), t0)
			got := share(p, len(tt.weights), picks, &Info{Tried: tt.tried})
			checkShares(t, got, tt.want, 0.05)
			t.Logf("shares %.4f", got)
		})
	}
}

func TestRoundRobin(t *testing.T) {
	p := NewRoundRobin(Options{Seed: 1}).Build(mkNodes(100, 500, 100), t0)
	first := p.Pick(&Info{})
	for i := 1; i < 9; i++ {
		if got, want := p.Pick(&Info{}), (first+i)%3; got != want {
			t.Fatalf("pick %d = %d, want %d", i, got, want)
		}
	}
	// With node 1 tried, its turn goes to node 2.
	var got []int
	for range 6 {
		got = append(got, p.Pick(&Info{Tried: []int{1}}))
	}
	c := [3]int{}
	for _, i := range got {
		c[i]++
	}
	if c[1] != 0 || c[0]+c[2] != 6 {
		t.Errorf("picks with node 1 tried: %v", got)
	}
}

func TestSmoothWRR(t *testing.T) {
	tests := []struct {
		weights []int
		tried   []int
		want    string
	}{
		{[]int{5, 1, 1}, nil, "aabacaa" + "aabacaa"},
		{[]int{500, 100, 100}, nil, "aabacaa"},
		{[]int{1, 1, 1}, nil, "abcabc"},
		{[]int{2, 1}, nil, "abaaba"},
		{[]int{5, 1, 1}, []int{0}, "bcbc"},
		{[]int{5, 1, 1}, []int{2}, "aaabaa"},
	}
	for _, tt := range tests {
		// The precomputed period, and the mutex path it falls back to.
		for _, maxSched := range []int64{maxSchedule, 0} {
			p := newWRR(mkNodes(tt.weights...), t0, &Options{}, maxSched)
			if got := p.(*wrrPicker).sched != nil; got != (maxSched > 0) {
				t.Errorf("weights %v, max period %d: precomputed %v", tt.weights, maxSched, got)
			}
			var got []byte
			for range tt.want {
				got = append(got, byte('a'+p.Pick(&Info{Tried: tt.tried})))
			}
			if string(got) != tt.want {
				t.Errorf("weights %v tried %v, max period %d: %s, want %s", tt.weights, tt.tried, maxSched, got, tt.want)
			}
		}
	}
}

// TestSmoothWRRPeriod checks the property the precomputed period rests on:
// from zero current weights, nginx's algorithm is back at zero after
// sum(w)/gcd(w) picks, having picked each node w/gcd times.
func TestSmoothWRRPeriod(t *testing.T) {
	for _, weights := range [][]int{
		{5, 1, 1}, {100, 200, 100, 50, 100, 100, 300, 100, 100, 100}, {7, 3, 11, 1, 2}, {1000, 1}, {10, 100, 100, 33},
	} {
		p := newWRR(mkNodes(weights...), t0, &Options{}, maxSchedule).(*wrrPicker)
		if p.sched == nil {
			t.Fatalf("weights %v: no precomputed period", weights)
		}
		g := int64(0)
		for _, w := range p.w {
			g = gcd(g, w)
		}
		count := make([]int64, len(weights))
		for _, i := range p.sched {
			count[i]++
		}
		for i, w := range p.w {
			if count[i] != w/g || p.cur[i] != 0 {
				t.Errorf("weights %v: node %d picked %d times (want %d), current %d (want 0)", weights, i, count[i], w/g, p.cur[i])
			}
		}
		// Same sequence as the mutex path over two periods.
		m := newWRR(mkNodes(weights...), t0, &Options{}, 0)
		for k := range 2 * len(p.sched) {
			if a, b := p.Pick(&Info{}), m.Pick(&Info{}); a != b {
				t.Fatalf("weights %v, pick %d: precomputed %d, nginx %d", weights, k, a, b)
			}
		}
	}
}

func TestSmoothWRRLargePeriod(t *testing.T) {
	// W = 5002 is over the precomputed limit: the mutex path keeps the
	// exact shares.
	p := NewWeightedRoundRobin(Options{}).Build(mkNodes(5000, 1, 1), t0)
	if p.(*wrrPicker).sched != nil {
		t.Fatal("precomputed a period over the limit")
	}
	checkShares(t, share(p, 3, 5002*10, &Info{}), []float64{5000. / 5002, 1. / 5002, 1. / 5002}, 0)
}

func TestWRRShares(t *testing.T) {
	p := NewWeightedRoundRobin(Options{}).Build(mkNodes(100, 200, 300, 400), t0)
	checkShares(t, share(p, 4, picks, &Info{}), []float64{.1, .2, .3, .4}, 0.001)
}

func TestLeastActive(t *testing.T) {
	t.Run("prefers the idle node", func(t *testing.T) {
		nodes := mkNodes(100, 100, 100, 100)
		for i, a := range []int64{3, 1, 0, 2} {
			nodes[i].Active.Store(a)
		}
		p := NewLeastActive(Options{Seed: 1}).Build(nodes, t0)
		for range 100 {
			if got := p.Pick(&Info{}); got != 2 {
				t.Fatalf("Pick = %d, want the idle node 2", got)
			}
		}
		if got := p.Pick(&Info{Tried: []int{2}}); got != 1 {
			t.Errorf("idle node tried: Pick = %d, want 1 (next least active)", got)
		}
	})
	t.Run("ties by weight", func(t *testing.T) {
		nodes := mkNodes(100, 300, 100)
		nodes[2].Active.Store(5)
		p := NewLeastActive(Options{Seed: 2}).Build(nodes, t0)
		checkShares(t, share(p, 3, picks, &Info{}), []float64{.25, .75, 0}, 0.05)
	})
	t.Run("equal ties uniform", func(t *testing.T) {
		p := NewLeastActive(Options{Seed: 3}).Build(mkNodes(100, 100, 100), t0)
		checkShares(t, share(p, 3, picks, &Info{}), []float64{1. / 3, 1. / 3, 1. / 3}, 0.05)
	})
}

func TestP2C(t *testing.T) {
	t.Run("bias to less loaded", func(t *testing.T) {
		// Equal weights, distinct loads: the i-th least loaded of n nodes
		// wins the pairs it forms with the n-1-i more loaded ones, so the
		// shares are 3/6, 2/6, 1/6 and 0.
		nodes := mkNodes(100, 100, 100, 100)
		for i, a := range []int64{0, 5, 10, 20} {
			nodes[i].Active.Store(a)
		}
		p := NewP2C(Options{Seed: 4}).Build(nodes, t0)
		got := share(p, 4, picks, &Info{})
		t.Logf("shares %.4f", got)
		checkShares(t, got, []float64{3. / 6, 2. / 6, 1. / 6, 0}, 0.05)
	})
	t.Run("idle nodes by weight", func(t *testing.T) {
		// All idle: the heavier of the pair wins; with weights 1:3 drawn
		// by weight, node 1 is drawn in every pair.
		p := NewP2C(Options{Seed: 5}).Build(mkNodes(100, 300), t0)
		checkShares(t, share(p, 2, 1000, &Info{}), []float64{0, 1}, 0)
	})
	t.Run("load per weight", func(t *testing.T) {
		// 4 calls on a weight-400 node are lighter than 2 on a weight-100.
		nodes := mkNodes(400, 100)
		nodes[0].Active.Store(4)
		nodes[1].Active.Store(2)
		p := NewP2C(Options{Seed: 6}).Build(nodes, t0)
		checkShares(t, share(p, 2, 1000, &Info{}), []float64{1, 0}, 0)
	})
}

func TestConsistentHash(t *testing.T) {
	nodes := mkNodes(100, 100, 100, 100, 100)
	b := NewConsistentHash(Options{Seed: 1})
	p := b.Build(nodes, t0)

	// The same ring as hashring with the nodes' addresses and weights.
	members := make([]hashring.Node, len(nodes))
	for i, n := range nodes {
		members[i] = hashring.Node{Key: n.Addr, Weight: n.Weight}
	}
	ring := hashring.New(members, hashring.Options{WeightUnit: DefaultWeight})

	counts := make([]int, len(nodes))
	dst := make([]int, 0, 3)
	for k := range 10_000 {
		key := []byte("user:" + strconv.Itoa(k))
		got := p.Pick(&Info{Key: key})
		counts[got]++
		if k%100 != 0 {
			// Checked below on a sample: a rebuilt picker keeps the key.
		} else if again := b.Build(slices.Clone(nodes), t0.Add(time.Hour)).Pick(&Info{Key: key}); again != got {
			t.Fatalf("key %s: %d, then %d on a rebuilt picker", key, got, again)
		}
		dst = ring.GetN(key, 3, dst)
		if got != dst[0] {
			t.Fatalf("key %s: picked %d, ring says %d", key, got, dst[0])
		}
		if next := p.Pick(&Info{Key: key, Tried: []int{got}}); next != dst[1] {
			t.Fatalf("key %s: with %d tried picked %d, want next on the ring %d", key, got, next, dst[1])
		}
		if next := p.Pick(&Info{Key: key, Tried: dst[:2]}); next != dst[2] {
			t.Fatalf("key %s: with %v tried picked %d, want %d", key, dst[:2], next, dst[2])
		}
	}
	t.Logf("10,000 keys over 5 nodes: %v", counts)

	// Without a key: weighted random.
	checkShares(t, share(p, 5, picks, &Info{}), []float64{.2, .2, .2, .2, .2}, 0.05)
	// An empty non-nil key is a key.
	empty := p.Pick(&Info{Key: []byte{}})
	for range 100 {
		if got := p.Pick(&Info{Key: bytes.Clone([]byte{})}); got != empty {
			t.Fatalf("empty key: %d then %d", empty, got)
		}
	}
	if _, ok := p.(Expirer); ok {
		t.Error("consistent_hash picker implements Expirer; its weights do not change with time")
	}
}

// TestConsistentHashBoundedLoad sends one hot key while its calls stay in
// flight: with bounded loads no node gets more than ceil(1.25*(total+1)/n)
// of them, without it every call lands on the key's node.
func TestConsistentHashBoundedLoad(t *testing.T) {
	for _, bounded := range []bool{false, true} {
		nodes := mkNodes(100, 100, 100, 100)
		p := NewConsistentHash(Options{BoundedLoad: bounded}).Build(nodes, t0)
		info := &Info{Key: []byte("hot")}
		owner := p.Pick(info)
		for total := range 100 {
			i := p.Pick(info)
			if !bounded && i != owner {
				t.Fatalf("unbounded: call %d went to %d, not the owner %d", total, i, owner)
			}
			nodes[i].Active.Add(1)
			if limit := int64(math.Ceil(1.25 * float64(total+1) / 4)); bounded && nodes[i].Active.Load() > limit {
				t.Fatalf("bounded: after %d calls node %d has %d in flight > %d", total+1, i, nodes[i].Active.Load(), limit)
			}
		}
		if bounded {
			// Tried still wins over room: with the owner tried, another
			// node is picked even when the owner has room again.
			nodes[owner].Active.Store(0)
			if got := p.Pick(&Info{Key: info.Key, Tried: []int{owner}}); got == owner {
				t.Errorf("bounded: tried owner %d picked", owner)
			}
			if got := p.Pick(info); got != owner {
				t.Errorf("bounded: idle owner not picked: %d, want %d", got, owner)
			}
		}
	}
}

func TestWarmWeight(t *testing.T) {
	const wu = 10 * time.Minute
	tests := []struct {
		name   string
		weight int
		start  time.Time
		warmUp time.Duration
		want   int64
		warm   bool
	}{
		{"never started", 100, time.Time{}, wu, 100, false},
		{"long ago", 100, t0.Add(-time.Hour), wu, 100, false},
		{"exactly warm", 100, t0.Add(-wu), wu, 100, false},
		{"1 min of 10", 100, t0.Add(-time.Minute), wu, 10, true},
		{"5 min of 10", 100, t0.Add(-5 * time.Minute), wu, 50, true},
		{"just started", 100, t0, wu, 1, true},
		{"clock skew", 100, t0.Add(time.Minute), wu, 1, true},
		{"small weight", 5, t0.Add(-time.Minute), wu, 1, true},
		{"default weight", 0, t0.Add(-time.Minute), wu, 10, true},
		{"disabled", 100, t0, 0, 100, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, end := warmWeight(&Node{Weight: tt.weight, StartTime: tt.start}, t0, tt.warmUp)
			if w != tt.want || !end.IsZero() != tt.warm {
				t.Errorf("warmWeight = %d, end %v; want %d, warming %v", w, end, tt.want, tt.warm)
			}
		})
	}
}

// TestWarmUp: a node started 1 min ago with a 10 min warm-up gets 10 % of
// its weight, and the picker expires after WarmUp/10.
func TestWarmUp(t *testing.T) {
	nodes := mkNodes(100, 100)
	nodes[1].StartTime = t0.Add(-time.Minute)
	for _, b := range []Builder{
		NewRandom(Options{Seed: 1}),
		NewWeightedRoundRobin(Options{}),
		NewLeastActive(Options{Seed: 1}),
	} {
		t.Run(b.Name(), func(t *testing.T) {
			p := b.Build(nodes, t0)
			got := share(p, 2, picks, &Info{})
			// least_active: all idle, so the tie is broken by the
			// warm-up weights.
			t.Logf("warm node %.4f, warming node %.4f (want 100/110, 10/110)", got[0], got[1])
			checkShares(t, got, []float64{100. / 110, 10. / 110}, 0.05)
			e, ok := p.(Expirer)
			if !ok {
				t.Fatal("picker does not implement Expirer")
			}
			if got, want := e.Expires(), t0.Add(time.Minute); !got.Equal(want) {
				t.Errorf("Expires = %v, want %v", got, want)
			}
			if got := b.Build(nodes, t0.Add(8*time.Minute+30*time.Second)).(Expirer).Expires(); !got.Equal(t0.Add(9 * time.Minute)) {
				t.Errorf("near the end: Expires = %v, want the end of the warm-up", got)
			}
			if got := b.Build(nodes, t0.Add(9*time.Minute)).(Expirer).Expires(); !got.IsZero() {
				t.Errorf("all warm: Expires = %v, want zero", got)
			}
		})
	}
	t.Run(NameP2C, func(t *testing.T) {
		// Idle nodes: the heavier wins each pair, so the warming node
		// (weight 10 against 100) gets nothing.
		p := NewP2C(Options{Seed: 1}).Build(nodes, t0)
		checkShares(t, share(p, 2, 1000, &Info{}), []float64{1, 0}, 0)
	})
}

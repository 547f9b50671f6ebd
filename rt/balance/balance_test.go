package balance

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const picks = 100_000

func mkNodes(weights ...int) []Node {
	nodes := make([]Node, len(weights))
	for i, w := range weights {
		nodes[i] = Node{Addr: fmt.Sprintf("10.0.0.%d:7000", i+1), Weight: w, Active: new(atomic.Int64)}
	}
	return nodes
}

func allBuilders(o Options) []Builder {
	var bs []Builder
	for _, name := range Names() {
		b, ok := New(name, o)
		if !ok {
			panic(name)
		}
		bs = append(bs, b)
	}
	o.BoundedLoad = true
	return append(bs, renamed{NewConsistentHash(o), NameConsistentHash + "+bounded"})
}

// renamed is a Builder under another name, for tests of options.
type renamed struct {
	Builder
	name string
}

func (r renamed) Name() string { return r.name }

// share counts picks per node over n picks with info.
func share(p Picker, nnodes, n int, info *Info) []float64 {
	c := make([]float64, nnodes)
	for range n {
		c[p.Pick(info)]++
	}
	for i := range c {
		c[i] /= float64(n)
	}
	return c
}

// checkShares fails when a share is off its expected value by more than
// tol, relative.
func checkShares(t *testing.T, got, want []float64, tol float64) {
	t.Helper()
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol*want[i] {
			t.Errorf("node %d: share %.4f, want %.4f ± %.0f%% (all: %.4f)", i, got[i], want[i], 100*tol, got)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, name := range Names() {
		b, ok := Lookup(name)
		if !ok || b.Name() != name {
			t.Errorf("Lookup(%q) = %v, %v", name, b, ok)
		}
	}
	for _, name := range []string{"", "Random", "leastactive", "hash"} {
		if _, ok := Lookup(name); ok {
			t.Errorf("Lookup(%q) found a balancer", name)
		}
	}
}

func TestEmptyAndNilInfo(t *testing.T) {
	for _, b := range allBuilders(Options{Seed: 1}) {
		if got := b.Build(nil, t0).Pick(&Info{}); got != -1 {
			t.Errorf("%s: Pick on no nodes = %d, want -1", b.Name(), got)
		}
		p := b.Build(mkNodes(100, 100), t0)
		if got := p.Pick(nil); got < 0 || got > 1 {
			t.Errorf("%s: Pick(nil) = %d", b.Name(), got)
		}
		if got := b.Build(mkNodes(1), t0).Pick(&Info{Key: []byte("k")}); got != 0 {
			t.Errorf("%s: Pick on one node = %d, want 0", b.Name(), got)
		}
	}
}

// TestHugeWeights: weights far above MaxWeight neither overflow nor
// panic, and the ring stays within hashring.MaxPoints.
func TestHugeWeights(t *testing.T) {
	nodes := mkNodes(math.MaxInt, math.MaxInt, 1, 100)
	for _, b := range allBuilders(Options{Seed: 1}) {
		p := b.Build(nodes, t0)
		for _, info := range []*Info{{}, {Key: []byte("k")}, {Tried: []int{0}}, {Key: []byte("k"), Tried: []int{0, 1}}} {
			for range 100 {
				if got := p.Pick(info); got < 0 || got >= len(nodes) || slices.Contains(info.Tried, got) {
					t.Fatalf("%s: Pick(%+v) = %d", b.Name(), info, got)
				}
			}
		}
	}
}

// TestTried checks every balancer against every subset of tried nodes,
// with duplicate and out-of-range entries: a tried index is never
// returned, and -1 comes back exactly when all nodes are tried.
func TestTried(t *testing.T) {
	const n = 5
	nodes := mkNodes(100, 1, 300, 50, 100)
	nodes[1].StartTime = t0.Add(-time.Minute) // warming up
	nodes[3].Active.Store(4)
	for _, b := range allBuilders(Options{Seed: 7}) {
		p := b.Build(nodes, t0)
		for mask := range 1 << n {
			tr := []int{-1, n + 3}
			for i := range n {
				if mask&(1<<i) != 0 {
					tr = append(tr, i, i)
				}
			}
			for _, key := range [][]byte{nil, []byte("user:1"), []byte("user:2")} {
				for range 20 {
					got := p.Pick(&Info{Key: key, Tried: tr})
					if mask == 1<<n-1 {
						if got != -1 {
							t.Fatalf("%s: all tried, Pick = %d, want -1", b.Name(), got)
						}
						continue
					}
					if got < 0 || got >= n || slices.Contains(tr, got) {
						t.Fatalf("%s: tried %v, Pick = %d", b.Name(), tr, got)
					}
				}
			}
		}
	}
}

func TestNoAllocs(t *testing.T) {
	nodes := mkNodes(100, 200, 100, 50, 100, 100, 100, 100, 100, 300)
	nodes[2].StartTime = t0.Add(-time.Minute)
	for _, b := range allBuilders(Options{Seed: 3}) {
		p := b.Build(nodes, t0)
		for _, info := range []*Info{
			{},
			{Key: []byte("user:42")},
			{Key: []byte("user:42"), Tried: []int{1, 4}},
			{Tried: []int{0, 9}},
		} {
			if a := testing.AllocsPerRun(200, func() { p.Pick(info) }); a != 0 {
				t.Errorf("%s: Pick(%+v) allocates %v times", b.Name(), info, a)
			}
		}
	}
}

// TestConcurrent runs Picks of every balancer from several goroutines
// (run with -race) while the Active counts change.
func TestConcurrent(t *testing.T) {
	nodes := mkNodes(100, 200, 300, 400)
	for _, b := range allBuilders(Options{}) {
		p := b.Build(nodes, t0)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				info := &Info{Key: []byte{byte(g)}, Tried: []int{g}}
				for range 2000 {
					i := p.Pick(info)
					if i < 0 || i == g {
						t.Errorf("%s: Pick = %d with %d tried", b.Name(), i, g)
						return
					}
					nodes[i].Active.Add(1)
					nodes[i].Active.Add(-1)
				}
			})
		}
		wg.Wait()
	}
}

func TestSeedReproducible(t *testing.T) {
	for _, name := range []string{NameRandom, NameP2C, NameLeastActive, NameRoundRobin} {
		b, _ := New(name, Options{Seed: 42})
		seq := func() []int {
			p := b.Build(mkNodes(100, 200, 300, 400, 500), t0)
			s := make([]int, 50)
			for i := range s {
				s[i] = p.Pick(&Info{})
			}
			return s
		}
		if a, c := seq(), seq(); !slices.Equal(a, c) {
			t.Errorf("%s: same seed, different picks: %v vs %v", name, a, c)
		}
	}
}

// constSource is a Source that always returns the same number.
type constSource uint64

func (s constSource) Uint64() uint64 { return uint64(s) }

func TestSource(t *testing.T) {
	b := NewRandom(Options{Source: constSource(math.MaxUint64)})
	p := b.Build(mkNodes(100, 100, 100), t0)
	for range 10 {
		if got := p.Pick(&Info{}); got != 2 {
			t.Fatalf("Pick with a max Source = %d, want the last node", got)
		}
	}
}

// FuzzPick builds every balancer over nodes whose weights, loads and
// start times come from the input, and checks that Pick neither panics nor
// returns a tried or out-of-range index, and returns -1 only when all
// nodes are tried.
func FuzzPick(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6}, []byte{0, 2}, []byte("k"), true)
	f.Add([]byte{0, 0, 255}, []byte{0, 1, 2, 200}, []byte(nil), false)
	f.Add([]byte{}, []byte{}, []byte{}, true)
	f.Fuzz(func(t *testing.T, spec, triedB, key []byte, withKey bool) {
		nodes := make([]Node, len(spec)/2)
		for i := range nodes {
			w, a := spec[2*i], spec[2*i+1]
			nodes[i] = Node{Addr: strconv.Itoa(i), Weight: int(int8(w)) * 10, Active: new(atomic.Int64)}
			nodes[i].Active.Store(int64(a % 8))
			if a&0x80 != 0 {
				nodes[i].StartTime = t0.Add(-time.Duration(a) * time.Second)
			}
		}
		tr := make([]int, len(triedB))
		all := len(nodes) > 0
		for j, b := range triedB {
			tr[j] = int(int8(b))
		}
		for i := range nodes {
			all = all && slices.Contains(tr, i)
		}
		if !withKey {
			key = nil
		}
		for _, b := range allBuilders(Options{Seed: 9}) {
			p := b.Build(nodes, t0)
			got := p.Pick(&Info{Key: key, Tried: tr})
			switch {
			case len(nodes) == 0 || all:
				if got != -1 {
					t.Fatalf("%s: Pick = %d, want -1", b.Name(), got)
				}
			case got < 0 || got >= len(nodes) || slices.Contains(tr, got):
				t.Fatalf("%s: Pick = %d with %d nodes, tried %v", b.Name(), got, len(nodes), tr)
			}
		}
	})
}

package hashring

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

func TestGetN(t *testing.T) {
	r := New(testNodes(5), Options{})
	tests := []struct {
		n, want int
	}{{0, 0}, {-1, 0}, {1, 1}, {3, 3}, {5, 5}, {9, 5}}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			for _, k := range testKeys()[:200] {
				got := r.GetN(k, tt.n, nil)
				if len(got) != tt.want {
					t.Fatalf("GetN(%q, %d) = %v, want %d nodes", k, tt.n, got, tt.want)
				}
				if len(got) > 0 && got[0] != r.Get(k) {
					t.Fatalf("GetN(%q)[0] = %d, Get = %d", k, got[0], r.Get(k))
				}
				checkDistinct(t, got, r.Len())
			}
		})
	}
}

func checkDistinct(t *testing.T, got []int, n int) {
	t.Helper()
	s := slices.Clone(got)
	slices.Sort(s)
	if len(slices.Compact(s)) != len(got) {
		t.Fatalf("GetN = %v has duplicates", got)
	}
	for _, i := range got {
		if i < 0 || i >= n {
			t.Fatalf("GetN = %v: index out of range", got)
		}
	}
}

// TestGetNIsFailoverOrder checks that GetN's order is what a ring without
// the first nodes would pick: removing dst[0] sends the key to dst[1].
func TestGetNIsFailoverOrder(t *testing.T) {
	nodes := testNodes(6)
	r := New(nodes, Options{})
	for _, k := range testKeys()[:500] {
		order := r.GetN(k, 3, nil)
		var rest []Node
		for i, n := range nodes {
			if i != order[0] {
				rest = append(rest, n)
			}
		}
		if got := rest[New(rest, Options{}).Get(k)].Key; got != nodes[order[1]].Key {
			t.Fatalf("key %q: without %s it goes to %s, GetN says %s", k, nodes[order[0]].Key, got, nodes[order[1]].Key)
		}
		tried := order[:2]
		if got := r.Next(k, func(i int) bool { return !slices.Contains(tried, i) }); got != order[2] {
			t.Fatalf("key %q: Next skipping %v = %d, want %d", k, tried, got, order[2])
		}
	}
}

func TestNextNoneAccepted(t *testing.T) {
	r := New(testNodes(3), Options{})
	calls := 0
	if got := r.Next([]byte("k"), func(int) bool { calls++; return false }); got != -1 {
		t.Errorf("Next = %d, want -1", got)
	}
	if calls != r.Points() {
		t.Errorf("accept called %d times, want once per point (%d)", calls, r.Points())
	}
}

// FuzzGetN checks that GetN returns min(n, nodes) distinct, in-range nodes
// starting with Get's answer, for any key and ring size.
func FuzzGetN(f *testing.F) {
	f.Add([]byte("user:1"), uint8(3), uint8(10), uint8(0))
	f.Add([]byte(""), uint8(1), uint8(1), uint8(1))
	f.Add([]byte("a much longer key that spans several words"), uint8(20), uint8(7), uint8(2))
	f.Fuzz(func(t *testing.T, key []byte, n, size, replicas uint8) {
		nodes := testNodes(int(size % 40))
		for i := range nodes {
			nodes[i].Weight = i%3 + 1
		}
		r := New(nodes, Options{Replicas: int(replicas % 50)})
		got := r.GetN(key, int(n), make([]int, 0, 4))
		if want := min(int(n), len(nodes)); len(got) != want {
			t.Fatalf("GetN(%d) on %d nodes returned %d", n, len(nodes), len(got))
		}
		checkDistinct(t, got, len(nodes))
		if len(got) > 0 && got[0] != r.Get(key) {
			t.Fatalf("GetN[0] = %d, Get = %d", got[0], r.Get(key))
		}
	})
}

// TestBounded assigns 100,000 keys one by one with loads counting up and
// checks that no node ever holds more than ceil(c*mean) keys, for equal
// and unequal weights.
func TestBounded(t *testing.T) {
	tests := []struct {
		name string
		c    float64
		w    func(i int) int
		hot  bool // 100,000 requests over only 20 distinct keys
	}{
		{"equal c=1.25", 0, func(int) int { return 1 }, false},
		{"equal c=1.1", 1.1, func(int) int { return 1 }, false},
		{"equal c=1", 1, func(int) int { return 1 }, false},
		{"weighted c=1.25", 0, func(i int) int { return i%3 + 1 }, false},
		{"hot keys c=1.25", 0, func(int) int { return 1 }, true},
	}
	for _, tt := range tests {
		keys := testKeys()
		if tt.hot {
			for i := range keys {
				keys[i] = keys[i%20]
			}
		}
		t.Run(tt.name, func(t *testing.T) {
			nodes := testNodes(10)
			var sumW int
			for i := range nodes {
				nodes[i].Weight = tt.w(i)
				sumW += nodes[i].Weight
			}
			r := New(nodes, Options{LoadFactor: tt.c})
			c := r.LoadFactor()
			loads := make([]int64, len(nodes))
			load := func(i int) int64 { return loads[i] }
			moved := 0
			for m, k := range keys {
				i := r.GetBounded(k, load, int64(m))
				if i < 0 {
					t.Fatalf("key %d: GetBounded = -1", m)
				}
				if i != r.Get(k) {
					moved++
				}
				loads[i]++
				// Capacity with this key placed: ceil(c*(m+1)*w/W).
				limit := int64(math.Ceil(c * float64(m+1) * float64(nodes[i].Weight) / float64(sumW)))
				if loads[i] > limit {
					t.Fatalf("after %d keys node %d holds %d > ceil(c*mean*w) = %d", m+1, i, loads[i], limit)
				}
			}
			mean := float64(numKeys) / float64(sumW)
			var worst float64
			for i, l := range loads {
				worst = max(worst, float64(l)/(mean*float64(nodes[i].Weight)))
			}
			t.Logf("c=%.2f: loads %v, max/fair %.3f, %.1f%% of keys off their ring node", c, loads, worst, 100*float64(moved)/numKeys)
		})
	}
}

func TestLoadFactor(t *testing.T) {
	tests := []struct{ in, want float64 }{
		{0, 1.25}, {1.5, 1.5}, {1, 1}, {0.5, 1}, {-2, 1}, {math.NaN(), 1}, {math.Inf(1), math.Inf(1)},
	}
	for _, tt := range tests {
		if got := New(nil, Options{LoadFactor: tt.in}).LoadFactor(); got != tt.want {
			t.Errorf("LoadFactor %v -> %v, want %v", tt.in, got, tt.want)
		}
	}
	// An infinite factor means no bound: GetBounded is Get.
	r := New(testNodes(3), Options{LoadFactor: math.Inf(1)})
	busy := func(int) int64 { return math.MaxInt64 - 1 }
	for _, k := range testKeys()[:100] {
		if got, want := r.GetBounded(k, busy, math.MaxInt64-1), r.Get(k); got != want {
			t.Fatalf("c=+Inf: GetBounded(%q) = %d, want %d", k, got, want)
		}
	}
}

func TestCapacity(t *testing.T) {
	r := New(testNodes(10), Options{})
	tests := []struct {
		i     int
		total int64
		want  int64
	}{{0, 9, 2}, {0, 0, 1}, {3, 99, 13}, {-1, 5, 0}, {10, 5, 0}}
	for _, tt := range tests {
		if got := r.Capacity(tt.i, tt.total); got != tt.want {
			t.Errorf("Capacity(%d, %d) = %d, want %d", tt.i, tt.total, got, tt.want)
		}
	}
}

// TestHashSpread checks that the key hash spreads sequential keys evenly
// over 64 ranges of the ring (each within 10 % of the mean).
func TestHashSpread(t *testing.T) {
	var buckets [64]int
	for _, k := range testKeys() {
		buckets[Hash(k)>>26]++
	}
	mean := float64(numKeys) / 64
	for b, n := range buckets {
		if math.Abs(float64(n)-mean) > 0.1*mean {
			t.Errorf("bucket %d: %d keys, mean %.0f", b, n, mean)
		}
	}
}

func TestHashStable(t *testing.T) {
	// Positions are part of the ring's contract: a change would move keys
	// between processes running different versions.
	tests := []struct {
		key  string
		want uint32
	}{{"", 0xf490368a}, {"a", 0xaba0108c}, {"user:1", 0x22af4ab4}, {"0123456789abcdef-long", 0xe6c2f9bc}}
	for _, tt := range tests {
		if got := HashString(tt.key); got != tt.want {
			t.Errorf("HashString(%q) = %#x, want %#x", tt.key, got, tt.want)
		}
		if got := Hash([]byte(tt.key)); got != HashString(tt.key) {
			t.Errorf("Hash(%q) = %#x != HashString", tt.key, got)
		}
	}
}

func TestNoAllocs(t *testing.T) {
	r := New(testNodes(100), Options{})
	key := []byte("user:12345")
	dst := make([]int, 0, 3)
	loads := make([]int64, 100)
	load := func(i int) int64 { return loads[i] }
	dst = r.GetN(key, 3, dst)
	tried := dst[:2]
	tests := []struct {
		name string
		f    func()
	}{
		{"Get", func() { r.Get(key) }},
		{"GetString", func() { r.GetString("user:12345") }},
		{"GetN", func() { dst = r.GetN(key, 3, dst) }},
		{"GetBounded", func() { r.GetBounded(key, load, 0) }},
		{"Next", func() { r.Next(key, func(i int) bool { return !slices.Contains(tried, i) }) }},
	}
	for _, tt := range tests {
		if n := testing.AllocsPerRun(100, tt.f); n != 0 {
			t.Errorf("%s: %v allocs, want 0", tt.name, n)
		}
	}
}

// TestSearch checks the bucketed search against a plain binary search,
// at and around every point and at the ends of the ring.
func TestSearch(t *testing.T) {
	for _, n := range []int{1, 2, 3, 10, 100, 1000} {
		r := New(testNodes(n), Options{Replicas: 1 + n%7*40})
		want := func(h uint32) int {
			i, _ := slices.BinarySearch(r.points, h)
			if i == len(r.points) {
				i = 0
			}
			return i
		}
		hs := []uint32{0, 1, math.MaxUint32, math.MaxUint32 - 1, 1 << 31}
		for _, p := range r.points {
			hs = append(hs, p-1, p, p+1)
		}
		for b := range r.index {
			hs = append(hs, uint32(uint64(b)<<r.shift), uint32(uint64(b)<<r.shift)-1)
		}
		for _, h := range hs {
			if got, w := r.search(h), want(h); got != w {
				t.Fatalf("%d nodes: search(%#x) = %d, want %d", n, h, got, w)
			}
		}
	}
}

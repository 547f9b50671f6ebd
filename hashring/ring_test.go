package hashring

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"
)

const numKeys = 100_000

func testNodes(n int) []Node {
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{Key: fmt.Sprintf("10.0.%d.%d:8080", i/256, i%256), Weight: 1}
	}
	return nodes
}

func testKeys() [][]byte {
	keys := make([][]byte, numKeys)
	for i := range keys {
		keys[i] = []byte("user:" + strconv.Itoa(i))
	}
	return keys
}

// counts returns how many of keys each node owns.
func counts(r *Ring, keys [][]byte) []int {
	c := make([]int, r.Len())
	for _, k := range keys {
		c[r.Get(k)]++
	}
	return c
}

func TestEmpty(t *testing.T) {
	for _, r := range []*Ring{{}, New(nil, Options{})} {
		if got := r.Get([]byte("a")); got != -1 {
			t.Errorf("Get on empty ring = %d, want -1", got)
		}
		if got := r.GetString("a"); got != -1 {
			t.Errorf("GetString on empty ring = %d, want -1", got)
		}
		if got := r.GetN([]byte("a"), 3, nil); len(got) != 0 {
			t.Errorf("GetN on empty ring = %v, want empty", got)
		}
		if got := r.GetBounded([]byte("a"), func(int) int64 { return 0 }, 0); got != -1 {
			t.Errorf("GetBounded on empty ring = %d, want -1", got)
		}
	}
}

func TestPoints(t *testing.T) {
	tests := []struct {
		name  string
		nodes []Node
		opts  Options
		want  int
	}{
		{"default", testNodes(3), Options{}, 3 * 160},
		{"zero weight is one unit", []Node{{Key: "a"}, {Key: "b", Weight: -5}}, Options{}, 2 * 160},
		{"weight 2", []Node{{Key: "a", Weight: 2}, {Key: "b", Weight: 1}}, Options{}, 3 * 160},
		{"replicas not a multiple of 4", []Node{{Key: "a"}}, Options{Replicas: 7}, 7},
		{"unit 100", []Node{{Key: "a", Weight: 100}, {Key: "b", Weight: 50}}, Options{WeightUnit: 100}, 160 + 80},
		{"tiny weight keeps one point", []Node{{Key: "a", Weight: 1}}, Options{WeightUnit: 1000}, 1},
		{"capped", []Node{{Key: "a", Weight: 1 << 30}, {Key: "b", Weight: 1 << 30}}, Options{}, MaxPoints},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want == MaxPoints && testing.Short() {
				t.Skip("builds a ring of MaxPoints points")
			}
			r := New(tt.nodes, tt.opts)
			if got := r.Points(); got != tt.want {
				t.Errorf("Points() = %d, want %d", got, tt.want)
			}
			if !slices.IsSorted(r.points) {
				t.Error("points not sorted")
			}
		})
	}
}

// TestKetamaPoints checks the first points of a node against md5 of "key-0"
// split into four little-endian words, as libketama does.
func TestKetamaPoints(t *testing.T) {
	// md5("a-0") = a165efd1 96e17ba1 95ad4dc5 0028b39a (printf a-0 | md5sum).
	want := []uint32{0xd1ef65a1, 0xa17be196, 0xc54dad95, 0x9ab32800}
	r := New([]Node{{Key: "a"}}, Options{Replicas: 4})
	got := slices.Clone(r.points)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("points = %x, want %x", got, want)
	}
}

func TestOrderIndependent(t *testing.T) {
	nodes := testNodes(10)
	rev := slices.Clone(nodes)
	slices.Reverse(rev)
	a, b := New(nodes, Options{}), New(rev, Options{})
	for _, k := range testKeys()[:10_000] {
		if ka, kb := nodes[a.Get(k)].Key, rev[b.Get(k)].Key; ka != kb {
			t.Fatalf("key %q: %s in one order, %s in the other", k, ka, kb)
		}
	}
}

func TestGetStringMatchesGet(t *testing.T) {
	r := New(testNodes(10), Options{})
	for _, k := range testKeys()[:1000] {
		if a, b := r.Get(k), r.GetString(string(k)); a != b {
			t.Fatalf("key %q: Get %d, GetString %d", k, a, b)
		}
	}
}

// TestAddNodeMovement: adding an 11th node to 10 should move about 1/11 of
// the keys (9.1 %), all of them to the new node.
func TestAddNodeMovement(t *testing.T) {
	keys := testKeys()
	nodes := testNodes(11)
	r10, r11 := New(nodes[:10], Options{}), New(nodes, Options{})
	moved := 0
	for _, k := range keys {
		a, b := r10.Get(k), r11.Get(k)
		if a != b {
			moved++
			if b != 10 {
				t.Fatalf("key %q moved from %d to %d, not to the new node", k, a, b)
			}
		}
	}
	frac := float64(moved) / numKeys
	t.Logf("adding an 11th node moved %.2f%% of %d keys (ideal %.2f%%)", 100*frac, numKeys, 100.0/11)
	if frac < 0.07 || frac > 0.115 {
		t.Errorf("moved %.2f%%, want 7%%..11.5%%", 100*frac)
	}
}

// TestRemoveNodeMovement: removing a node moves only the keys it owned.
func TestRemoveNodeMovement(t *testing.T) {
	nodes := testNodes(10)
	rest := slices.Delete(slices.Clone(nodes), 3, 4)
	all, without := New(nodes, Options{}), New(rest, Options{})
	for _, k := range testKeys() {
		before, after := nodes[all.Get(k)].Key, rest[without.Get(k)].Key
		if before != after && before != nodes[3].Key {
			t.Fatalf("key %q moved from %s to %s though %s is still there", k, before, after, before)
		}
	}
}

func TestBalance(t *testing.T) {
	keys := testKeys()
	r := New(testNodes(10), Options{})
	c := counts(r, keys)
	maxc := slices.Max(c)
	ratio := float64(maxc) / (numKeys / 10.0)
	t.Logf("10 equal nodes: counts %v, max/mean %.3f", c, ratio)
	if ratio > 1.15 {
		t.Errorf("max/mean = %.3f, want <= 1.15", ratio)
	}
}

func TestWeight(t *testing.T) {
	keys := testKeys()
	nodes := testNodes(10)
	nodes[0].Weight = 2
	r := New(nodes, Options{})
	c := counts(r, keys)
	var others float64
	for _, v := range c[1:] {
		others += float64(v)
	}
	mean1 := others / 9
	ratio := float64(c[0]) / mean1
	t.Logf("weight-2 node: %d keys, weight-1 mean %.0f, ratio %.3f", c[0], mean1, ratio)
	if math.Abs(ratio-2) > 0.2 {
		t.Errorf("ratio = %.3f, want 2 ± 10%%", ratio)
	}
}

// A negative total (a caller's miscount) counts as no load: every node
// keeps a capacity of at least 1, and GetBounded still places keys.
func TestNegativeTotal(t *testing.T) {
	r := New([]Node{{Key: "a"}, {Key: "b"}}, Options{})
	for i := range 2 {
		if c := r.Capacity(i, -5); c < 1 {
			t.Errorf("Capacity(%d, -5) = %d, want >= 1", i, c)
		}
	}
	if i := r.GetBounded([]byte("k"), func(int) int64 { return 0 }, -5); i < 0 {
		t.Errorf("GetBounded with total -5 = %d, want a node", i)
	}
}

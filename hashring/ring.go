package hashring

import (
	"cmp"
	"crypto/md5"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Defaults used when the matching Options field is zero.
const (
	DefaultReplicas   = 160  // points per weight unit, as in libketama
	DefaultWeightUnit = 1    // weight that gets Replicas points
	DefaultLoadFactor = 1.25 // c of bounded-load lookups
	// MaxPoints caps the points of a ring (about 2 MiB of memory and tens
	// of milliseconds to build); when the weights ask for more, every
	// node's share is scaled down in proportion (1,600 nodes of one unit
	// still get 160 points each).
	MaxPoints = 1 << 18
)

// Node is one member of a Ring.
type Node struct {
	// Key identifies the node on the ring (typically "host:port"). Keys
	// should be unique: nodes with equal keys get the same points, which
	// the first of them owns, so the others get no key of their own (Get
	// never returns them) and are reached only as the next node clockwise
	// (Next, GetN).
	Key string
	// Weight is the node's relative share of the ring; zero or negative
	// means one WeightUnit.
	Weight int
}

// Options tunes a Ring. The zero value means the documented defaults.
type Options struct {
	// Replicas is the number of points per weight unit; 0 means
	// DefaultReplicas (160).
	Replicas int
	// WeightUnit is the weight that gets Replicas points: a node of
	// weight w gets round(Replicas*w/WeightUnit) points, at least one.
	// 0 means DefaultWeightUnit (1).
	WeightUnit int
	// LoadFactor is c of GetBounded: a node accepts keys while its load is
	// below ceil(c*(total+1)*w/W). 0 means DefaultLoadFactor (1.25);
	// values below 1 (and NaN) are treated as 1.
	LoadFactor float64
}

// Ring is an immutable consistent-hash ring. Lookups return the index of a
// node in the slice given to New.
//
// The zero value is an empty ring on which every lookup returns -1. A Ring
// is safe for concurrent use: nothing changes after New. Lookups do not
// allocate.
type Ring struct {
	points []uint32 // sorted ring positions
	owners []int32  // owners[i] is the node index of points[i]
	// index[b] is the first point at or after b<<shift, so a lookup
	// binary-searches only points[index[b]:index[b+1]], about 2 points:
	// a few cache lines instead of log2(points) probes.
	index   []uint32
	shift   uint
	weights []float64 // per-node weights, for bounded loads
	sumW    float64
	c       float64
}

// New builds a ring of nodes. It copies what it needs and does not retain
// nodes.
func New(nodes []Node, opts Options) *Ring {
	reps, unit := int64(opts.Replicas), int64(opts.WeightUnit)
	if reps <= 0 {
		reps = DefaultReplicas
	}
	if unit <= 0 {
		unit = DefaultWeightUnit
	}
	c := opts.LoadFactor
	switch {
	case c == 0:
		c = DefaultLoadFactor
	case !(c >= 1): // also NaN
		c = 1
	}
	r := &Ring{c: c, weights: make([]float64, len(nodes))}
	if len(nodes) == 0 {
		return r
	}

	counts := make([]int64, len(nodes))
	var total float64
	for i, n := range nodes {
		w := int64(n.Weight)
		if w <= 0 {
			w = unit
		}
		r.weights[i] = float64(w)
		r.sumW += float64(w)
		// round(reps*w/unit), computed in float64 so that large weights
		// cannot overflow.
		counts[i] = int64(math.Round(float64(reps) * float64(w) / float64(unit)))
		total += float64(counts[i])
	}
	scale := 1.0
	if total > MaxPoints {
		scale = MaxPoints / total
	}
	sum := 0
	for i := range counts {
		counts[i] = max(1, int64(float64(counts[i])*scale))
		sum += int(counts[i])
	}

	type point struct {
		p     uint32
		owner int32
	}
	pts := make([]point, 0, sum)
	buf := make([]byte, 0, 64)
	for i, n := range nodes {
		// Digest d of "Key-d" gives points 4d .. 4d+3.
		for d := int64(0); d*4 < counts[i]; d++ {
			buf = strconv.AppendInt(append(append(buf[:0], n.Key...), '-'), d, 10)
			digest := md5.Sum(buf)
			for k := int64(0); k < 4 && d*4+k < counts[i]; k++ {
				b := digest[4*k : 4*k+4]
				p := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
				pts = append(pts, point{p, int32(i)})
			}
		}
	}
	// Ties between points are broken by node key, then by index, so the
	// ring depends on the set of nodes and not on their order.
	slices.SortFunc(pts, func(a, b point) int {
		if a.p != b.p {
			return cmp.Compare(a.p, b.p)
		}
		if c := strings.Compare(nodes[a.owner].Key, nodes[b.owner].Key); c != 0 {
			return c
		}
		return cmp.Compare(a.owner, b.owner)
	})
	r.points = make([]uint32, len(pts))
	r.owners = make([]int32, len(pts))
	for i, p := range pts {
		r.points[i], r.owners[i] = p.p, p.owner
	}
	r.buildIndex()
	return r
}

// buildIndex makes the bucket index: 2^k buckets for about 2 points each,
// at most 2^16 (256 KiB).
func (r *Ring) buildIndex() {
	k := uint(0)
	for k < 16 && 2<<k < len(r.points) {
		k++
	}
	r.shift = 32 - k
	r.index = make([]uint32, 1<<k+1)
	i := 0
	for b := range r.index {
		for i < len(r.points) && uint64(r.points[i]) < uint64(b)<<r.shift {
			i++
		}
		r.index[b] = uint32(i)
	}
}

// Len returns the number of nodes of the ring.
func (r *Ring) Len() int { return len(r.weights) }

// Points returns the number of points on the ring.
func (r *Ring) Points() int { return len(r.points) }

// LoadFactor returns the c used by GetBounded.
func (r *Ring) LoadFactor() float64 { return r.c }

// search returns the position of the first point at or after h, wrapping
// to 0 past the last point. The ring must not be empty.
func (r *Ring) search(h uint32) int {
	pts := r.points
	b := h >> r.shift
	lo, hi := int(r.index[b]), int(r.index[b+1])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if pts[m] < h {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(pts) {
		lo = 0
	}
	return lo
}

// Get returns the index of the node owning key, or -1 when the ring is
// empty.
func (r *Ring) Get(key []byte) int { return r.At(Hash(key)) }

// GetString is Get for a string key; it does not allocate.
func (r *Ring) GetString(key string) int { return r.At(HashString(key)) }

// At returns the index of the node owning ring position h (the first point
// clockwise from h), or -1 when the ring is empty.
func (r *Ring) At(h uint32) int {
	if len(r.points) == 0 {
		return -1
	}
	return int(r.owners[r.search(h)])
}

// GetN stores in dst[:0] the indices of up to n distinct nodes met walking
// clockwise from key, first the owner of key, and returns the slice; it
// allocates only when dst has too little capacity. Fewer than n indices are
// returned when the ring has fewer than n nodes. The order is the failover
// order: retry dst[1] when dst[0] fails, and so on.
func (r *Ring) GetN(key []byte, n int, dst []int) []int {
	dst = dst[:0]
	n = min(n, r.Len())
	if n <= 0 || len(r.points) == 0 {
		return dst
	}
	start := r.search(Hash(key))
	for i, j := 0, start; i < len(r.points) && len(dst) < n; i, j = i+1, j+1 {
		if j == len(r.points) {
			j = 0
		}
		o := int(r.owners[j])
		if !slices.Contains(dst, o) {
			dst = append(dst, o)
		}
	}
	return dst
}

// Next returns the first node met walking clockwise from key for which
// accept returns true, or -1 when it accepts none. accept is called at most
// once per point; it is how callers skip nodes already tried (the result is
// then the first untried node of GetN's order) or overloaded.
func (r *Ring) Next(key []byte, accept func(i int) bool) int {
	return r.NextAt(Hash(key), accept)
}

// NextAt is Next for a ring position, as returned by Hash.
func (r *Ring) NextAt(h uint32, accept func(i int) bool) int {
	if len(r.points) == 0 {
		return -1
	}
	for i, j := 0, r.search(h); i < len(r.points); i, j = i+1, j+1 {
		if j == len(r.points) {
			j = 0
		}
		if o := int(r.owners[j]); accept(o) {
			return o
		}
	}
	return -1
}

// GetBounded returns the node for key under bounded loads: the first node
// clockwise from key whose load, as reported by load(i), is below its
// capacity ceil(c*(total+1)*w/W) (see the package doc). total is the sum of
// the loads of all nodes before this key is placed; the caller adds the
// key's load to the chosen node. It returns -1 only when the ring is empty
// or load reports more than total allows. It does not allocate when load
// does not.
func (r *Ring) GetBounded(key []byte, load func(i int) int64, total int64) int {
	if len(r.points) == 0 {
		return -1
	}
	return r.NextAt(Hash(key), func(i int) bool {
		return load(i) < r.capacity(i, total)
	})
}

// Capacity returns the bounded-load capacity of node i when the nodes
// carry total load: ceil(c*(total+1)*w/W); a negative total counts as 0.
func (r *Ring) Capacity(i int, total int64) int64 {
	if i < 0 || i >= len(r.weights) {
		return 0
	}
	return r.capacity(i, total)
}

// capacity multiplies before it divides so that equal weights give the
// exact ceil(c*(total+1)/n).
// It saturates at MaxInt64 (c may be +Inf: no bound).
func (r *Ring) capacity(i int, total int64) int64 {
	total = max(total, 0) // a caller's miscount must not refuse every node
	x := math.Ceil(r.c * (float64(total) + 1) * r.weights[i] / r.sumW)
	if x >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(x)
}

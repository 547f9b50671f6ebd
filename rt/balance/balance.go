package balance

import (
	"sync/atomic"
	"time"
)

// Node is one candidate instance as a balancer sees it. The client owns the
// Nodes and keeps Active up to date; balancers only read them. Build copies
// what it needs, so the slice may be reused once Build returns, but the
// Active counters are read for the picker's whole life. The zero Node has
// DefaultWeight, no warm-up and no calls in flight.
type Node struct {
	Addr      string        // identity on the hash ring
	Weight    int           // configured weight; <= 0 reads as DefaultWeight (100), > MaxWeight as MaxWeight
	StartTime time.Time     // when the instance started, for warm-up; zero means long ago
	Active    *atomic.Int64 // calls in flight to this node; nil reads as 0
}

// Info is what a Pick knows about the call. The zero Info has no key and
// nothing tried. Pick only reads it, during the call.
type Info struct {
	// Key is the consistent-hash key; nil when the call has none.
	Key []byte
	// Tried lists indices (into the nodes given to Build) that this call
	// already tried or that must not be picked (e.g. an open breaker).
	Tried []int
	// Now is the time of the pick. The balancers of this package fix
	// warm-up weights at Build and ignore it; see Expirer.
	Now time.Time
}

// Picker picks one node for a call. A Picker is built for one immutable node
// list and is safe for concurrent use; Pick must not allocate. A nil *Info
// reads as an empty one.
type Picker interface {
	// Pick returns the index of the chosen node, or -1 when every node is
	// in info.Tried (or there are none).
	Pick(info *Info) int
}

// Builder makes a Picker for nodes. The client rebuilds only when the node
// list or weights change, or when the previous picker's Expires passes.
// The Builders of this package are immutable and safe for concurrent use.
type Builder interface {
	Build(nodes []Node, now time.Time) Picker
	// Name is the balancer's name as the schema and config spell it.
	Name() string
}

// Expirer is implemented by Pickers whose choices depend on time (warm-up):
// after Expires the client should build a new Picker. The zero time means
// never. The weighted pickers of this package expire every WarmUp/10 (at
// least every second) while some node is warming up, and never once all
// nodes are warm.
type Expirer interface {
	Expires() time.Time
}

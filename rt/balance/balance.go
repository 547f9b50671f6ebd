package balance

import (
	"sync/atomic"
	"time"
)

// Node is one candidate instance as a balancer sees it. The client owns the
// Nodes and keeps Active up to date; balancers only read them.
type Node struct {
	Addr      string        // identity on the hash ring
	Weight    int           // configured weight, > 0 (100 is the default)
	StartTime time.Time     // when the instance started, for warm-up; zero means long ago
	Active    *atomic.Int64 // calls in flight to this node; nil reads as 0
}

// Info is what a Pick knows about the call.
type Info struct {
	// Key is the consistent-hash key; nil when the call has none.
	Key []byte
	// Tried lists indices (into the nodes given to Build) that this call
	// already tried or that must not be picked (e.g. an open breaker).
	Tried []int
	// Now is the time of the pick (warm-up weighting).
	Now time.Time
}

// Picker picks one node for a call. A Picker is built for one immutable node
// list and is safe for concurrent use; Pick must not allocate.
type Picker interface {
	// Pick returns the index of the chosen node, or -1 when every node is
	// in info.Tried (or there are none).
	Pick(info *Info) int
}

// Builder makes a Picker for nodes. The client rebuilds only when the node
// list or weights change, or when the previous picker's Expires passes.
type Builder interface {
	Build(nodes []Node, now time.Time) Picker
	// Name is the balancer's name as the schema and config spell it.
	Name() string
}

// Expirer is implemented by Pickers whose choices depend on time (warm-up):
// after Expires the client should build a new Picker. The zero time means
// never.
type Expirer interface {
	Expires() time.Time
}

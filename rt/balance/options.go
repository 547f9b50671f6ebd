package balance

import (
	"math/rand/v2"
	"time"

	"github.com/yrpc/yrpc/hashring"
)

// Balancer names, as the schema and configuration spell them.
const (
	NameRandom             = "random"
	NameRoundRobin         = "round_robin"
	NameWeightedRoundRobin = "weighted_round_robin"
	NameLeastActive        = "least_active"
	NameP2C                = "p2c"
	NameConsistentHash     = "consistent_hash"
	// NameConsistentHashBounded is consistent_hash with BoundedLoad.
	NameConsistentHashBounded = "consistent_hash_bounded"
)

// Defaults used when a Node or Options field is zero.
const (
	DefaultWeight = 100              // weight of a Node whose Weight is <= 0
	DefaultWarmUp = 10 * time.Minute // warm-up period, as in Dubbo
	MaxWeight     = 1<<31 - 1        // larger weights read as MaxWeight
)

// Options configures a balancer. The zero value means the documented
// defaults. Options are copied by the constructors.
type Options struct {
	// WarmUp is the period over which a newly started node's weight grows
	// linearly from 1 to its configured weight. 0 means DefaultWarmUp;
	// negative disables warm-up.
	WarmUp time.Duration
	// Seed seeds each Picker's random sequence, for reproducible tests.
	// 0 means a random seed per Picker. Ignored when Source is set.
	Seed uint64
	// Source, when set, supplies the random numbers instead. It must be
	// safe for concurrent use and must not allocate.
	Source rand.Source
	// Ring configures the consistent_hash ring. Its WeightUnit 0 means
	// DefaultWeight, so a node of default weight gets Ring.Replicas (160)
	// points.
	Ring hashring.Options
	// BoundedLoad makes consistent_hash skip, clockwise, nodes whose calls
	// in flight (Active) are not below their bounded-load capacity
	// ceil(c*(total+1)*w/W) (hashring.Ring.GetBounded, c = Ring.LoadFactor,
	// default 1.25), so a hot key spills over to the next nodes instead of
	// overloading one. It costs a read of every node's Active per Pick.
	BoundedLoad bool
}

func (o *Options) warmUp() time.Duration {
	switch {
	case o.WarmUp == 0:
		return DefaultWarmUp
	case o.WarmUp < 0:
		return 0
	}
	return o.WarmUp
}

// builder is the one Builder implementation: a name, the options and the
// function that builds the balancer's Picker.
type builder struct {
	name  string
	opts  Options
	build func(nodes []Node, now time.Time, o *Options) Picker
}

func (b *builder) Build(nodes []Node, now time.Time) Picker { return b.build(nodes, now, &b.opts) }
func (b *builder) Name() string                             { return b.name }

// NewRandom returns the "random" balancer: a weighted random choice (with
// warm-up), uniform when all weights are equal.
func NewRandom(opts Options) Builder { return &builder{NameRandom, opts, buildRandom} }

// NewRoundRobin returns the "round_robin" balancer: nodes in turn, from a
// random starting node, ignoring weights.
func NewRoundRobin(opts Options) Builder { return &builder{NameRoundRobin, opts, buildRoundRobin} }

// NewWeightedRoundRobin returns the "weighted_round_robin" balancer:
// nginx's smooth weighted round robin (with warm-up), which interleaves
// the nodes instead of sending bursts to the heaviest.
func NewWeightedRoundRobin(opts Options) Builder {
	return &builder{NameWeightedRoundRobin, opts, buildWRR}
}

// NewLeastActive returns the "least_active" balancer (Dubbo's): the node
// with the fewest calls in flight, ties broken by a weighted random choice.
func NewLeastActive(opts Options) Builder { return &builder{NameLeastActive, opts, buildLeastActive} }

// NewP2C returns the "p2c" balancer: two distinct nodes drawn at random by
// weight, and the one with the fewer calls in flight per unit of weight.
func NewP2C(opts Options) Builder { return &builder{NameP2C, opts, buildP2C} }

// NewConsistentHash returns the "consistent_hash" balancer: Info.Key on a
// hashring of the nodes' addresses and configured weights; tried nodes are
// skipped clockwise (hashring.Ring.GetN order). Calls without a key (nil
// Key) get a weighted random node. With Options.BoundedLoad, nodes at their
// bounded-load capacity are skipped too.
func NewConsistentHash(opts Options) Builder {
	name := NameConsistentHash
	if opts.BoundedLoad {
		name = NameConsistentHashBounded
	}
	return &builder{name, opts, buildConsistentHash}
}

// New returns the balancer called name with opts, and false when there is
// no such balancer. The empty name is not a balancer: the client picks its
// default for it.
func New(name string, opts Options) (Builder, bool) {
	switch name {
	case NameRandom:
		return NewRandom(opts), true
	case NameRoundRobin:
		return NewRoundRobin(opts), true
	case NameWeightedRoundRobin:
		return NewWeightedRoundRobin(opts), true
	case NameLeastActive:
		return NewLeastActive(opts), true
	case NameP2C:
		return NewP2C(opts), true
	case NameConsistentHash:
		return NewConsistentHash(opts), true
	case NameConsistentHashBounded:
		opts.BoundedLoad = true
		return NewConsistentHash(opts), true
	}
	return nil, false
}

// Lookup returns the balancer called name with default Options.
func Lookup(name string) (Builder, bool) { return New(name, Options{}) }

// Names returns the names of all balancers, in a fixed order.
func Names() []string {
	return []string{NameRandom, NameRoundRobin, NameWeightedRoundRobin, NameLeastActive, NameP2C, NameConsistentHash, NameConsistentHashBounded}
}

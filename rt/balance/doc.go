// Package balance chooses one instance among the candidates of a call:
// random (weighted), round robin, smooth weighted round robin, least
// active, power of two choices, and consistent hash on the call's key.
//
// A Builder makes an immutable Picker for a node list; the client calls
// Pick once per attempt with the indices already tried, and rebuilds the
// Picker when the list changes or when the Picker's Expires passes.
// Builders are looked up by the names the schema spells (Lookup, New) or
// made by their constructors (NewRandom, ...), all configured by Options.
//
// # Warm-up
//
// As in Dubbo, an instance that started less than Options.WarmUp ago
// (default 10 min) gets a share of its weight that grows linearly with its
// uptime: weight*uptime/WarmUp, at least 1. The weighted pickers (random,
// weighted_round_robin, least_active, p2c) fix these weights when they are
// built and implement Expirer so the client rebuilds them as the weights
// grow. round_robin ignores weights; consistent_hash uses the configured
// weights only, because a weight that changes with uptime would move keys
// between instances.
//
// # Consistent hash
//
// consistent_hash places Info.Key on a hashring (package hashring) of the
// nodes' addresses, 160 points per DefaultWeight of configured weight, so
// a key keeps its node while the membership is stable and only about 1/n
// of the keys move when a node joins or leaves. A retry walks clockwise to
// the next distinct untried node. Options.BoundedLoad adds consistent
// hashing with bounded loads on the nodes' calls in flight.
//
// # Tried
//
// Every Picker honours Info.Tried: it never returns an index listed there,
// and returns -1 when all nodes are listed. Random choices are then made
// among the remaining nodes with their weights.
//
// # Randomness
//
// Pickers draw numbers from Options.Source when set, otherwise from a
// per-Picker lock-free SplitMix64 sequence seeded with Options.Seed (a
// random seed when 0). No package-level random state is used or changed.
package balance

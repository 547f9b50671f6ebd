//go:build race

package wire

// raceEnabled: under the race detector sync.Pool drops some of what is
// put in it, so counts of allocations that rely on a pool do not hold.
const raceEnabled = true

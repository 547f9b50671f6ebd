//go:build race

package sock

// raceEnabled: the race detector makes sync.Pool drop values at random,
// which changes allocation counts.
const raceEnabled = true

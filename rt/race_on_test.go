//go:build race

package rt_test

// raceEnabled: the race detector makes sync.Pool drop values at random,
// which changes allocation counts.
const raceEnabled = true

//go:build race

package hellorpc_test

// raceEnabled: the race detector changes allocation counts.
const raceEnabled = true

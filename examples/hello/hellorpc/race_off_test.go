//go:build !race

package hellorpc_test

const raceEnabled = false

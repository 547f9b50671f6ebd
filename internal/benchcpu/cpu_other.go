//go:build !linux

package benchcpu

import "testing"

// Thread reports nothing where thread CPU time is not available.
func Thread(*testing.B) func() { return func() {} }

// Process reports nothing where process CPU time is not measured.
func Process(*testing.B) func() { return func() {} }

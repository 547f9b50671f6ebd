//go:build !linux

package limiter

import "testing"

// reportCPU reports nothing where thread CPU time is not available.
func reportCPU(*testing.B) func() { return func() {} }

// reportProcCPU reports nothing where process CPU time is not measured.
func reportProcCPU(*testing.B) func() { return func() {} }

//go:build !yrpc

package impl

// extra returns the implementations that need build tags; without the
// "yrpc" tag there are none.
func extra() []*Impl { return nil }

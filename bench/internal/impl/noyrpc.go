//go:build !yrpc

package impl

// extra returns the implementations that need build tags, plaintext and
// TLS; without the "yrpc" tag there are none.
func extra() (plain, secure []*Impl) { return nil, nil }

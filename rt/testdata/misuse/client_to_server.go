//go:build ignore

// A client option given to NewServer: this must not compile.
package main

import "github.com/yrpc/yrpc/rt"

func main() { _ = rt.NewServer(rt.WithPoolSize(2)) }

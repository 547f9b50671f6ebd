//go:build ignore

// A server option given to NewClient: this must not compile.
package main

import "github.com/yrpc/yrpc/rt"

func main() { _, _ = rt.NewClient(rt.WithAddrs("127.0.0.1:1"), rt.WithWeight(5)) }

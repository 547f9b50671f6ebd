//go:build ignore

// Options of both kinds where they belong, and the shared ones on both
// sides: this compiles (the control of the misuse files beside it).
package main

import (
	"time"

	"github.com/yrpc/yrpc/rt"
)

func main() {
	shared := []rt.Option{rt.WithApp("a"), rt.WithHeartbeat(time.Second)}
	_ = rt.NewServer(rt.WithWeight(5), shared[0], shared[1])
	_, _ = rt.NewClient(rt.WithAddrs("127.0.0.1:1"), rt.WithPoolSize(2), shared[0], shared[1])
}

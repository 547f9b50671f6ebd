package balance_test

import (
	"fmt"
	"time"

	"github.com/yrpc/yrpc/rt/balance"
)

func Example() {
	b, ok := balance.Lookup("weighted_round_robin")
	if !ok {
		panic("no such balancer")
	}
	nodes := []balance.Node{
		{Addr: "10.0.0.1:7000", Weight: 500},
		{Addr: "10.0.0.2:7000", Weight: 100},
		{Addr: "10.0.0.3:7000", Weight: 100},
	}
	p := b.Build(nodes, time.Now())
	var seq []int
	for range 7 {
		seq = append(seq, p.Pick(&balance.Info{}))
	}
	fmt.Println(seq)

	// A retry skips the nodes already tried; -1 means none is left.
	fmt.Println(p.Pick(&balance.Info{Tried: []int{0, 1, 2}}))
	// Output:
	// [0 0 1 0 2 0 0]
	// -1
}

func ExampleNewConsistentHash() {
	b := balance.NewConsistentHash(balance.Options{})
	nodes := []balance.Node{{Addr: "10.0.0.1:7000"}, {Addr: "10.0.0.2:7000"}, {Addr: "10.0.0.3:7000"}}
	p := b.Build(nodes, time.Now())

	first := p.Pick(&balance.Info{Key: []byte("user:42")})
	again := p.Pick(&balance.Info{Key: []byte("user:42")})
	retry := p.Pick(&balance.Info{Key: []byte("user:42"), Tried: []int{first}})
	fmt.Println(first == again, retry != first)
	// Output:
	// true true
}

func ExampleExpirer() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	nodes := []balance.Node{
		{Addr: "10.0.0.1:7000", Weight: 100},
		{Addr: "10.0.0.2:7000", Weight: 100, StartTime: now.Add(-time.Minute)}, // warming up
	}
	p := balance.NewRandom(balance.Options{WarmUp: 10 * time.Minute}).Build(nodes, now)
	// The new node has 10 % of its weight for now; rebuild at Expires.
	fmt.Println(p.(balance.Expirer).Expires().Sub(now))
	// Output:
	// 1m0s
}

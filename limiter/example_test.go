package limiter_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/yrpc/yrpc/limiter"
)

func ExampleBucket() {
	// 10 calls per second, bursts of 2; time is a parameter.
	b := limiter.NewBucket(10, 2)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, ms := range []int{0, 0, 0, 50, 100, 150} {
		now := start.Add(time.Duration(ms) * time.Millisecond)
		fmt.Printf("t=%3dms allowed=%v\n", ms, b.Allow(now))
	}
	// Output:
	// t=  0ms allowed=true
	// t=  0ms allowed=true
	// t=  0ms allowed=false
	// t= 50ms allowed=false
	// t=100ms allowed=true
	// t=150ms allowed=false
}

func ExampleBucket_WaitN() {
	b := limiter.NewBucket(1.0/3600, 1) // one per hour
	b.Allow(time.Now())

	// The next token is an hour away: a one-minute deadline fails at once,
	// without sleeping.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := b.Wait(ctx, limiter.SystemClock{})
	fmt.Println(errors.Is(err, limiter.ErrDeadline))
	// Output:
	// true
}

func ExampleKeyed() {
	// Per client IP: connections from one host share a bucket.
	k := limiter.NewKeyed(limiter.KeyedOptions{Rate: 1, Burst: 1})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, remote := range []string{"192.0.2.1:50001", "192.0.2.1:50002", "[2001:db8::7]:50001"} {
		ip := limiter.ClientIP(remote)
		fmt.Println(ip, k.Allow(ip, now))
	}
	// Output:
	// 192.0.2.1 true
	// 192.0.2.1 false
	// 2001:db8::7 true
}

func ExampleConcurrency() {
	c := limiter.NewConcurrency(2)
	fmt.Println(c.Acquire(), c.Acquire(), c.Acquire(), c.InFlight())
	c.Release()
	fmt.Println(c.Acquire(), c.InFlight())
	// Output:
	// true true false 2
	// true 2
}

func ExampleClientKey() {
	// Computed once per connection: IPv6 clients share a bucket per /64.
	for _, remote := range []string{"192.0.2.1:50001", "[2001:db8:1:2::7]:50001", "[2001:db8:1:2::8]:50002"} {
		fmt.Println(limiter.ClientKey(remote))
	}
	// Output:
	// 192.0.2.1
	// 2001:db8:1:2::/64
	// 2001:db8:1:2::/64
}

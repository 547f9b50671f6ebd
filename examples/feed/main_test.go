package main

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/memnet"
)

// Example runs the feed's server and client in one process on an
// in-memory network.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n := memnet.New()
	lis, err := n.Listen("feed:1")
	if err != nil {
		panic(err)
	}
	if err := run(ctx, os.Stdout, lis, rt.WithAddrs("feed:1"), rt.WithDialer(n.Dial)); err != nil {
		panic(err)
	}
	// Output:
	// published 3 events, last seq 3
	// live   news #1: streams are here
	// live   news #2: flow control keeps memory bounded
	// live   news #3: cancel reaches the server
	// live subscription ended: Canceled
	// replay news #2: flow control keeps memory bounded
	// replay news #3: cancel reaches the server
	// replay ended: io.EOF, trailer sent=2
	// chat   server: HELLO
	// chat   server: HOW ARE THE STREAMS?
}

// TestRunTCP runs the feed as main does, over loopback TCP, and checks
// that nothing is left running.
func TestRunTCP(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := run(ctx, &out, lis, rt.WithAddrs(lis.Addr().String())); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "replay ended: io.EOF, trailer sent=2") {
		t.Fatalf("output:\n%s", out.String())
	}
}

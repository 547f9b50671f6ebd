package rt_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
)

// shutdownRound serves the test service from two providers on loopback
// TCP to a client of both addresses (no registry), loads them with
// non-idempotent calls from callers goroutines, shuts the first down
// gracefully, and returns the calls that failed.
func shutdownRound(t *testing.T, callers int) []error {
	t.Helper()
	var addrs []string
	var srvs []*rt.Server
	var served []chan error
	for range 2 {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := rt.NewServer()
		srv.RegisterService(&testDesc, newTestImpl())
		done := make(chan error, 1)
		go func() { done <- srv.Serve(context.Background(), lis) }()
		addrs, srvs, served = append(addrs, lis.Addr().String()), append(srvs, srv), append(served, done)
	}
	cli, err := rt.NewClient(rt.WithAddrs(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cli.Close()
		srvs[1].Close()
		<-served[1]
	}()

	var mu sync.Mutex
	var failed []error
	var ok atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, err := call(ctx, cli, &testDesc, 0, "x")
				cancel()
				if err != nil {
					mu.Lock()
					failed = append(failed, err)
					mu.Unlock()
					continue
				}
				ok.Add(1)
			}
		}()
	}
	until(t, "200 calls answered", func() bool { return ok.Load() >= 200 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srvs[0].Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served[0]; !errors.Is(err, rt.ErrServerClosed) {
		t.Fatalf("Serve returned %v", err)
	}
	after := ok.Load()
	until(t, "200 more calls answered by the remaining provider", func() bool { return ok.Load() >= after+200 })
	close(stop)
	wg.Wait()
	return failed
}

// A graceful shutdown fails no call, even with no registry to take the
// provider out of the consumers' view first: a call that reaches a
// provider after its GOAWAY is refused as never run, and one the provider
// never read is after the GOAWAY's last request id; both are retried on
// the other provider. (Before the GOAWAY named that id, requests the
// server had not read were lost with the connection and failed as
// possibly run: this failed in the first round on every run.)
func TestGracefulShutdownFailsNoCallWithoutRegistry(t *testing.T) {
	checkLeaks(t)
	const rounds = 20
	for i := range rounds {
		if failed := shutdownRound(t, 32); len(failed) > 0 {
			kinds := map[string]int{}
			for _, err := range failed {
				kinds[err.Error()]++
			}
			t.Fatalf("round %d: %d calls failed during a graceful shutdown: %v", i, len(failed), kinds)
		}
	}
}

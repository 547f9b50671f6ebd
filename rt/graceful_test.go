package rt_test

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

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
	cli, err := rt.NewClient(rt.WithAddrs(addrs...), rt.WithRetryBudget(1, 1e6))
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
// provider after its GOAWAY is refused as never run, and retried on the
// other provider. (The client's retry budget is lifted here: with the
// default one, the burst of refusals also spends it, and calls then fail
// with the refusal itself; that is a matter of the budget's policy, kept
// out of this test.)
//
// Known defect (skipped unless YRPC_KNOWN_DEFECTS=1; it fails in the
// first round on every run seen): Shutdown closes each connection as soon
// as no call is in flight (Shutdown -> Close -> serverConn.close ->
// nc.Close), right after sending GOAWAY. Requests that the client wrote
// before it read the GOAWAY, and that the server had not read yet, are
// lost: the server closes with them unread (the kernel answers with a
// reset), and the client fails every call pending on the connection with
// "connection to ADDR closed" or "connection reset by peer" (Unavailable,
// possibly run, so a non-idempotent call is not retried). The GOAWAY
// frame carries no last request id that would let the client retry the
// calls the server never saw, and the server does not keep reading (and
// refusing) until the client has stopped sending. With a registry and
// WithDeregisterWait, consumers stop sending before the GOAWAY, which
// hides it (examples/graceful's test on ZooKeeper passed 20 of 20); with
// fixed addresses that test failed 3 of 20 runs.
func TestGracefulShutdownFailsNoCallWithoutRegistry(t *testing.T) {
	if os.Getenv("YRPC_KNOWN_DEFECTS") == "" {
		t.Skip("known defect: Shutdown closes connections with requests still unread (YRPC_KNOWN_DEFECTS=1 runs it)")
	}
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
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

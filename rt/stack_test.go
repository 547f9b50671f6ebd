package rt_test

import (
	"context"
	"net"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/wire"
)

// waitingStackBudget bounds the stack that one call waiting for its
// answer keeps for the garbage collector to scan at every cycle, its
// caller's frame included, on 64-bit platforms; waitingStackBudgetRace
// with the race detector, whose instrumentation makes frames larger.
// Invoke and the functions under it make their failures out of line so
// that their frames stay small: 1,976 bytes per call by Invoke and 2,073
// by InvokeNew in this test with go1.26 on amd64 (3,222 and 3,358 with
// -race), against 2,609 (3,992) by Invoke when they were made in place.
const (
	waitingStackBudget     = 2200
	waitingStackBudgetRace = 3500
)

// TestWaitingCallStack parks calls on a server that never answers and
// measures the stack that the collector scans per waiting call: a client
// with thousands of calls in flight scans that much, times thousands,
// at every cycle. Calls by Invoke and by InvokeNew (generated XxxClient
// methods) each.
func TestWaitingCallStack(t *testing.T) {
	t.Run("Invoke", func(t *testing.T) {
		waitingCallStack(t, func(ctx context.Context, cli *rt.Client) {
			_ = cli.Invoke(ctx, &aliasDesc, 0, &aliasMsg{S: "x"}, new(aliasMsg))
		})
	})
	t.Run("InvokeNew", func(t *testing.T) {
		waitingCallStack(t, func(ctx context.Context, cli *rt.Client) {
			_, _ = rt.InvokeNew(ctx, cli, &aliasDesc, 0, &aliasMsg{S: "x"})
		})
	})
}

func waitingCallStack(t *testing.T, invoke func(context.Context, *rt.Client)) {
	stackTest(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	requests := make(chan struct{}, 1)
	go silentPeer(lis, requests)
	cli := aliasClient(t, lis.Addr().String())

	const n = 200
	base := scannedStack(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { invoke(ctx, cli) })
	}
	timeout := time.After(10 * time.Second) // a bound, should the calls not arrive
	for i := 0; i < n; i++ {
		select {
		case <-requests:
		case <-timeout:
			cancel()
			wg.Wait()
			t.Fatalf("the server got %d of %d requests", i, n)
		}
	}
	waiting := scannedStack(t)
	cancel()
	wg.Wait()
	checkStack(t, "waiting calls", n, base, waiting, waitingStackBudget, waitingStackBudgetRace)
}

// stackTest skips a stack budget test where its budgets do not apply,
// and checks that the test leaks no goroutine.
func stackTest(t *testing.T) {
	t.Helper()
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("the budgets are for 64-bit platforms")
	}
	checkLeaks(t)
}

// checkStack logs the stack scanned per each of n things (calls, handlers)
// that held it, from the collections before (base) and while (got), and
// fails over budget (raceBudget with the race detector).
func checkStack(t *testing.T, what string, n int, base, got uint64, budget, raceBudget int64) {
	t.Helper()
	per := (int64(got) - int64(base)) / int64(n)
	t.Logf("stack scanned: %d bytes with %d %s, %d without: %d bytes each", got, n, what, base, per)
	if raceEnabled {
		budget = raceBudget
	}
	if per > budget {
		t.Errorf("each of %d %s holds %d bytes of stack for the collector to scan, over the budget of %d", n, what, per, budget)
	}
}

// scannedStack runs a collection and returns the bytes of stack it
// scanned.
func scannedStack(t *testing.T) uint64 {
	t.Helper()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/scan/stack:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Skip("this Go has no /gc/scan/stack:bytes")
	}
	return s[0].Value.Uint64()
}

// silentPeer is a yrpc server that reads requests and never answers: it
// signals each one on requests.
func silentPeer(lis net.Listener, requests chan<- struct{}) {
	fakePeer(lis, func(_ net.Conn, f *wire.Frame) bool {
		if f.Type == wire.TypeRequest {
			requests <- struct{}{}
		}
		return true
	})
}

// blockedHandlerBudget bounds, as waitingStackBudget does, the stack that
// one handler blocked in its work holds, its own frame and the server's
// under it: serve keeps the answer out of line, so 843 bytes in this test
// with go1.26 on amd64 (1,144 with -race), against 1,265 (1,824) when the
// answer was made in serve's frame.
const (
	blockedHandlerBudget     = 1000
	blockedHandlerBudgetRace = 1450
)

// TestBlockedHandlerStack blocks oneway handlers (each its own goroutine
// once the watchdog moves the reading on) and measures the stack that the
// collector scans per blocked handler.
func TestBlockedHandlerStack(t *testing.T) {
	stackTest(t)
	const n = 100
	started, release := make(chan struct{}, n), make(chan struct{})
	desc := rt.ServiceDesc{
		Name: "test.Block",
		Methods: []rt.MethodDesc{{
			Name: "Wait", FullName: "test.Block/Wait", ID: 0x2101, Oneway: true,
			NewRequest: func() rt.Message { return new(aliasMsg) },
			Handle: func(any, context.Context, rt.Message) (rt.Message, error) {
				started <- struct{}{}
				<-release
				return nil, nil
			},
		}},
		MethodIndex: func(id uint32) int {
			if id == 0x2101 {
				return 0
			}
			return -1
		},
	}
	cli := aliasClient(t, aliasServe(t, &desc))
	base := scannedStack(t)
	for range n {
		if err := cli.Invoke(context.Background(), &desc, 0, &aliasMsg{S: "x"}, nil); err != nil {
			close(release)
			t.Fatal(err)
		}
	}
	timeout := time.After(10 * time.Second) // a bound, should the handlers not start
	for i := 0; i < n; i++ {
		select {
		case <-started:
		case <-timeout:
			close(release)
			t.Fatalf("%d of %d handlers started", i, n)
		}
	}
	blocked := scannedStack(t)
	close(release)
	checkStack(t, "blocked handlers", n, base, blocked, blockedHandlerBudget, blockedHandlerBudgetRace)
}

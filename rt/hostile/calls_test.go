//go:build linux

package hostile

import (
	"context"
	"encoding/binary"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/wire"
)

// 100,000 calls in flight on one connection: at most
// Limits.MaxCallsPerConn run at once, the rest are refused at once with
// ResourceExhausted marked as not run, and the heap stays under 128 MiB
// (issue 11, item 4).
func TestCallsInFlight(t *testing.T) {
	const n = 100_000
	limit := rt.DefaultMaxCallsPerConn
	tg := newTarget(t, 128*mib)
	frames := make([]byte, 0, n*len(hello(1, nameBlock)))
	for i := range n {
		frames = append(frames, hello(uint32(i+1), nameBlock)...)
	}
	c, err := tg.open(attackerIP(0))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	go func() { _, _ = c.Write(frames) }()
	r := wire.NewReader(c, wire.ReaderOptions{})
	_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
	for i := 0; i < n-limit; i++ {
		f, err := r.Next()
		if err != nil {
			t.Fatalf("after %d refusals: %v (%d calls running)", i, err, tg.held.running.Load())
		}
		if rt.Code(f.Status) != rt.ResourceExhausted || !refused(f) {
			t.Fatalf("answer %d: status %v, refused mark %v (%q); want ResourceExhausted, refused", i, rt.Code(f.Status), refused(f), f.Body)
		}
	}
	refusedIn := time.Since(start)
	if !poll(closeBound, func() bool { return tg.held.running.Load() == int64(limit) }) {
		t.Errorf("%d calls running after the refusals, want Limits.MaxCallsPerConn = %d", tg.held.running.Load(), limit)
	}
	held := tg.heap.live()
	tg.held.releaseBlocked()
	for i := range limit {
		f, err := r.Next()
		if err != nil {
			t.Fatalf("after %d of %d released calls answered: %v", i, limit, err)
		}
		if f.Status != 0 {
			t.Fatalf("released call %d: status %v (%q)", f.ID, rt.Code(f.Status), f.Body)
		}
	}
	t.Logf("%d calls sent on one connection: %d refused in %v (%.1f µs each), at most %d ran at once (limit %d), heap in use after a GC while they ran %.1f MiB; the %d that ran answered once released",
		n, n-limit, refusedIn.Round(time.Millisecond), float64(refusedIn.Microseconds())/float64(n-limit), tg.held.peak.Load(), limit, mibs(held), limit)
	if p := tg.held.peak.Load(); p > int64(limit) {
		t.Errorf("%d calls ran at once, over Limits.MaxCallsPerConn = %d", p, limit)
	}
	tg.check()
}

// Calls in flight hold their requests: a connection that pipelines large
// requests to a handler that takes its time must not make the server hold
// them all (Limits.MaxCallsPerConn bounds their number, not their bytes).
// Each request here is SayHello("block") with a 1 MiB unknown field, which
// the decoder skips but keeps (a request's strings share one copy of its
// body).
func TestLargeRequestsInFlight(t *testing.T) {
	const n, size = 200, 1 << 20
	tg := newTarget(t, heapLimit)
	body := (&greeterrpc.HelloRequest{Name: nameBlock}).MarshalAppend(nil)
	body = field(body, 15, size, make([]byte, size))
	frame := request(1, sayHello, nil, body)
	c, err := tg.open(attackerIP(0))
	if err != nil {
		t.Fatal(err)
	}
	var refusals atomic.Int64
	done := make(chan struct{})
	go func() { // count the answers: refusals, until the connection closes
		defer close(done)
		r := wire.NewReader(c, wire.ReaderOptions{})
		for {
			f, err := r.Next()
			if err != nil {
				return
			}
			if f.Status != 0 {
				refusals.Add(1)
			}
		}
	}()
	defer func() { c.Close(); <-done }()
	blocked := make(chan struct{}) // closed when a write blocks: the server stopped reading
	go func() {
		for i := range n {
			binary.LittleEndian.PutUint32(frame[5:], uint32(i+1)) // the request id
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := c.Write(frame); err != nil {
				close(blocked)
				return
			}
		}
	}()
	start := time.Now()
	poll(10*time.Second, func() bool {
		return tg.held.running.Load()+refusals.Load() == n || tg.heap.over() || chanClosed(blocked)
	})
	live := tg.heap.live()
	t.Logf("%d requests of %d MiB pipelined on one connection to a handler that holds them: after %v %d calls running, %d refused, the attacker's writes blocked: %v; heap in use after a GC %.1f MiB",
		n, size/mib, time.Since(start).Round(time.Millisecond), tg.held.running.Load(), refusals.Load(), chanClosed(blocked), mibs(live))
	if live > heapLimit {
		t.Errorf("%d calls in flight on one connection hold %.1f MiB of requests: Limits.MaxCallsPerConn bounds their number, nothing bounds their bytes", tg.held.running.Load(), mibs(live))
	}
	tg.held.releaseBlocked()
	tg.check()
}

// chanClosed reports whether ch is closed.
func chanClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A client that pipelines requests and never reads the answers: the
// server stops reading it once Limits.MaxBufferedBytes of answers wait,
// so that the attacker's writes block long before the 1 GiB it tries to
// send; the write timeout then closes the connection; the heap stays
// under 64 MiB (issue 11, item 2).
func TestResponsesNeverRead(t *testing.T) {
	const (
		writeTimeout = 300 * time.Millisecond
		total        = 1 << 30
	)
	tg := newTarget(t, heapLimit, rt.WithWriteTimeout(writeTimeout))
	var chunk []byte // about 1 MiB of requests for 1 KiB answers
	for id := uint32(1); len(chunk) < 1<<20; id++ {
		chunk = append(chunk, hello(id, strings.Repeat("r", 1<<10))...)
	}
	c, err := tg.open(attackerIP(0))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	sent := 0
	var werr error
	for sent < total && werr == nil {
		// A write that makes no progress for 10 s has blocked for
		// good: the server stopped reading and did not close.
		_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		var n int
		n, werr = c.Write(chunk)
		sent += n
	}
	stopped := time.Since(start)
	took, got, ok := awaitClose(c, 10*time.Second)
	t.Logf("tried to send %d MiB of requests: sent %.1f MiB in %v, then the write failed (%v); %.1f MiB of answers left to read; connection closed by the server: %v (%v later)",
		total/mib, mibs(uint64(sent)), stopped.Round(time.Millisecond), werr, mibs(uint64(got)), ok, took.Round(time.Millisecond))
	switch {
	case werr == nil:
		t.Errorf("the attacker sent all %d MiB: the server kept reading a client that reads nothing", total/mib)
	case !closed(werr):
		t.Errorf("the attacker's write blocked for 10 s: the server never closed the connection (write timeout %v)", writeTimeout)
	case !ok:
		t.Errorf("connection not closed by the server")
	}
	if sent > 64*mib {
		t.Errorf("the server read %.1f MiB of requests from a client that reads nothing", mibs(uint64(sent)))
	}
	tg.check()
}

// A call whose metadata is over the server's limit fails locally with
// InvalidArgument, and 50 calls in flight on the same client's connection
// do not fail (issue 11, item 3). The same holds the other way: a handler
// that answers with metadata or a response over the client's limits fails
// its own call only.
func TestOneOversizedCall(t *testing.T) {
	const inFlight = 50
	withMD := func(size int) context.Context {
		return rt.WithMetadata(context.Background(), "big", strings.Repeat("m", size))
	}
	local := func(t *testing.T, err error) {
		if rt.CodeOf(err) != rt.InvalidArgument || rt.IsRemote(err) {
			t.Errorf("oversized call: %v (code %v, remote %v), want a local InvalidArgument", err, rt.CodeOf(err), rt.IsRemote(err))
		}
	}
	cases := []struct {
		name  string
		opts  []rt.ServerOption
		ctx   context.Context
		req   string
		check func(t *testing.T, err error) // of the oversized call's error
	}{
		{"request metadata of 20 KiB, default limit", nil, withMD(20 << 10), "oversized", local},
		{"request metadata of 4 KiB, server limit 1 KiB", []rt.ServerOption{rt.WithMaxMetadataSize(1 << 10)}, withMD(4 << 10), "oversized", local},
		{"response metadata of 20 KiB, default limit", nil, context.Background(), nameBigMD, func(*testing.T, error) {}},
		{"response of 5 MiB, default limit", nil, context.Background(), nameBigReply, func(*testing.T, error) {}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg := newTarget(t, heapLimit, tc.opts...)
			cli, err := rt.NewClient(rt.WithAddrs(tg.addr))
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			gc := greeterrpc.NewGreeterClient(cli)
			if err := greet(gc, "warm"); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var failed atomic.Int64
			var mu sync.Mutex
			var first error
			for range inFlight {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := greet(gc, nameBlock); err != nil {
						failed.Add(1)
						mu.Lock()
						if first == nil {
							first = err
						}
						mu.Unlock()
					}
				}()
			}
			if !poll(closeBound, func() bool { return tg.held.running.Load() == inFlight }) {
				t.Fatalf("%d of %d calls in flight", tg.held.running.Load(), inFlight)
			}
			ctx, cancel := context.WithTimeout(tc.ctx, callTimeout)
			defer cancel()
			start := time.Now()
			_, err = gc.SayHello(ctx, &greeterrpc.HelloRequest{Name: tc.req})
			took := time.Since(start)
			tg.held.releaseBlocked()
			wg.Wait()
			t.Logf("the oversized call: %v (remote %v) after %v; %d of %d calls in flight on the same connection failed",
				err, rt.IsRemote(err), took.Round(time.Microsecond), failed.Load(), inFlight)
			tc.check(t, err)
			if failed.Load() > 0 {
				t.Errorf("%d of %d calls in flight on the same connection failed; first: %v", failed.Load(), inFlight, first)
			}
			if err := greet(gc, "after"); err != nil {
				t.Errorf("a call on the same client afterwards: %v", err)
			}
			tg.check()
		})
	}
}

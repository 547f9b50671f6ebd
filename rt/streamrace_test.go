package rt_test

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
)

// Streams used from more than one goroutine: a handler's goroutine that
// outlives it, and the sending and receiving goroutines of both ends.

// raceStreams is how many streams each of these tests opens per
// transport, raceConc of them at once (so that the calls' pooled
// buffers change hands between them).
const raceStreams, raceConc = 64, 4

// A goroutine that a stream handler started is in RecvMsg (waiting for a
// message or reading one, the client sending on) when the handler
// returns: its RecvMsg ends with FailedPrecondition naming the method,
// as a RecvMsg made after the return does, over yrpc and gRPC. Over
// gRPC it used to end with "Canceled: context canceled", or read on into
// the request buffer the call had given back to its pool while another
// call took it (go test -race saw the two).
func TestRecvMsgBlockedWhenHandlerReturns(t *testing.T) {
	leftErrs := make(chan error, 2*raceStreams)
	desc := oneStream("test.Left", "Read", 0x3401, rt.BidiStreaming, func(ss rt.ServerStreamer) error {
		var m msg
		if err := ss.RecvMsg(&m); err != nil {
			return err
		}
		reading := make(chan struct{})
		go func() {
			close(reading)
			for {
				var m msg
				if err := ss.RecvMsg(&m); err != nil {
					leftErrs <- err
					return
				}
			}
		}()
		<-reading
		return nil
	})
	body := strings.Repeat("r", 8<<10)
	for name, cli := range yrpcAndGRPC(t, &desc) {
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t)
			spread(raceStreams, raceConc, func(_, n int) {
				for range n {
					cs, err := cli.NewStream(ctx, &desc, 0)
					if err == nil {
						err = cs.SendMsg(&msg{S: body})
					}
					if err != nil {
						t.Errorf("open: %v", err)
						return
					}
					sent := make(chan error, 1)
					go func() {
						for {
							if err := cs.SendMsg(&msg{S: body}); err != nil {
								sent <- err
								return
							}
						}
					}()
					var m msg
					if err := cs.RecvMsg(&m); err != io.EOF {
						t.Errorf("client RecvMsg = %v, want io.EOF", err)
					}
					select {
					case <-sent:
					case <-ctx.Done():
						t.Errorf("the client's SendMsg still sends after the stream ended")
						return
					}
				}
			})
			for range raceStreams {
				select {
				case err := <-leftErrs:
					if rt.CodeOf(err) != rt.FailedPrecondition || !strings.Contains(err.Error(), "test.Left/Read: RecvMsg after the stream's handler returned") {
						t.Errorf("the handler's goroutine's RecvMsg = %v; want FailedPrecondition naming the method and RecvMsg", err)
					}
				case <-ctx.Done():
					t.Fatalf("a RecvMsg of a handler's goroutine never returned")
				}
			}
		})
	}
}

// sendResult is what a handler's goroutine that kept sending saw: its
// stream's key, how many SendMsg calls succeeded, and the error of the
// one that did not.
type sendResult struct {
	key string
	n   int
	err error
}

// A goroutine that a stream handler started keeps sending when the
// handler returns: its SendMsg ends with FailedPrecondition naming the
// method, and every message it reported sent reaches the client before
// the stream's end, over yrpc and gRPC.
func TestSendMsgRacingHandlerReturn(t *testing.T) {
	results := make(chan sendResult, 2*raceStreams)
	desc := oneStream("test.Left", "Write", 0x3402, rt.ServerStreaming, func(ss rt.ServerStreamer) error {
		var req msg
		if err := ss.RecvMsg(&req); err != nil {
			return err
		}
		first := make(chan struct{})
		go func() {
			for n := 0; ; n++ {
				if err := ss.SendMsg(&msg{S: strconv.Itoa(n)}); err != nil {
					results <- sendResult{req.S, n, err}
					if n == 0 {
						close(first)
					}
					return
				}
				if n == 0 {
					close(first)
				}
			}
		}()
		<-first
		return nil
	})
	for name, cli := range yrpcAndGRPC(t, &desc) {
		t.Run(name, func(t *testing.T) {
			// A bound on the whole run, which only catches a hang, and a
			// deadline per stream: under -race on a loaded machine the
			// streams together may take longer than one's.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var mu sync.Mutex
			got := map[string]int{}
			spread(raceStreams, raceConc, func(i, n int) {
				for j := range n {
					key := strconv.Itoa(i) + "." + strconv.Itoa(j)
					sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
					k, err := countStream(sctx, cli, &desc, key)
					scancel()
					if err != nil {
						t.Errorf("stream %s: %v", key, err)
						return
					}
					mu.Lock()
					got[key] = k
					mu.Unlock()
				}
			})
			for range raceStreams {
				select {
				case r := <-results:
					if rt.CodeOf(r.err) != rt.FailedPrecondition || !strings.Contains(r.err.Error(), "test.Left/Write: SendMsg after the stream's handler returned") {
						t.Errorf("the handler's goroutine's SendMsg = %v; want FailedPrecondition naming the method and SendMsg", r.err)
					}
					// A message whose SendMsg failed may still have gone
					// out (over gRPC, one waiting for credit), not the
					// reverse.
					mu.Lock()
					k := got[r.key]
					mu.Unlock()
					if k < r.n || k > r.n+1 {
						t.Errorf("stream %s: %d messages reported sent, %d received", r.key, r.n, k)
					}
				case <-ctx.Done():
					t.Fatalf("a SendMsg of a handler's goroutine never returned")
				}
			}
		})
	}
}

// countStream opens a stream of desc's one method on cli, sends key and
// half-closes, and receives messages "0", "1", ... to io.EOF; it returns
// how many came.
func countStream(ctx context.Context, cli *rt.Client, desc *rt.ServiceDesc, key string) (int, error) {
	cs, err := cli.NewStream(ctx, desc, 0)
	if err == nil {
		err = cs.SendMsg(&msg{S: key})
	}
	if err == nil {
		err = cs.CloseSend()
	}
	if err != nil {
		return 0, err
	}
	for k := 0; ; k++ {
		var m msg
		switch err := cs.RecvMsg(&m); {
		case err == io.EOF:
			return k, nil
		case err != nil:
			return k, fmt.Errorf("client RecvMsg after %d messages: %w", k, err)
		case m.S != strconv.Itoa(k):
			return k, fmt.Errorf("message %d is %q", k, m.S)
		}
	}
}

// A goroutine that a stream handler started waits in SendMsg for
// flow-control credit (the client reads nothing yet) when the handler
// returns: its SendMsg ends with FailedPrecondition naming the method, as
// above, over yrpc and gRPC (over gRPC it said "Canceled: send: context
// canceled"); then the client receives what was sent, and the end.
func TestSendMsgWaitingWhenHandlerReturns(t *testing.T) {
	const size, streams = 1 << 20, 8
	// After how many messages of size bytes the next one waits for the
	// client: yrpc's stream window is 64 KiB (a message may overdraw
	// it); net/http's HTTP/2 client, rt's gRPC client, gives 4 MiB.
	waitsAfter := map[string]int{"yrpc": 1, "grpc": 3}
	results := make(chan sendResult, 2*streams)
	body := strings.Repeat("f", size)
	desc := oneStream("test.Left", "Flood", 0x3406, rt.ServerStreaming, func(ss rt.ServerStreamer) error {
		var req msg
		if err := ss.RecvMsg(&req); err != nil {
			return err
		}
		proto, key, _ := strings.Cut(req.S, ":")
		full := make(chan struct{})
		go func() {
			for n := 0; ; n++ {
				if n == waitsAfter[proto] {
					close(full)
				}
				if err := ss.SendMsg(&msg{S: body}); err != nil {
					results <- sendResult{key, n, err}
					if n < waitsAfter[proto] {
						close(full)
					}
					return
				}
			}
		}()
		<-full
		return nil
	})
	for name, cli := range yrpcAndGRPC(t, &desc) {
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t)
			for i := range streams {
				cs, err := cli.NewStream(ctx, &desc, 0)
				if err == nil {
					err = cs.SendMsg(&msg{S: name + ":" + strconv.Itoa(i)})
				}
				if err == nil {
					err = cs.CloseSend()
				}
				if err != nil {
					t.Fatal(err)
				}
				var r sendResult
				select {
				case r = <-results:
				case <-ctx.Done():
					t.Fatal("the SendMsg of the handler's goroutine never returned")
				}
				if rt.CodeOf(r.err) != rt.FailedPrecondition || !strings.Contains(r.err.Error(), "test.Left/Flood: SendMsg after the stream's handler returned") {
					t.Errorf("stream %d: the handler's goroutine's SendMsg = %v; want FailedPrecondition naming the method and SendMsg", i, r.err)
				}
				k := 0
				for ; ; k++ {
					var m msg
					if err = cs.RecvMsg(&m); err != nil {
						break
					}
				}
				if err != io.EOF || k < r.n || k > r.n+1 {
					t.Errorf("stream %d: %d messages reported sent; %d received, then %v", i, r.n, k, err)
				}
			}
		})
	}
}

// One goroutine sends while another receives, on both ends of a bidi
// stream, over yrpc and gRPC: every message arrives whole and in order,
// and go test -race sees no race. (That is all gRPC-Go allows; rt allows
// more: TestStreamConcurrentSendsAndRecvs.)
func TestStreamSendAndRecvGoroutines(t *testing.T) {
	const perStream = 50
	desc := oneStream("test.Duplex", "Both", 0x3403, rt.BidiStreaming, func(ss rt.ServerStreamer) error {
		recvd := make(chan error, 1)
		go func() { recvd <- recvInOrder(ss, "c", perStream) }()
		for i := range perStream {
			if err := ss.SendMsg(&msg{S: "s" + strconv.Itoa(i)}); err != nil {
				return err
			}
		}
		return <-recvd
	})
	for name, cli := range yrpcAndGRPC(t, &desc) {
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t)
			spread(raceStreams/4, raceConc, func(_, n int) {
				for range n {
					cs, err := cli.NewStream(ctx, &desc, 0)
					if err != nil {
						t.Errorf("open: %v", err)
						return
					}
					sent := make(chan error, 1)
					go func() {
						for i := range perStream {
							if err := cs.SendMsg(&msg{S: "c" + strconv.Itoa(i)}); err != nil {
								sent <- err
								return
							}
						}
						sent <- cs.CloseSend()
					}()
					if err := recvInOrder(cs, "s", perStream); err != nil {
						t.Errorf("client: %v", err)
					}
					if err := <-sent; err != nil {
						t.Errorf("client SendMsg: %v", err)
					}
				}
			})
		})
	}
}

// recvInOrder receives messages prefix0, prefix1, ... prefix<n-1> from s,
// then io.EOF.
func recvInOrder(s rt.Stream, prefix string, n int) error {
	for i := 0; ; i++ {
		var m msg
		err := s.RecvMsg(&m)
		switch {
		case err == io.EOF && i == n:
			return nil
		case err != nil:
			return fmt.Errorf("RecvMsg after %d messages: %w", i, err)
		case i >= n || m.S != prefix+strconv.Itoa(i):
			return fmt.Errorf("message %d is %q", i, m.S)
		}
	}
}

// Two goroutines send and two receive at once, on both ends of a bidi
// stream, over yrpc and gRPC: each message arrives once and whole, and
// go test -race sees no race. Before, the client's RecvMsg kept its state
// unguarded; gRPC's client stream shared one send buffer and one reader
// between the calls (the peer read message lengths out of other bytes);
// yrpc's Send, checking the stream's credit before spending it, let two
// calls overdraw the window (the peer reset the stream), and the end of
// a yrpc server stream woke one of two waiting RecvMsg calls, the other
// waiting until the deadline.
func TestStreamConcurrentSendsAndRecvs(t *testing.T) {
	const perSender, senders = 150, 2 // each way more than a yrpc stream's window
	desc := oneStream("test.Duplex", "Many", 0x3407, rt.BidiStreaming, func(ss rt.ServerStreamer) error {
		return sendAndRecvMany(ss, "s", "c", perSender, senders, nil)
	})
	for name, cli := range yrpcAndGRPC(t, &desc) {
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t)
			spread(raceStreams/8, raceConc, func(_, n int) {
				for range n {
					cs, err := cli.NewStream(ctx, &desc, 0)
					if err != nil {
						t.Errorf("open: %v", err)
						return
					}
					if err := sendAndRecvMany(cs, "c", "s", perSender, senders, cs.CloseSend); err != nil {
						t.Errorf("client: %v", err)
					}
				}
			})
		})
	}
}

// manyMsg is the i-th message of sender g, prefix p: its name, then
// bytes that say it again.
func manyMsg(p string, g, i int) string {
	name := p + strconv.Itoa(g) + "." + strconv.Itoa(i) + ":"
	return name + strings.Repeat(name, 1<<10/len(name))
}

// sendAndRecvMany sends perSender messages (manyMsg(out, ...)) from each
// of senders goroutines, then calls closeSend if not nil, while as many
// goroutines receive to io.EOF; it checks that each message of the
// peer's (manyMsg(in, ...)) came once, whole.
func sendAndRecvMany(s rt.Stream, out, in string, perSender, senders int, closeSend func() error) error {
	var sending, receiving sync.WaitGroup
	errs := make(chan error, 2*senders+1)
	var mu sync.Mutex
	got := map[string]int{}
	for g := range senders {
		sending.Go(func() {
			for i := range perSender {
				if err := s.SendMsg(&msg{S: manyMsg(out, g, i)}); err != nil {
					errs <- fmt.Errorf("SendMsg: %w", err)
					return
				}
			}
		})
		receiving.Go(func() {
			for {
				var m msg
				err := s.RecvMsg(&m)
				if err == io.EOF {
					return
				}
				if err != nil {
					errs <- fmt.Errorf("RecvMsg: %w", err)
					return
				}
				mu.Lock()
				got[m.S]++
				mu.Unlock()
			}
		})
	}
	sending.Wait()
	if closeSend != nil {
		if err := closeSend(); err != nil {
			errs <- fmt.Errorf("CloseSend: %w", err)
		}
	}
	receiving.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	for g := range senders {
		for i := range perSender {
			if n := got[manyMsg(in, g, i)]; n != 1 {
				return fmt.Errorf("message %s%d.%d came %d times", in, g, i, n)
			}
			delete(got, manyMsg(in, g, i))
		}
	}
	for m := range got {
		return fmt.Errorf("a message that was not sent: %.40q", m)
	}
	return nil
}

package rt_test

import (
	"io"
	"strings"
	"testing"

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

package interop_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/yrpc/yrpc/interop"
	"github.com/yrpc/yrpc/interop/feedpb"
	pb "github.com/yrpc/yrpc/interop/userspb"
	"github.com/yrpc/yrpc/rt"
)

// grpc-go's concurrent unary calls whose requests together exceed the
// server's connection window (Limits.MaxRequestBytes) all succeed: grpc-go sends their DATA frames in turns, and the
// server must never let the incomplete requests take the whole window.
// Before, eight 3 MiB requests each got a part of the window, none could
// complete, and all failed with DeadlineExceeded after
// Limits.FirstFrameTimeout.
func TestGRPCGoConcurrentRequestsOverTheWindow(t *testing.T) {
	// A window of 2 MiB, and requests of 768 KiB: a smaller copy of the
	// defaults, quicker to move.
	e := start(t, transports(t)[0], rt.WithMaxFrameSize(1<<20),
		rt.WithLimits(rt.Limits{MaxRequestBytes: 2 << 20, FirstFrameTimeout: 5 * time.Second}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const calls = 8
	errs := make(chan error, calls)
	for i := range calls {
		go func() {
			data := bytes.Repeat([]byte{byte(i)}, 768<<10)
			r, err := e.client.Echo(ctx, &pb.Scalars{Data: data, I32: int32(i)})
			if err == nil && (r.I32 != int32(i) || !bytes.Equal(r.Data, data)) {
				err = fmt.Errorf("call %d: the echo differs", i)
			}
			errs <- err
		}()
	}
	for range calls {
		if err := recv(t, errs); err != nil {
			t.Error(err)
		}
	}
}

// A grpc-go client stream whose handler reads nothing holds up only
// itself: grpc-go sends it more than the server's connection window
// (Limits.MaxRequestBytes, 512 KiB here; unread stream bytes leave the
// window as they come up to that much in all) and a unary call on the
// same connection still succeeds. Before, the unread bytes held the
// connection's window until the handler read them: the stream's sends
// and every other call of the connection stalled.
func TestGRPCGoUnreadStreamDoesNotStallTheConnection(t *testing.T) {
	e := start(t, transports(t)[0], rt.WithMaxFrameSize(64<<10), rt.WithLimits(rt.Limits{MaxRequestBytes: 512 << 10}))
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	s, err := feedpb.NewFeedClient(e.conn).Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&feedpb.Event{Topic: interop.WaitTopic}); err != nil {
		t.Fatal(err)
	}
	recv(t, e.feed.Waiting) // the handler reads nothing more
	sent := make(chan error, 1)
	go func() {
		text := strings.Repeat("x", 16<<10)
		for range 48 { // 768 KiB: over the connection's window, within the stream's (1 MiB)
			if err := s.Send(&feedpb.Event{Topic: "t", Text: text}); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	if err := recv(t, sent); err != nil {
		t.Fatalf("sending the unread stream: %v", err)
	}
	r, err := e.client.Echo(ctxT(t), &pb.Scalars{I32: 7})
	if err != nil || r.I32 != 7 {
		t.Fatalf("a unary call beside the unread stream: %v, %v", r, err)
	}
	cancel()
	if err := recv(t, e.feed.Ended); !errors.Is(err, context.Canceled) {
		t.Errorf("the handler's context ended with %v, want context.Canceled", err)
	}
}

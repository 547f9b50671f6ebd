package interop_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

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

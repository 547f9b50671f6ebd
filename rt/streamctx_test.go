package rt_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
)

type streamCtxKey struct{}

// A client stream's Context has the caller's values and deadline, and
// ends (Canceled) when RecvMsg has returned the stream's end, even though
// the caller's context goes on; it ends with the caller's context's error
// when that ends first. Over both transports, with and without an
// interceptor.
func TestClientStreamContext(t *testing.T) {
	e := newGRPCEnvWith(t, nil)
	pass := func(ctx context.Context, info *rt.CallInfo, next rt.Streamer) (rt.ClientStreamer, error) {
		return next(ctx, info)
	}
	for _, addr := range []string{e.addr, "grpc://" + e.addr} {
		for _, intercepted := range []bool{false, true} {
			opts := []rt.ClientOption{rt.WithAddrs(addr)}
			if intercepted {
				opts = append(opts, rt.WithStreamClientInterceptors(pass))
			}
			cli := grpcCli(t, opts...)
			name := addr
			if intercepted {
				name += " (intercepted)"
			}

			ctx := context.WithValue(ctxT(t), streamCtxKey{}, "v")
			cs, err := openProbe(ctx, cli, 5, "3")
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			sctx := cs.Context()
			if sctx.Value(streamCtxKey{}) != "v" {
				t.Errorf("%s: the stream's context lacks the caller's value", name)
			}
			want, _ := ctx.Deadline()
			if d, ok := sctx.Deadline(); !ok || !d.Equal(want) {
				t.Errorf("%s: the stream's deadline %v %v, want the caller's %v", name, d, ok, want)
			}
			if err := sctx.Err(); err != nil {
				t.Fatalf("%s: the open stream's context ended: %v", name, err)
			}
			if err := readToEnd(cs, nil); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			select {
			case <-sctx.Done():
			default:
				t.Fatalf("%s: the stream's context goes on after RecvMsg returned io.EOF", name)
			}
			if err := sctx.Err(); err != context.Canceled || ctx.Err() != nil {
				t.Errorf("%s: after the end, the stream's context's error %v (want Canceled), the caller's %v (want nil)", name, err, ctx.Err())
			}

			// Canceled by its caller with a cause: the stream's context
			// has it too.
			cctx, cancelCause := context.WithCancelCause(ctxT(t))
			cs, err = cli.NewStream(cctx, &probeDesc, 7)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			sub, cancelSub := context.WithCancel(cs.Context())
			why := errors.New("the caller's cause")
			cancelCause(why)
			<-sub.Done()
			for what, c := range map[string]context.Context{"context": cs.Context(), "derived context": sub} {
				if err, cause := c.Err(), context.Cause(c); err != context.Canceled || cause != why {
					t.Errorf("%s: the canceled stream's %s: error %v, cause %v; want Canceled, %v", name, what, err, cause, why)
				}
			}
			cancelSub()

			// The caller's deadline ends a stream that goes on first:
			// DeadlineExceeded; the context of one that was over by then
			// keeps its Canceled. The streams need to be done with before
			// the timeout; they are tried with longer ones until they are.
			for timeout := 100 * time.Millisecond; ; timeout *= 4 {
				dctx, cancel := context.WithTimeout(ctxT(t), timeout)
				over, err := openProbe(dctx, cli, 5, "1")
				if err == nil {
					err = readToEnd(over, nil)
				}
				if err == nil && dctx.Err() != nil {
					err = dctx.Err() // over only as the deadline passed: try longer
				}
				var long rt.ClientStreamer
				if err == nil {
					long, err = cli.NewStream(dctx, &probeDesc, 7)
				}
				if err != nil {
					cancel()
					if rt.CodeOf(err) == rt.DeadlineExceeded && timeout < 10*time.Second {
						continue
					}
					t.Fatalf("%s: %v", name, err)
				}
				// A context derived from the stream's ends with its error.
				sub, cancelSub := context.WithCancel(long.Context())
				<-sub.Done()
				cancel()
				for what, c := range map[string]context.Context{"context": long.Context(), "derived context": sub} {
					if err := c.Err(); err != context.DeadlineExceeded {
						t.Errorf("%s: the stream's %s ended by the deadline: %v, want DeadlineExceeded", name, what, err)
					}
				}
				cancelSub()
				if err := over.Context().Err(); err != context.Canceled {
					t.Errorf("%s: the context of the stream over before the deadline: %v after it, want Canceled as before", name, err)
				}
				break
			}
		}
	}
}

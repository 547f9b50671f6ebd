package zkreg

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
)

// An rt client's call waiting for the first providers of a service on
// ZooKeeper fails as soon as the Registry closes, and a call through a
// Registry closed before the client watched the service fails at once:
// Unavailable, naming the method, the service and the closed registry —
// not after the discovery wait, a minute here so that the test cannot
// pass by waiting it out.
func TestClientCallEndsWhenRegistryCloses(t *testing.T) {
	e := newEnv(t)
	const wait = time.Minute
	const want = "grpc.health.v1.Health/Check: no providers known for grpc.health.v1.Health: the registry was closed"
	for _, before := range []bool{false, true} {
		name := "closed while the call waits"
		if before {
			name = "closed before the call"
		}
		t.Run(name, func(t *testing.T) {
			r := e.open(e.options())
			// The interceptor runs once the client watches the service, just
			// before the call looks for providers.
			entered := make(chan struct{}, 1)
			cli, err := rt.NewClient(rt.WithRegistry(r), rt.WithDiscoveryWait(wait),
				rt.WithLogger(slog.New(slog.DiscardHandler)), // its consumer entry may fail to register
				rt.WithClientInterceptors(func(ctx context.Context, info *rt.CallInfo, req, resp rt.Message, next rt.InvokeFunc) error {
					entered <- struct{}{}
					return next(ctx, info, req, resp)
				}))
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			if before {
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
			}
			// A call that waits out the minute fails the test after 15 s.
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			start := time.Now()
			errc := make(chan error, 1)
			go func() {
				errc <- cli.Invoke(ctx, &rt.HealthServiceDesc, 0, &rt.HealthCheckRequest{}, &rt.HealthCheckResponse{})
			}()
			ended := false
			select {
			case <-entered:
			case err = <-errc:
				ended = true
				select {
				case <-entered:
				default:
					t.Fatalf("the call failed before looking for providers: %v", err)
				}
			}
			if !before {
				if ended {
					t.Fatalf("the call ended before the registry closed: %v", err)
				}
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if !ended {
				err = <-errc
			}
			took := time.Since(start)
			if rt.CodeOf(err) != rt.Unavailable || err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("after %v: err = %v; want Unavailable %q", took, err, want)
			}
			if !errors.Is(err, registry.ErrClosed) {
				t.Errorf("errors.Is(%v, registry.ErrClosed) = false", err)
			}
			if took > wait/10 {
				t.Errorf("the call failed after %v, not as soon as the registry closed", took)
			}
		})
	}
}

package rt_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
)

// A new client's first call waits for the registry to list a provider
// (WithDiscoveryWait) and that wait is not charged to the method's
// timeout: a provider that starts serving after the call's own timeout
// has passed still answers it. The wait is bounded by the discovery wait
// and by the caller's context. A registry that answered with no provider
// gives "METHOD: no provider of SERVICE".
func TestDiscoveryWait(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, tc := range []struct {
		name     string
		wait     time.Duration // WithDiscoveryWait
		ctxLimit time.Duration // the caller's context; 0: none
		serveIn  time.Duration // when the provider starts; 0: never
		silent   bool          // the registry never answers the client's watch
		code     rt.Code
		msg      string
	}{
		{name: "provider after the method's timeout", wait: 10 * time.Second, serveIn: 2 * timeout, code: rt.OK},
		{name: "no provider within the wait", wait: timeout, code: rt.Unavailable, msg: "test.Echo/Echo: no provider of test.Echo"},
		{name: "no answer within the wait", wait: timeout, silent: true, code: rt.Unavailable,
			msg: "test.Echo/Echo: no providers known for test.Echo yet: the registry has not answered in 200ms"},
		{name: "the caller's context ends first", wait: 10 * time.Second, ctxLimit: timeout, code: rt.DeadlineExceeded, msg: "test.Echo/Echo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t)
			reg := registry.NewMemory()
			defer reg.Close()
			var cliReg registry.Registry = reg.Conn()
			if tc.silent {
				cliReg = silentRegistry{cliReg}
			}
			cli, err := rt.NewClient(rt.WithRegistry(cliReg), rt.WithDiscoveryWait(tc.wait))
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			start := time.Now()
			ctx := ctxT(t)
			if tc.ctxLimit > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctxLimit)
				defer cancel()
			}
			served := make(chan time.Time, 1)
			if tc.serveIn > 0 {
				srv, lis := registeredServer(t, reg.Conn())
				done := make(chan error, 1)
				timer := time.AfterFunc(tc.serveIn, func() {
					served <- time.Now()
					done <- srv.Serve(context.Background(), lis)
				})
				defer func() {
					if timer.Stop() {
						lis.Close()
						return
					}
					srv.Close()
					<-done
				}()
			}
			_, err = call(ctx, cli, &testDesc, 0, "x", rt.WithCallTimeout(timeout))
			took := time.Since(start)
			if rt.CodeOf(err) != tc.code || err != nil && !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("after %v: err = %v; want %v %q", took, err, tc.code, tc.msg)
			}
			switch {
			case tc.serveIn > 0:
				// The call waited for the provider beyond its own timeout.
				if at := <-served; at.Sub(start) <= timeout {
					t.Fatalf("the provider started %v after the call, within its timeout: the test proves nothing", at.Sub(start))
				}
			case took < timeout:
				// Every wait that fails here is 200 ms long.
				t.Fatalf("the call failed after %v, before its discovery wait or context ended", took)
			}
		})
	}
}

// registeredServer returns a server of testDesc, with opts, that registers in reg
// once it serves on lis.
func registeredServer(t *testing.T, reg registry.Registry, opts ...rt.ServerOption) (*rt.Server, net.Listener) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := rt.NewServer(append([]rt.ServerOption{rt.WithRegistry(reg)}, opts...)...)
	srv.RegisterService(&testDesc, newTestImpl())
	return srv, lis
}

// silentRegistry is a registry whose watches never deliver a snapshot, as
// a ZooKeeper that does not answer.
type silentRegistry struct{ registry.Registry }

func (silentRegistry) Watch(registry.Key, func(registry.Snapshot)) (func(), error) {
	return func() {}, nil
}

// A provider's registry payload lists its services' methods, which
// `yrpcc ctl` checks method names against.
func TestProviderPayloadListsMethods(t *testing.T) {
	checkLeaks(t)
	reg := registry.NewMemory()
	defer reg.Close()
	srv, lis := registeredServer(t, reg.Conn())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), lis) }()
	defer func() { srv.Close(); <-done }()
	<-srv.Ready()
	ps := registryProviders(t, reg, testDesc.Name)
	if len(ps) != 1 {
		t.Fatalf("providers %+v, want the server", ps)
	}
	if got, want := ps[0].Methods, []string{"Echo", "Fire", "Retry", "Hedge", "Fork"}; !slices.Equal(got, want) {
		t.Fatalf("the payload lists methods %q, want %q", got, want)
	}
}

// WithAddrs refuses an address a client cannot dial (no port) when the
// client is made, instead of failing every call.
func TestNewClientRefusesUndialableAddrs(t *testing.T) {
	for _, addr := range []string{"127.0.0.1", "localhost", ":7001", "10.0.0.1:0", "10.0.0.1:99999"} {
		c, err := rt.NewClient(rt.WithAddrs("127.0.0.1:7001", addr))
		if err == nil {
			c.Close()
			t.Errorf("NewClient(WithAddrs(%q)) succeeded, want an error", addr)
			continue
		}
		if !strings.Contains(err.Error(), "WithAddrs") || !strings.Contains(err.Error(), addr) {
			t.Errorf("NewClient(WithAddrs(%q)) = %v, want an error naming the option and the address", addr, err)
		}
	}
}

// A call waiting for a service's first providers ends as soon as the
// registry closes (registry.CloseNotifier), and a call through a registry
// closed before the client watched the service fails at once, both with
// Unavailable "METHOD: no providers known for SERVICE: the registry was
// closed" — not after the discovery wait, with "the registry has not
// answered" or "no provider". The wait is a minute, so the test cannot
// pass by waiting it out. Closing the client's handle of the Memory
// counts as closing, as closing the Memory does.
func TestDiscoveryEndsWhenRegistryCloses(t *testing.T) {
	const wait = time.Minute
	for _, tc := range []struct {
		name   string
		before bool // the registry closes before the first call; else while it waits
		handle bool // close the client's handle, else the Memory
		stream bool // open a stream, else make a unary call
		msg    string
	}{
		{name: "Memory closed while the call waits", msg: "test.Echo/Echo: no providers known for test.Echo: the registry was closed"},
		{name: "handle closed while the call waits", handle: true, msg: "test.Echo/Echo: no providers known for test.Echo: the registry was closed"},
		{name: "Memory closed while the stream waits", stream: true, msg: "test.Feed/Count: no providers known for test.Feed: the registry was closed"},
		{name: "Memory closed before the call", before: true, msg: "test.Echo/Echo: no providers known for test.Echo: the registry was closed"},
		{name: "handle closed before the call", before: true, handle: true, msg: "test.Echo/Echo: no providers known for test.Echo: the registry was closed"},
		{name: "Memory closed before the stream", before: true, stream: true, msg: "test.Feed/Count: no providers known for test.Feed: the registry was closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t)
			reg := registry.NewMemory()
			defer reg.Close()
			h := reg.Conn()
			closeReg := reg.Close
			if tc.handle {
				closeReg = h.Close
			}
			// The interceptors run once the client watches the service, just
			// before the call looks for providers.
			entered := make(chan struct{}, 2)
			cli, err := rt.NewClient(rt.WithRegistry(h), rt.WithDiscoveryWait(wait),
				rt.WithClientInterceptors(func(ctx context.Context, info *rt.CallInfo, req, resp rt.Message, next rt.InvokeFunc) error {
					entered <- struct{}{}
					return next(ctx, info, req, resp)
				}),
				rt.WithStreamClientInterceptors(func(ctx context.Context, info *rt.CallInfo, next rt.Streamer) (rt.ClientStreamer, error) {
					entered <- struct{}{}
					return next(ctx, info)
				}))
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			if tc.before {
				if err := closeReg(); err != nil {
					t.Fatal(err)
				}
			}
			// 10 s: a call that waits out the minute fails the test. The
			// second call finds the service's state that the first made.
			ctx := ctxT(t)
			for i := range 2 {
				start := time.Now()
				errc := make(chan error, 1)
				go func() {
					var err error
					if tc.stream {
						_, err = stream(ctx, cli, 0)
					} else {
						_, err = call(ctx, cli, &testDesc, 0, "x")
					}
					errc <- err
				}()
				var err error
				ended := false
				select {
				case <-entered:
				case err = <-errc:
					ended = true
					select {
					case <-entered:
					default:
						t.Fatalf("call %d failed before looking for providers: %v", i+1, err)
					}
				}
				if i == 0 && !tc.before {
					if ended {
						t.Fatalf("call %d ended before the registry closed: %v", i+1, err)
					}
					if err := closeReg(); err != nil {
						t.Fatal(err)
					}
				}
				if !ended {
					err = <-errc
				}
				took := time.Since(start)
				if rt.CodeOf(err) != rt.Unavailable || err == nil || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("call %d after %v: err = %v; want Unavailable %q", i+1, took, err, tc.msg)
				}
				if !errors.Is(err, registry.ErrClosed) {
					t.Errorf("call %d: errors.Is(%v, registry.ErrClosed) = false", i+1, err)
				}
				if took > wait/10 {
					t.Errorf("call %d failed after %v, not as soon as the registry closed", i+1, took)
				}
			}
		})
	}
}

// A client whose service has providers keeps calling them when its
// registry closes: Close ends the watch without a last snapshot, so the
// last providers stand.
func TestRegistryCloseKeepsProviders(t *testing.T) {
	for _, handle := range []bool{false, true} {
		name := "Memory closed"
		if handle {
			name = "client's handle closed"
		}
		t.Run(name, func(t *testing.T) {
			checkLeaks(t)
			reg := registry.NewMemory()
			defer reg.Close()
			// A closed registry took the entries with it: neither side
			// warns that it cannot deregister them.
			var logs bytes.Buffer
			var mu sync.Mutex
			log := slog.New(slog.NewTextHandler(lockedWriter{&logs, &mu}, nil))
			srv, lis := registeredServer(t, reg.Conn(), rt.WithLogger(log))
			done := make(chan error, 1)
			go func() { done <- srv.Serve(context.Background(), lis) }()
			stopSrv := sync.OnceFunc(func() { srv.Close(); <-done })
			defer stopSrv()
			<-srv.Ready()

			h := reg.Conn()
			cli, err := rt.NewClient(rt.WithRegistry(h), rt.WithDiscoveryWait(time.Minute), rt.WithLogger(log))
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			if got, err := call(ctxT(t), cli, &testDesc, 0, "before"); err != nil || got != "before" {
				t.Fatalf("before Close: %q, %v", got, err)
			}
			closeReg := reg.Close
			if handle {
				closeReg = h.Close
			}
			if err := closeReg(); err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				if got, err := call(ctxT(t), cli, &testDesc, 0, "after"); err != nil || got != "after" {
					t.Fatalf("call %d after Close: %q, %v", i+1, got, err)
				}
			}
			if ps := cli.Providers(&testDesc); len(ps) != 1 || ps[0].Addr != lis.Addr().String() {
				t.Errorf("providers after Close: %+v; want the server at %s", ps, lis.Addr())
			}
			cli.Close()
			stopSrv()
			mu.Lock()
			defer mu.Unlock()
			if out := logs.String(); strings.Contains(out, "deregister") {
				t.Errorf("warnings after closing the client and the server:\n%s", out)
			}
		})
	}
}

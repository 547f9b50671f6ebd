package rt_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/rt/wire"
)

// idlePassed returns once a connection made now to addr, which makes no
// call, was closed by the server's idle timeout: the server's ticker then
// finished a tick that saw every connection older than it idle past the
// timeout. It dials twice, one after the other, so that the tick which
// closed the first one has ended when the second one is closed.
func idlePassed(t *testing.T, addr string) {
	t.Helper()
	for range 2 {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := wire.ClientHandshake(nc, 0, wire.Settings{}); err != nil {
			t.Fatal(err)
		}
		_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second)) // a bound, not a wait
		if _, err := io.Copy(io.Discard, nc); err != nil {
			t.Fatalf("the idle connection was not closed: %v", err)
		}
		nc.Close()
	}
}

// TestIdleTimeoutSparesOpenStreams: a connection whose only activity is
// a long-lived stream (a subscription the server answers rarely) is not
// idle. Before, the idle timeout counted calls only, and closed the
// connection under the stream, which failed with Unavailable.
func TestIdleTimeoutSparesOpenStreams(t *testing.T) {
	checkLeaks(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	impl := newFeedImpl()
	srv := rt.NewServer(rt.WithIdleTimeout(40*time.Millisecond), rt.WithHeartbeat(-1))
	srv.RegisterService(&feedDesc, impl)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(t.Context(), lis) }()
	t.Cleanup(func() { srv.Close(); <-done })
	cli, err := rt.NewClient(rt.WithAddrs(lis.Addr().String()), rt.WithHeartbeat(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })

	s, err := stream(ctxT(t), cli, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&msg{S: "hold"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if m, err := s.Recv(); err != nil || m.S != "0" {
		t.Fatalf("first message: %v, %v", m, err)
	}
	idlePassed(t, lis.Addr().String())
	impl.release <- struct{}{}
	if m, err := s.Recv(); err != io.EOF {
		t.Fatalf("after the idle timeout passed: %v, %v; want the stream's normal end", m, err)
	}
}

// slowRegistry is a registry.Memory whose Register waits for release
// (after telling entered), as a ZooKeeper write does on a slow link.
type slowRegistry struct {
	*registry.Memory
	entered chan struct{}
	release chan struct{}
}

func (r *slowRegistry) Register(ctx context.Context, e registry.Endpoint) error {
	r.entered <- struct{}{}
	<-r.release
	return r.Memory.Register(ctx, e)
}

// TestStopWhileRegisteringLeavesNoEntry: a server stopped (Close or
// Shutdown) while Serve is still registering its services must not stay
// registered once both returned; before, the registration that finished
// after the stop's deregistration stayed, and consumers kept calling a
// provider that was gone.
func TestStopWhileRegisteringLeavesNoEntry(t *testing.T) {
	for _, stop := range []string{"Close", "Shutdown"} {
		t.Run(stop, func(t *testing.T) {
			checkLeaks(t)
			mem := registry.NewMemory()
			t.Cleanup(func() { mem.Close() })
			reg := &slowRegistry{Memory: mem, entered: make(chan struct{}, 1), release: make(chan struct{})}
			srv := rt.NewServer(rt.WithRegistry(reg))
			srv.RegisterService(&testDesc, newTestImpl())
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			served := make(chan error, 1)
			go func() { served <- srv.Serve(context.Background(), lis) }()
			<-reg.entered
			switch stop {
			case "Close":
				if err := srv.Close(); err != nil {
					t.Fatal(err)
				}
			case "Shutdown":
				if err := srv.Shutdown(ctxT(t)); err != nil {
					t.Fatal(err)
				}
			}
			close(reg.release)
			if err := <-served; !errors.Is(err, rt.ErrServerClosed) {
				t.Fatalf("Serve: %v, want ErrServerClosed", err)
			}
			if ps := registryProviders(t, mem, testDesc.Name); len(ps) != 0 {
				t.Fatalf("after %s and Serve returned, still registered: %+v", stop, ps)
			}
		})
	}
}

// TestServeAfterStopClosesTheListener: Serve on a server already closed
// returns ErrServerClosed and closes the listener it was given, as it
// does with the listeners it was serving. Before, the listener stayed
// open with nobody accepting: the port stayed taken, and clients'
// connections sat in its backlog until their preface timeout instead of
// being refused.
func TestServeAfterStopClosesTheListener(t *testing.T) {
	for _, stop := range []string{"Close", "Shutdown"} {
		t.Run(stop, func(t *testing.T) {
			checkLeaks(t)
			srv := rt.NewServer()
			srv.RegisterService(&testDesc, newTestImpl())
			if stop == "Close" {
				srv.Close()
			} else if err := srv.Shutdown(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer lis.Close()
			if err := srv.Serve(context.Background(), lis); !errors.Is(err, rt.ErrServerClosed) {
				t.Fatalf("Serve after %s: %v, want ErrServerClosed", stop, err)
			}
			_ = lis.(*net.TCPListener).SetDeadline(time.Now()) // Accept returns at once either way
			if _, err := lis.Accept(); !errors.Is(err, net.ErrClosed) {
				t.Fatalf("the listener after Serve returned: Accept: %v, want it closed", err)
			}
		})
	}
}

// Serve that cannot start (no service registered) closes its listener
// too, as net/http's Serve does: clients are refused at once instead of
// waiting in the listener's backlog for a preface that never comes.
func TestServeThatCannotStartClosesTheListener(t *testing.T) {
	checkLeaks(t)
	srv := rt.NewServer()
	defer srv.Close()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	if err := srv.Serve(context.Background(), lis); err == nil || !strings.Contains(err.Error(), "no services registered") {
		t.Fatalf("Serve without services: %v", err)
	}
	_ = lis.(*net.TCPListener).SetDeadline(time.Now()) // Accept returns at once either way
	if _, err := lis.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("the listener after Serve returned: Accept: %v, want it closed", err)
	}
}

// stuckDeregistry is a registry.Memory whose first consumer Deregister
// says which key it is for and waits for release.
type stuckDeregistry struct {
	*registry.Memory
	once    sync.Once
	entered chan registry.Key
	release chan struct{}
	updated chan registry.Snapshot
}

func (r *stuckDeregistry) Deregister(ctx context.Context, e registry.Endpoint) error {
	if e.Role == registry.Consumer {
		r.once.Do(func() {
			r.entered <- e.Key
			<-r.release
		})
	}
	return r.Memory.Deregister(ctx, e)
}

// Watch tells updated of each snapshot once the watcher took it in.
func (r *stuckDeregistry) Watch(key registry.Key, fn func(registry.Snapshot)) (func(), error) {
	return r.Memory.Watch(key, func(s registry.Snapshot) {
		fn(s)
		select {
		case r.updated <- s: // room for far more than the test makes
		default:
		}
	})
}

// TestClientCloseClosesPoolsMadeDuringIt: while Client.Close stops its
// services one after the other, a service not yet stopped may learn of a
// new provider and a call may dial it. Close must close that connection
// too. Before, the new provider's pool went into the map Close had
// already emptied: its connection (and the goroutine reading it) stayed
// open after Close returned.
func TestClientCloseClosesPoolsMadeDuringIt(t *testing.T) {
	checkLeaks(t)
	srv := rt.NewServer()
	srv.RegisterService(&testDesc, newTestImpl())
	var lis [2]*endedListener
	done := make(chan error, 2)
	for i := range lis {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lis[i] = &endedListener{countingListener: countingListener{Listener: l}, gone: make(chan struct{})}
		go func() { done <- srv.Serve(context.Background(), lis[i]) }()
	}
	t.Cleanup(func() { srv.Close(); <-done; <-done })

	mem := registry.NewMemory()
	t.Cleanup(func() { mem.Close() })
	reg := &stuckDeregistry{Memory: mem, entered: make(chan registry.Key, 1), release: make(chan struct{}), updated: make(chan registry.Snapshot, 100)}
	other := testDesc
	other.Name = "test.Other" // served by no one: its calls fail, after dialing
	descs := map[string]*rt.ServiceDesc{testDesc.Name: &testDesc, other.Name: &other}
	provider := func(name, addr string) registry.Endpoint {
		return registry.Endpoint{Key: registry.Key{Service: name}, Role: registry.Provider, Addr: addr, Weight: 100}
	}
	for name := range descs {
		if err := mem.Register(ctxT(t), provider(name, lis[0].Addr().String())); err != nil {
			t.Fatal(err)
		}
	}
	cli, err := rt.NewClient(rt.WithRegistry(reg), rt.WithHeartbeat(-1))
	if err != nil {
		t.Fatal(err)
	}
	for _, sd := range descs {
		call(ctxT(t), cli, sd, 0, "x") // starts the service's watch
	}
	closed := make(chan error, 1)
	go func() { closed <- cli.Close() }()
	stuck := <-reg.entered // Close stops this service first
	var open *rt.ServiceDesc
	for name, sd := range descs {
		if name != stuck.Service {
			open = sd
		}
	}
	// The service not stopped yet moves to the other listener, and a call
	// dials it.
	if err := mem.Register(ctxT(t), provider(open.Name, lis[1].Addr().String())); err != nil {
		t.Fatal(err)
	}
	if err := mem.Deregister(ctxT(t), provider(open.Name, lis[0].Addr().String())); err != nil {
		t.Fatal(err)
	}
	for s := range reg.updated { // until the service took the change in
		if len(s.Providers) == 1 && s.Key.Service == open.Name && s.Providers[0].Addr == lis[1].Addr().String() {
			break
		}
	}
	call(ctxT(t), cli, open, 0, "x")
	close(reg.release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if lis[1].n.Load() == 0 {
		return // not dialed: the call failed with ErrClientClosed
	}
	select {
	case <-lis[1].gone:
	case <-ctxT(t).Done():
		t.Fatal("the connection dialed during Close is still open after it")
	}
}

// endedListener is a countingListener whose first connection closes
// gone when reading it ends (its client closed it).
type endedListener struct {
	countingListener
	once sync.Once
	gone chan struct{}
}

func (l *endedListener) Accept() (net.Conn, error) {
	c, err := l.countingListener.Accept()
	if err != nil {
		return nil, err
	}
	return &endedConn{Conn: c, l: l}, nil
}

type endedConn struct {
	net.Conn
	l *endedListener
}

func (c *endedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		c.l.once.Do(func() { close(c.l.gone) })
	}
	return n, err
}

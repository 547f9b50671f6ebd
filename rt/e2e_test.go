package rt_test

import (
	"context"
	"errors"
	"expvar"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/fault"
	"github.com/yrpc/yrpc/rt/memnet"
	"github.com/yrpc/yrpc/rt/metrics"
	"github.com/yrpc/yrpc/rt/wire"
)

// env is a server on loopback TCP and a client calling it.
type env struct {
	t    *testing.T
	impl *testImpl
	srv  *rt.Server
	lis  net.Listener
	cli  *rt.Client
	done chan error
}

func newEnv(t *testing.T, srvOpts []rt.ServerOption, cliOpts ...rt.ClientOption) *env {
	t.Helper()
	return newEnvWith(t, nil, srvOpts, cliOpts...)
}

// newEnvWith is newEnv with more services: register registers them.
func newEnvWith(t *testing.T, register func(*rt.Server), srvOpts []rt.ServerOption, cliOpts ...rt.ClientOption) *env {
	t.Helper()
	checkLeaks(t)
	e := &env{t: t, impl: newTestImpl(), done: make(chan error, 1)}
	e.srv = rt.NewServer(srvOpts...)
	e.srv.RegisterService(&testDesc, e.impl)
	if register != nil {
		register(e.srv)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.lis = lis
	go func() { e.done <- e.srv.Serve(context.Background(), lis) }()
	e.cli, err = rt.NewClient(append([]rt.ClientOption{rt.WithAddrs(lis.Addr().String())}, cliOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.cli.Close()
		e.srv.Close()
		if err := <-e.done; !errors.Is(err, rt.ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return e
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestUnary(t *testing.T) {
	e := newEnv(t, nil)
	for _, s := range []string{"hello", "", strings.Repeat("x", 100_000)} {
		got, err := call(ctxT(t), e.cli, &testDesc, 0, s)
		if err != nil || got != s {
			t.Fatalf("Echo(%d bytes) = %d bytes, %v", len(s), len(got), err)
		}
	}
}

func TestConcurrentCalls(t *testing.T) {
	e := newEnv(t, nil)
	var wg sync.WaitGroup
	var failed atomic.Int64
	for g := 0; g < 50; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				s := strings.Repeat("a", g*10+i)
				if got, err := call(ctxT(t), e.cli, &testDesc, 0, s); err != nil || got != s {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := failed.Load(); n != 0 {
		t.Fatalf("%d of 5000 concurrent calls failed", n)
	}
}

func TestOneway(t *testing.T) {
	e := newEnv(t, nil)
	if err := e.cli.Invoke(ctxT(t), &testDesc, 1, &msg{S: "ping"}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-e.impl.oneways:
		if got != "ping" {
			t.Fatalf("oneway got %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("oneway call never reached the handler")
	}
}

func TestMetadataBothWays(t *testing.T) {
	e := newEnv(t, nil)
	var md rt.MD
	ctx := rt.WithMetadata(ctxT(t), "k", "v1")
	if _, err := call(ctx, e.cli, &testDesc, 0, "md", rt.ResponseMetadata(&md)); err != nil {
		t.Fatal(err)
	}
	if got := md.Get("echo"); got != "v1" {
		t.Fatalf("response metadata echo = %q, want v1 (md %v)", got, md)
	}
}

func TestPeerAddr(t *testing.T) {
	e := newEnv(t, nil)
	got, err := call(ctxT(t), e.cli, &testDesc, 0, "peer")
	if err != nil || !strings.HasPrefix(got, "127.0.0.1:") {
		t.Fatalf("peer = %q, %v", got, err)
	}
}

func TestHandlerErrors(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		req  string
		code rt.Code
		msg  string
	}{
		{"fail:5:no such user", rt.NotFound, "no such user"},
		{"fail:3:bad name", rt.InvalidArgument, "bad name"},
		{"panic", rt.Internal, "test.Echo/Echo: handler panicked"},
		{"bad request", rt.InvalidArgument, "decode request"},
	} {
		_, err := call(ctxT(t), e.cli, &testDesc, 0, tc.req)
		var re *rt.Error
		if !errors.As(err, &re) || re.Code != tc.code || !strings.Contains(re.Message, tc.msg) || !re.Remote {
			t.Errorf("%q: err = %v, want remote %v containing %q", tc.req, err, tc.code, tc.msg)
		}
		if !errors.Is(err, &rt.Error{Code: tc.code}) {
			t.Errorf("%q: errors.Is(err, code %v) is false", tc.req, tc.code)
		}
	}
}

// A response the client cannot decode fails its call with Internal, for
// messages decoded by the reader (Unmarshal) and by the caller
// (UnmarshalOwned) alike.
func TestBadResponse(t *testing.T) {
	e := newEnv(t, nil)
	for _, resp := range []interface {
		rt.Message
		get() string
	}{&msg{}, &ownedMsg{}} {
		if err := e.cli.Invoke(ctxT(t), &testDesc, 0, &msg{S: "reply:ok"}, resp); err != nil || resp.get() != "ok" {
			t.Fatalf("%T: got %q, %v; want ok", resp, resp.get(), err)
		}
		err := e.cli.Invoke(ctxT(t), &testDesc, 0, &msg{S: "reply:bad"}, resp)
		if rt.CodeOf(err) != rt.Internal || !strings.Contains(err.Error(), "decode response") {
			t.Fatalf("%T: err = %v, want Internal naming the decode", resp, err)
		}
	}
}

// The server knows an unknown method by its ID only; the client's error
// names the method it called.
func TestUnknownMethod(t *testing.T) {
	e := newEnv(t, nil)
	_, err := call(ctxT(t), e.cli, &unknownDesc, 0, "x")
	if rt.CodeOf(err) != rt.Unimplemented || !strings.Contains(err.Error(), "test.Echo/Nope") {
		t.Fatalf("err = %v, want Unimplemented naming the method", err)
	}
}

func TestServerDeadline(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(ctxT(t), 100*time.Millisecond)
	defer cancel()
	_, err := call(ctx, e.cli, &testDesc, 0, "sleep")
	if rt.CodeOf(err) != rt.DeadlineExceeded {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	select {
	case herr := <-e.impl.ended:
		if !errors.Is(herr, context.DeadlineExceeded) && !errors.Is(herr, context.Canceled) {
			t.Fatalf("handler ctx ended with %v", herr)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("handler context never ended")
	}
}

func TestCallTimeoutOption(t *testing.T) {
	e := newEnv(t, nil)
	_, err := call(ctxT(t), e.cli, &testDesc, 0, "sleep", rt.WithCallTimeout(50*time.Millisecond))
	if rt.CodeOf(err) != rt.DeadlineExceeded {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	<-e.impl.ended
}

func TestCancelReachesHandler(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithCancel(ctxT(t))
	errc := make(chan error, 1)
	go func() {
		_, err := call(ctx, e.cli, &testDesc, 0, "sleep")
		errc <- err
	}()
	<-e.impl.started
	cancel()
	if err := <-errc; rt.CodeOf(err) != rt.Canceled {
		t.Fatalf("caller err = %v, want Canceled", err)
	}
	select {
	case herr := <-e.impl.ended:
		if !errors.Is(herr, context.Canceled) {
			t.Fatalf("handler ctx ended with %v, want Canceled", herr)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancellation never reached the handler")
	}
}

// Quick calls run on the goroutine that read them; a handler that blocks
// must not hold up the other calls on its connection: the read loop moves
// to a worker, and the method runs on workers from then on.
func TestBlockedHandlersDoNotHoldUpTheConnection(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithCancel(ctxT(t))
	const sleepers = 3
	errc := make(chan error, sleepers)
	for range sleepers {
		go func() {
			_, err := call(ctx, e.cli, &testDesc, 0, "sleep")
			errc <- err
		}()
		select {
		case <-e.impl.started:
		case <-time.After(10 * time.Second):
			t.Fatal("a call never reached its handler while another handler was blocked")
		}
	}
	// Every sleeper holds its handler; calls on the same connection
	// still go through, one at a time and in parallel.
	var wg sync.WaitGroup
	var failed atomic.Int64
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				s := strconv.Itoa(g*1000 + i)
				if got, err := call(ctxT(t), e.cli, &testDesc, 0, s); err != nil || got != s {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := failed.Load(); n != 0 {
		t.Fatalf("%d of 200 calls failed while handlers were blocked", n)
	}
	cancel()
	for range sleepers {
		if err := <-errc; rt.CodeOf(err) != rt.Canceled {
			t.Fatalf("sleeper err = %v, want Canceled", err)
		}
		<-e.impl.ended
	}
}

// A caller alone on a connection reads its own response, and a canceled
// context interrupts that read. Contexts canceled at every moment around
// their calls must fail only their own calls: a late interrupt must not
// fail the calls after them.
func TestCanceledCallsDoNotDisturbOthers(t *testing.T) {
	e := newEnv(t, nil)
	canceled := 0
	for i := range 1000 {
		ctx, cancel := context.WithCancel(context.Background())
		go cancel()
		if _, err := call(ctx, e.cli, &testDesc, 0, "x"); err != nil {
			if rt.CodeOf(err) != rt.Canceled {
				t.Fatalf("call %d with a context canceled meanwhile: %v", i, err)
			}
			canceled++
		}
		if got, err := call(ctxT(t), e.cli, &testDesc, 0, strconv.Itoa(i)); err != nil || got != strconv.Itoa(i) {
			t.Fatalf("call %d after it: %q, %v", i, got, err)
		}
	}
	t.Logf("%d of 1000 calls canceled", canceled)

	// A handler that answers only once canceled: the cancellation must
	// interrupt the caller's own read whenever it comes. A lost interrupt
	// would end the call at the parent's deadline instead.
	for i := range 50 {
		parent, stop := context.WithTimeout(context.Background(), 5*time.Second)
		ctx, cancel := context.WithCancel(parent)
		go func() {
			for range i % 4 {
				runtime.Gosched()
			}
			cancel()
		}()
		_, err := call(ctx, e.cli, &testDesc, 0, "sleep")
		stop()
		if rt.CodeOf(err) != rt.Canceled {
			t.Fatalf("sleeping call %d: %v, want Canceled", i, err)
		}
		for drained := false; !drained; {
			select {
			case <-e.impl.started:
			case <-e.impl.ended:
			default:
				drained = true
			}
		}
	}
	// The last handlers end once their cancels are read; on a loaded
	// machine that may be after the test's end, where the leak check
	// would count them.
	waitUntil(t, func() bool { return e.srv.Stats().InFlight == 0 })
}

func TestOversizedFrame(t *testing.T) {
	e := newEnv(t, []rt.ServerOption{rt.WithMaxFrameSize(64 << 10)})
	// The client learns the server's limit from the preface and refuses
	// locally with a clear error.
	_, err := call(ctxT(t), e.cli, &testDesc, 0, strings.Repeat("x", 100<<10))
	if rt.CodeOf(err) != rt.InvalidArgument || !strings.Contains(err.Error(), "max frame size") {
		t.Fatalf("err = %v, want InvalidArgument about the max frame size", err)
	}
	// A raw connection that sends one anyway is closed; others go on.
	raw := rawConn(t, e.lis.Addr().String())
	raw.Write(wire.AppendHeader(nil, &wire.Header{Type: wire.TypeRequest, ID: 1, Method: 0x1001}, nil, 1<<20))
	expectClosed(t, raw)
	if got, err := call(ctxT(t), e.cli, &testDesc, 0, "still here"); err != nil || got != "still here" {
		t.Fatalf("after a bad peer: %q, %v", got, err)
	}
}

func TestGarbageClosesOnlyThatConnection(t *testing.T) {
	e := newEnv(t, nil)
	if _, err := call(ctxT(t), e.cli, &testDesc, 0, "warm"); err != nil {
		t.Fatal(err)
	}
	raw := rawConn(t, e.lis.Addr().String())
	raw.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\ngarbage garbage garbage"))
	expectClosed(t, raw)

	garbage, err := net.Dial("tcp", e.lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer garbage.Close()
	garbage.Write([]byte("not a preface at all, definitely not"))
	expectClosed(t, garbage)
	if got, err := call(ctxT(t), e.cli, &testDesc, 0, "fine"); err != nil || got != "fine" {
		t.Fatalf("after garbage: %q, %v", got, err)
	}
}

// rawConn dials addr and completes the preface exchange.
func rawConn(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.Write(wire.AppendPreface(nil, wire.Preface{Version: wire.Version, MaxFrameSize: 1 << 20}))
	buf := make([]byte, wire.PrefaceLen)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := readFull(c, buf); err != nil {
		t.Fatalf("server preface: %v", err)
	}
	return c
}

func readFull(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	for {
		_, err := c.Read(buf)
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("server did not close the bad connection")
		}
		return
	}
}

func TestServerKilledMidCall(t *testing.T) {
	e := newEnv(t, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := call(ctxT(t), e.cli, &testDesc, 0, "sleep")
		errc <- err
	}()
	<-e.impl.started
	start := time.Now()
	e.srv.Close()
	select {
	case err := <-errc:
		if rt.CodeOf(err) != rt.Unavailable {
			t.Fatalf("err = %v, want Unavailable", err)
		}
		t.Logf("caller saw %v after %v", err, time.Since(start))
	case <-time.After(5 * time.Second):
		t.Fatal("caller hangs after the server died")
	}
	<-e.impl.ended
}

func TestGracefulShutdownUnderLoad(t *testing.T) {
	e := newEnv(t, nil)
	ctx, stop := context.WithCancel(context.Background())
	var ok, failed atomic.Int64
	warm := make(chan struct{})
	var warmOnce sync.Once
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_, err := call(ctxT(t), e.cli, &testDesc, 0, "delay:2ms")
				switch {
				case err == nil:
					if ok.Add(1) == 200 {
						warmOnce.Do(func() { close(warm) })
					}
				case rt.CodeOf(err) == rt.Unavailable && ok.Load() > 0:
					// After shutdown the only provider is gone: the
					// caller stops, as a real one would fail over.
					return
				default:
					failed.Add(1)
					t.Errorf("call failed during graceful shutdown: %v", err)
					return
				}
			}
		}()
	}
	<-warm
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	stop()
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d calls failed during shutdown (%d ok)", failed.Load(), ok.Load())
	}
	t.Logf("%d calls ok during graceful shutdown", ok.Load())
}

func TestMemnet(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	n := memnet.New()
	lis, err := n.Listen("provider:1")
	if err != nil {
		t.Fatal(err)
	}
	srv := rt.NewServer()
	srv.RegisterService(&testDesc, newTestImpl())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), lis) }()
	cli, err := rt.NewClient(rt.WithAddrs("provider:1"), rt.WithDialer(n.Dial))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := call(ctxT(t), cli, &testDesc, 0, "in memory"); err != nil || got != "in memory" {
		t.Fatalf("%q, %v", got, err)
	}
	cli.Close()
	srv.Close()
	<-done
}

func TestCompression(t *testing.T) {
	e := newEnv(t, []rt.ServerOption{rt.WithCompression(512)}, rt.WithCompression(512))
	big := strings.Repeat("compressible ", 10_000)
	for _, s := range []string{big, "small", big} {
		if got, err := call(ctxT(t), e.cli, &testDesc, 0, s); err != nil || got != s {
			t.Fatalf("compressed echo of %d bytes: got %d bytes, %v", len(s), len(got), err)
		}
	}
}

func TestFaultInjection(t *testing.T) {
	inj := fault.NewWithOptions(fault.Options{FromMetadata: true})
	e := newEnv(t, []rt.ServerOption{rt.WithServerInterceptors(inj.Interceptor())})
	ctx := ctxT(t)

	// Configured rule, per method.
	inj.Set(fault.Rule{Method: "Echo", Abort: rt.Unavailable, Message: "injected"})
	if _, err := call(ctx, e.cli, &testDesc, 0, "x"); rt.CodeOf(err) != rt.Unavailable || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("abort rule: %v", err)
	}
	if _, err := call(ctx, e.cli, &testDesc, 2, "other method"); err != nil {
		t.Fatalf("rule for Echo hit Retry: %v", err)
	}
	inj.Set()

	// Per-call rules from metadata.
	if _, err := call(fault.Metadata(ctx, "abort=NotFound:nope"), e.cli, &testDesc, 0, "x"); rt.CodeOf(err) != rt.NotFound {
		t.Fatalf("metadata abort: %v", err)
	}
	dctx, cancel := context.WithTimeout(fault.Metadata(ctx, "delay=10s"), 50*time.Millisecond)
	_, err := call(dctx, e.cli, &testDesc, 0, "x")
	cancel()
	if rt.CodeOf(err) != rt.DeadlineExceeded {
		t.Fatalf("metadata delay past the deadline: %v", err)
	}
	if _, err := call(fault.Metadata(ctx, "drop"), e.cli, &testDesc, 0, "x"); rt.CodeOf(err) != rt.Unavailable {
		t.Fatalf("drop: %v", err)
	}
	// The client reconnects after the dropped connection.
	if got, err := call(ctx, e.cli, &testDesc, 0, "after"); err != nil || got != "after" {
		t.Fatalf("after drop: %q, %v", got, err)
	}
	if inj.Hits() != 4 {
		t.Fatalf("Hits = %d, want 4", inj.Hits())
	}
}

func TestDefaultMetrics(t *testing.T) {
	e := newEnv(t, nil)
	for i := 0; i < 3; i++ {
		call(ctxT(t), e.cli, &testDesc, 0, "m")
	}
	call(ctxT(t), e.cli, &testDesc, 0, "fail:5:gone")
	s, ok := e.cli.Metrics().Call(metrics.Client, testDesc.Name, "Echo")
	if !ok || s.Count != 4 || s.Errors != 1 || s.Codes["NotFound"] != 1 {
		t.Fatalf("client metrics: %+v (found %v)", s, ok)
	}
	if s, ok := e.srv.Metrics().Call(metrics.Server, testDesc.Name, "Echo"); !ok || s.Count != 4 {
		t.Fatalf("server metrics: %+v (found %v)", s, ok)
	}
	// Nothing is published unless asked: expvar names are permanent.
	name := "yrpc.test.client." + strconv.Itoa(int(metricsRuns.Add(1)))
	if expvar.Get(name) != nil {
		t.Fatalf("%s published before Publish", name)
	}
	if err := e.cli.Recorder().Publish(name); err != nil {
		t.Fatal(err)
	}
	if v := expvar.Get(name); v == nil || !strings.Contains(v.String(), "Echo") {
		t.Fatalf("expvar %s = %v, want the client's snapshot", name, v)
	}
}

var metricsRuns atomic.Int64

// countingListener counts accepted connections.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func TestIdleTimeoutClosesAndClientReconnects(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lis := &countingListener{Listener: l}
	srv := rt.NewServer(rt.WithIdleTimeout(40*time.Millisecond), rt.WithHeartbeat(-1))
	srv.RegisterService(&testDesc, newTestImpl())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), lis) }()
	defer func() { srv.Close(); <-done }()
	cli, err := rt.NewClient(rt.WithAddrs(l.Addr().String()), rt.WithHeartbeat(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()

	if _, err := call(ctxT(t), cli, &testDesc, 0, "first"); err != nil {
		t.Fatal(err)
	}
	// The idle timeout is what is tested: the server closes the idle
	// connection on its own time, and the client sees it closed.
	waitUntil(t, func() bool { return srv.Stats().Conns == 0 && cli.Stats().Conns == 0 })
	if got, err := call(ctxT(t), cli, &testDesc, 0, "again"); err != nil || got != "again" {
		t.Fatalf("after the idle close: %q, %v", got, err)
	}
	if n := lis.n.Load(); n != 2 {
		t.Fatalf("%d connections accepted, want 2 (the idle one closed, a new one dialed)", n)
	}
}

// TestHeartbeatDetectsSilentServer runs a fake server that completes the
// preface and then never answers: the client's heartbeat declares it dead
// and the pending call fails with Unavailable instead of hanging.
func TestHeartbeatDetectsSilentServer(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() {
		c, err := lis.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, wire.PrefaceLen)
		readFull(c, buf)
		c.Write(wire.AppendPreface(nil, wire.Preface{Version: wire.Version, MaxFrameSize: 1 << 20}))
		io.Copy(io.Discard, c) // swallow everything, answer nothing
	}()
	cli, err := rt.NewClient(rt.WithAddrs(lis.Addr().String()), rt.WithHeartbeat(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	_, err = call(ctxT(t), cli, &testDesc, 0, "anyone?")
	if rt.CodeOf(err) != rt.Unavailable || !strings.Contains(err.Error(), "silent") {
		t.Fatalf("err = %v, want Unavailable naming the silent server", err)
	}
}

// TestDeadlineBoundsWritesToAServerThatDoesNotRead: a server that stops
// reading fills the socket buffers, and a caller's own write then blocks.
// Its deadline must still end the call (before, it waited for the
// heartbeat to fail the connection: 45 s by default).
func TestDeadlineBoundsWritesToAServerThatDoesNotRead(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	release := make(chan struct{})
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, wire.PrefaceLen)
				readFull(c, buf)
				c.Write(wire.AppendPreface(nil, wire.Preface{Version: wire.Version, MaxFrameSize: 8 << 20}))
				<-release // read nothing more
			}()
		}
	}()
	defer close(release)
	// A small send buffer makes the first call's own write block, whatever
	// the kernel's buffer sizes: when a call's frame fits in the buffers
	// instead, the cancel its caller sends at the deadline may be what
	// blocks, in the writer loop, and later calls then wait behind it
	// (their deadlines end them too, but none is cut in its own write, and
	// five of them opened the breaker).
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			err = nc.(*net.TCPConn).SetWriteBuffer(64 << 10)
		}
		return nc, err
	}
	cli, err := rt.NewClient(rt.WithAddrs(lis.Addr().String()), rt.WithDialer(dial))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()

	payload := strings.Repeat("x", 3<<20)
	const timeout = time.Second // ample for the handshake on a loaded machine
	for i := range 64 {         // 192 MiB: far more than any loopback socket buffers
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		errc := make(chan error, 1)
		go func() { _, err := call(ctx, cli, &testDesc, 0, payload); errc <- err }()
		select {
		case err = <-errc:
		case <-time.After(10 * time.Second):
			t.Fatalf("call %d still blocked 10 s after its %v deadline", i+1, timeout)
		}
		cancel()
		if rt.CodeOf(err) != rt.DeadlineExceeded {
			t.Fatalf("call %d: err = %v, want DeadlineExceeded", i+1, err)
		}
		if strings.Contains(err.Error(), "writing to") {
			t.Logf("call %d was cut while writing: %v", i+1, err)
			return
		}
	}
	t.Fatal("no call ever blocked in its write: the test did not fill the socket buffers")
}

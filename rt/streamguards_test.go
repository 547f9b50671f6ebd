package rt_test

import (
	"context"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/fault"
	"github.com/yrpc/yrpc/rt/metrics"
	"github.com/yrpc/yrpc/rt/wire"
)

// msgCount counts the messages a stream wrapper sees pass.
type msgCount struct{ sent, received atomic.Int64 }

func (c *msgCount) send(err error) error {
	c.sent.Add(1)
	return err
}

func (c *msgCount) recv(err error) error {
	if err == nil {
		c.received.Add(1)
	}
	return err
}

// countingServerStream counts what a server stream interceptor sees pass.
type countingServerStream struct {
	rt.ServerStreamer
	n *msgCount
}

func (s countingServerStream) SendMsg(m rt.Message) error {
	return s.n.send(s.ServerStreamer.SendMsg(m))
}
func (s countingServerStream) RecvMsg(m rt.Message) error {
	return s.n.recv(s.ServerStreamer.RecvMsg(m))
}

// countingClientStream counts what a client stream interceptor sees pass.
type countingClientStream struct {
	rt.ClientStreamer
	n *msgCount
}

func (s countingClientStream) SendMsg(m rt.Message) error {
	return s.n.send(s.ClientStreamer.SendMsg(m))
}
func (s countingClientStream) RecvMsg(m rt.Message) error {
	return s.n.recv(s.ClientStreamer.RecvMsg(m))
}

// Stream interceptors run on both sides, in the order given, once per
// stream, with the method's CallInfo, and may wrap the stream they pass
// on; an interceptor's error refuses the stream.
func TestStreamInterceptors(t *testing.T) {
	var mu sync.Mutex
	var order []string
	note := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	var srv, cli msgCount
	server := func(name string) rt.StreamServerInterceptor {
		return func(ss rt.ServerStreamer, info *rt.CallInfo, next rt.StreamHandler) error {
			note(name + " " + info.Method.FullName)
			if rt.IncomingMetadata(ss.Context()).Get("refuse") != "" {
				return rt.Errorf(rt.PermissionDenied, "%s refuses", name)
			}
			return next(countingServerStream{ss, &srv})
		}
	}
	client := func(name string) rt.StreamClientInterceptor {
		return func(ctx context.Context, info *rt.CallInfo, next rt.Streamer) (rt.ClientStreamer, error) {
			note(name + " " + info.Method.FullName)
			cs, err := next(ctx, info)
			if err != nil {
				return nil, err
			}
			return countingClientStream{cs, &cli}, nil
		}
	}
	e := newStreamEnv(t, []rt.ServerOption{rt.WithStreamServerInterceptors(server("s1"), server("s2"))},
		rt.WithStreamClientInterceptors(client("c1"), client("c2")))
	s, err := stream(ctxT(t), e.cli, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"a", "b", "c"} {
		if err := s.Send(&msg{S: m}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Recv(); err != nil || got.S != m {
			t.Fatalf("echo of %q: %v, %v", m, got, err)
		}
	}
	s.CloseSend()
	if _, err := s.Recv(); err != io.EOF {
		t.Fatalf("end %v, want io.EOF", err)
	}
	<-e.feed.started
	<-e.feed.ended
	mu.Lock()
	got := slices.Clone(order)
	mu.Unlock()
	want := []string{"c1 test.Feed/Echo", "c2 test.Feed/Echo", "s1 test.Feed/Echo", "s2 test.Feed/Echo"}
	if !slices.Equal(got, want) {
		t.Fatalf("interceptors ran as %q, want %q", got, want)
	}
	// Each side counted its messages twice (two wrapping interceptors).
	if cli.sent.Load() != 6 || cli.received.Load() != 6 || srv.sent.Load() != 6 || srv.received.Load() != 6 {
		t.Fatalf("messages seen: client sent %d received %d, server sent %d received %d; want 6 each",
			cli.sent.Load(), cli.received.Load(), srv.sent.Load(), srv.received.Load())
	}
	// A server interceptor's error ends the stream before its handler.
	s, err = stream(rt.WithMetadata(ctxT(t), "refuse", "1"), e.cli, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.Send(&msg{S: "1"})
	s.CloseSend()
	if _, err := s.Recv(); rt.CodeOf(err) != rt.PermissionDenied || !rt.IsRemote(err) {
		t.Fatalf("refused stream: %v, want PermissionDenied from the server", err)
	}
	if len(e.feed.started) != 0 {
		t.Fatal("the handler of a refused stream ran")
	}
}

// streamEvents collects the observer's events of test.Feed by side.
type streamEvents struct {
	mu     sync.Mutex
	client []metrics.Event
	server []metrics.Event
}

func (o *streamEvents) Observe(e metrics.Event) {
	if e.Service != "test.Feed" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if e.Side == metrics.Client {
		o.client = append(o.client, e)
	} else {
		o.server = append(o.server, e)
	}
}

// codes returns the method:code of each side's events of whole streams
// (the client's attempts left out), sorted.
func (o *streamEvents) codes() (client, server []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range o.client {
		if e.Attempt == 0 {
			client = append(client, e.Method+":"+e.Code)
		}
	}
	for _, e := range o.server {
		server = append(server, e.Method+":"+e.Code)
	}
	slices.Sort(client)
	slices.Sort(server)
	return client, server
}

// The metrics see each stream once on each side, when it ends, with its
// final status: success, the handler's error, a cancel.
func TestStreamMetrics(t *testing.T) {
	obs := &streamEvents{}
	e := newStreamEnv(t, []rt.ServerOption{rt.WithObserver(obs)}, rt.WithObserver(obs))
	ok, err := stream(ctxT(t), e.cli, 0)
	if err != nil {
		t.Fatal(err)
	}
	ok.Send(&msg{S: "2"})
	ok.CloseSend()
	if got, err := recvAll(t, ok); err != io.EOF || len(got) != 2 {
		t.Fatalf("Count 2: %d messages, end %v", len(got), err)
	}
	failed, err := stream(ctxT(t), e.cli, 2)
	if err != nil {
		t.Fatal(err)
	}
	failed.Send(&msg{S: "fail"})
	if _, err := failed.Recv(); rt.CodeOf(err) != rt.Aborted {
		t.Fatalf("Echo fail: %v, want Aborted", err)
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	canceled, err := stream(ctx, e.cli, 1)
	if err != nil {
		t.Fatal(err)
	}
	canceled.Send(&msg{S: "x"})
	<-e.feed.started // the three handlers have started
	<-e.feed.started
	<-e.feed.started
	cancel()
	if _, err := canceled.Recv(); rt.CodeOf(err) != rt.Canceled {
		t.Fatalf("Sum canceled: %v, want Canceled", err)
	}
	for range 3 {
		<-e.feed.ended
	}
	wantClient := []string{"Count:OK", "Echo:Aborted", "Sum:Canceled"}
	wantServer := []string{"Count:OK", "Echo:Aborted", "Sum:Canceled"}
	waitUntil(t, func() bool {
		c, s := obs.codes()
		return len(c) >= 3 && len(s) >= 3
	})
	// One more stream, seen end to end, so that a late duplicate event of
	// the three would be in by now.
	last, err := stream(ctxT(t), e.cli, 0)
	if err != nil {
		t.Fatal(err)
	}
	last.Send(&msg{S: "0"})
	last.CloseSend()
	if _, err := last.Recv(); err != io.EOF {
		t.Fatal(err)
	}
	<-e.feed.ended
	wantClient = append(wantClient, "Count:OK")
	wantServer = append(wantServer, "Count:OK")
	slices.Sort(wantClient)
	slices.Sort(wantServer)
	waitUntil(t, func() bool {
		c, s := obs.codes()
		return len(c) >= 4 && len(s) >= 4
	})
	c, s := obs.codes()
	if !slices.Equal(c, wantClient) || !slices.Equal(s, wantServer) {
		t.Fatalf("events: client %q, server %q; want client %q, server %q (one per stream and side)", c, s, wantClient, wantServer)
	}
	// And one attempt each on the client, on the one provider.
	_, attempts := obs.clientEvents()
	var got []string
	for _, ev := range attempts {
		if addr := e.lis.Addr().String(); ev.Attempt != 1 || ev.Instance != addr {
			t.Errorf("attempt event %+v: want attempt 1 on %s", ev, addr)
		}
		got = append(got, ev.Method+":"+ev.Code)
	}
	slices.Sort(got)
	if !slices.Equal(got, wantClient) {
		t.Fatalf("attempt events %q, want %q", got, wantClient)
	}
}

// A stream counts as one call against the server's limits: the rate
// limit (per stream opened), Limits.MaxCallsPerConn; and against the
// client's rate limit of its method.
func TestStreamLimits(t *testing.T) {
	t.Run("server rate limit", func(t *testing.T) {
		limited := feedDesc
		limited.Policy.RateLimit = rt.RateLimitPolicy{Rate: 1e-3, Burst: 2}
		feed := newFeedImpl()
		e := newEnvWith(t, func(s *rt.Server) { s.RegisterService(&limited, feed) }, nil)
		codes := map[rt.Code]int{}
		for range 3 {
			cs, err := e.cli.NewStream(ctxT(t), &limited, 0)
			if err == nil {
				s := &rt.GenericClientStream[msg, msg]{ClientStreamer: cs}
				s.Send(&msg{S: "20"}) // 20 messages: one stream, one token
				s.CloseSend()
				_, err = recvAll(t, s)
			}
			if err == io.EOF {
				err = nil
			}
			codes[rt.CodeOf(err)]++
		}
		if codes[rt.OK] != 2 || codes[rt.ResourceExhausted] != 1 {
			t.Fatalf("codes %v; want 2 streams (the burst) and 1 refused", codes)
		}
	})
	t.Run("calls per connection", func(t *testing.T) {
		e := newStreamEnv(t, []rt.ServerOption{rt.WithLimits(rt.Limits{MaxCallsPerConn: 2})})
		ctx, cancel := context.WithCancel(ctxT(t))
		defer cancel()
		for range 2 {
			s, err := stream(ctx, e.cli, 0)
			if err != nil {
				t.Fatal(err)
			}
			s.Send(&msg{S: "block"})
			s.CloseSend()
			<-e.feed.started
		}
		if _, err := call(ctxT(t), e.cli, &testDesc, 0, "x"); rt.CodeOf(err) != rt.ResourceExhausted {
			t.Fatalf("a unary call beside 2 open streams with MaxCallsPerConn 2: %v, want ResourceExhausted", err)
		}
		cancel()
		<-e.feed.ended
		<-e.feed.ended
		var err error
		waitUntil(t, func() bool { _, err = call(ctxT(t), e.cli, &testDesc, 0, "x"); return err == nil })
	})
	t.Run("client rate limit", func(t *testing.T) {
		e := newStreamEnv(t, nil, rt.WithMethodRateLimit("test.Feed/Echo", 1e-3, 2))
		codes := map[rt.Code]int{}
		for range 3 {
			s, err := stream(ctxT(t), e.cli, 2)
			if err == nil {
				s.CloseSend()
				_, err = s.Recv()
			}
			if err == io.EOF {
				err = nil
			}
			codes[rt.CodeOf(err)]++
		}
		if codes[rt.OK] != 2 || codes[rt.ResourceExhausted] != 1 || len(e.feed.ended) != 2 {
			t.Fatalf("codes %v, %d streams served; want 2 (the burst) and 1 refused locally", codes, len(e.feed.ended))
		}
		// Another stream method is not limited.
		for range 3 {
			s, err := stream(ctxT(t), e.cli, 1)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.CloseAndRecv(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// The fault kit's stream interceptor: rules apply to a stream as it opens
// (abort, drop, delay), from the Injector or the stream's metadata.
func TestStreamFaultInjection(t *testing.T) {
	inj := fault.NewWithOptions(fault.Options{FromMetadata: true})
	e := newStreamEnv(t, []rt.ServerOption{rt.WithStreamServerInterceptors(inj.StreamInterceptor())})
	ctx := ctxT(t)
	open := func(ctx context.Context, m int, first string) *rt.GenericClientStream[msg, msg] {
		t.Helper()
		s, err := stream(ctx, e.cli, m)
		if err != nil {
			t.Fatal(err)
		}
		s.Send(&msg{S: first})
		return s
	}

	inj.Set(fault.Rule{Method: "Count", Abort: rt.Unavailable, Message: "injected"})
	if _, err := open(ctx, 0, "1").Recv(); rt.CodeOf(err) != rt.Unavailable || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("abort rule: %v", err)
	}
	if len(e.feed.started) != 0 {
		t.Fatal("the handler of an aborted stream ran")
	}
	echo := open(ctx, 2, "other method")
	if m, err := echo.Recv(); err != nil || m.S != "other method" {
		t.Fatalf("a rule for Count hit Echo: %v, %v", m, err)
	}
	echo.CloseSend()
	if _, err := echo.Recv(); err != io.EOF {
		t.Fatal(err)
	}
	inj.Set()

	if _, err := open(fault.Metadata(ctx, "abort=NotFound:nope"), 2, "x").Recv(); rt.CodeOf(err) != rt.NotFound {
		t.Fatalf("metadata abort: %v", err)
	}
	dctx, cancel := context.WithTimeout(fault.Metadata(ctx, "delay=10s"), 50*time.Millisecond)
	_, err := open(dctx, 2, "x").Recv()
	cancel()
	if rt.CodeOf(err) != rt.DeadlineExceeded {
		t.Fatalf("metadata delay past the deadline: %v", err)
	}
	if _, err := open(fault.Metadata(ctx, "drop"), 2, "x").Recv(); rt.CodeOf(err) != rt.Unavailable {
		t.Fatalf("drop: %v", err)
	}
	// The client reconnects after the dropped connection.
	var m *msg
	waitUntil(t, func() bool {
		s, err := stream(ctx, e.cli, 2)
		if err != nil {
			return false
		}
		defer s.CloseSend()
		if s.Send(&msg{S: "after"}) != nil {
			return false
		}
		m, err = s.Recv()
		return err == nil
	})
	if m.S != "after" {
		t.Fatalf("after drop: %q", m.S)
	}
	if inj.Hits() != 4 {
		t.Fatalf("Hits = %d, want 4", inj.Hits())
	}
}

// A provider without streams (an older yrpc) keeps serving unary and
// oneway calls on the connection where a stream call to it failed locally
// with Unimplemented naming it.
func TestPeerWithoutStreamsServesCalls(t *testing.T) {
	checkLeaks(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	oneways := make(chan string, 1)
	go oldPeer(lis, oneways)
	cli, err := rt.NewClient(rt.WithAddrs(lis.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if got, err := call(ctxT(t), cli, &testDesc, 0, "before"); err != nil || got != "before" {
		t.Fatalf("unary call to the older peer: %q, %v", got, err)
	}
	_, err = stream(ctxT(t), cli, 0)
	if rt.CodeOf(err) != rt.Unimplemented || !contains(err.Error(), lis.Addr().String()) || rt.IsRemote(err) {
		t.Fatalf("NewStream = %v, want a local Unimplemented naming the provider", err)
	}
	if got, err := call(ctxT(t), cli, &testDesc, 0, "after"); err != nil || got != "after" {
		t.Fatalf("unary call after the refused stream: %q, %v", got, err)
	}
	if err := cli.Invoke(ctxT(t), &testDesc, 1, &msg{S: "ping"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := <-oneways; !strings.Contains(got, "ping") {
		t.Fatalf("the oneway call carried %q", got)
	}
}

// A stream whose open frame the server reads after its connection closed
// (here: right behind a call that drops the connection, read in the same
// batch) is ended at once: its handler does not wait for a connection
// that is gone (the leak check at cleanup fails otherwise).
func TestStreamOpenedAsItsConnectionCloses(t *testing.T) {
	inj := fault.New(fault.Rule{Method: "test.Echo/Echo", Drop: true})
	e := newStreamEnv(t, []rt.ServerOption{rt.WithServerInterceptors(inj.Interceptor())})
	for range 20 {
		c, err := net.Dial("tcp", e.lis.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := wire.ClientHandshake(c, wire.FeatureStreams, wire.Settings{}); err != nil {
			t.Fatal(err)
		}
		b := wire.AppendFrame(nil, &wire.Header{Type: wire.TypeRequest, ID: 1, Method: testDesc.Methods[0].ID}, nil, (&msg{S: "x"}).MarshalAppend(nil))
		b = wire.AppendStreamOpen(b, 3, feedDesc.Methods[2].ID, 0, nil)
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, c) // until the server drops the connection
		c.Close()
	}
	if inj.Hits() != 20 {
		t.Fatalf("%d connections dropped, want 20", inj.Hits())
	}
}

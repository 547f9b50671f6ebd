package rt_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/internal/grpcwire"
)

// grpcTarget is an rt.Server on loopback TCP and an rt.Client that calls
// it as a plain gRPC server, by a grpc:// address: the client speaks gRPC
// over h2c to the port that answers yrpc and gRPC alike.
type grpcTarget struct {
	impl *testImpl
	feed *feedImpl
	srv  *rt.Server
	addr string // host:port
	cli  *rt.Client
}

// newGRPCTarget serves test.Echo and, with probe, grpctest.Probe, else
// test.Feed (their method IDs collide).
func newGRPCTarget(t *testing.T, probe bool, sopts []rt.ServerOption, copts ...rt.ClientOption) *grpcTarget {
	t.Helper()
	checkLeaks(t)
	g := &grpcTarget{impl: newTestImpl(), feed: newFeedImpl(), srv: rt.NewServer(sopts...)}
	g.srv.RegisterService(&testDesc, g.impl)
	if probe {
		g.srv.RegisterService(&probeDesc, struct{}{})
	} else {
		g.srv.RegisterService(&feedDesc, g.feed)
	}
	g.addr = serve(t, g.srv)
	g.cli = grpcCli(t, append([]rt.ClientOption{rt.WithAddrs("grpc://" + g.addr)}, copts...)...)
	return g
}

func grpcCli(t *testing.T, opts ...rt.ClientOption) *rt.Client {
	t.Helper()
	cli, err := rt.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// probeCall calls grpctest.Probe's method named name.
func probeCall(ctx context.Context, c *rt.Client, name, s string, opts ...rt.CallOption) (string, error) {
	i := slices.IndexFunc(probeDesc.Methods, func(m rt.MethodDesc) bool { return m.Name == name })
	return call(ctx, c, &probeDesc, i, s, opts...)
}

// Unary and oneway calls, every code with its message, a panic, an
// unknown method: as a yrpc client sees them over yrpc.
func TestGRPCClientUnary(t *testing.T) {
	g := newGRPCTarget(t, false, nil)
	for _, s := range []string{"hello", "", strings.Repeat("x", 100_000)} {
		if got, err := call(ctxT(t), g.cli, &testDesc, 0, s); err != nil || got != s {
			t.Errorf("echo %d bytes: %d bytes, %v", len(s), len(got), err)
		}
	}
	if err := g.cli.Invoke(ctxT(t), &testDesc, 1, &msg{S: "fired"}, nil); err != nil {
		t.Errorf("oneway: %v", err)
	}
	if got := <-g.impl.oneways; got != "fired" {
		t.Errorf("oneway delivered %q", got)
	}
	if n := g.cli.Stats().Conns; n != 1 {
		t.Errorf("Stats().Conns = %d with one gRPC connection open, want 1", n)
	}
	for c := rt.Canceled; c <= rt.Unauthenticated; c++ {
		text := "failed: 100% " + c.String() + "\n\u00e9"
		_, err := call(ctxT(t), g.cli, &testDesc, 0, "fail:"+strconv.Itoa(int(c))+":"+text)
		var e *rt.Error
		if !errors.As(err, &e) || e.Code != c || !e.Remote || !strings.HasSuffix(e.Message, text) {
			t.Errorf("%v: got %#v", c, err)
		}
	}
	if _, err := call(ctxT(t), g.cli, &testDesc, 0, "panic"); rt.CodeOf(err) != rt.Internal || !rt.IsRemote(err) {
		t.Errorf("panic: %v", err)
	}
	if _, err := call(ctxT(t), g.cli, &unknownDesc, 0, "x"); rt.CodeOf(err) != rt.Unimplemented || !contains(err.Error(), "test.Echo/Nope") {
		t.Errorf("unknown method: %v", err)
	}
	ps := g.cli.Providers(&testDesc)
	if len(ps) != 1 || ps[0].Addr != "grpc://"+g.addr || ps[0].Breaker != "closed" {
		t.Errorf("providers: %+v", ps)
	}
	if n := g.impl.calls.Load(); n != 3+17 {
		t.Errorf("handler ran %d times, want 20", n)
	}
}

// Error details (google.rpc.Status in grpc-status-details-bin) reach the
// caller's *rt.Error; Validate's failure carries a BadRequest.
func TestGRPCClientErrorDetails(t *testing.T) {
	g := newGRPCTarget(t, true, nil)
	_, err := probeCall(ctxT(t), g.cli, "Details", "")
	var e *rt.Error
	want := []rt.ErrorDetail{{TypeURL: "type.googleapis.com/test.Detail", Value: []byte{0x08, 0x2a}}}
	if !errors.As(err, &e) || e.Code != rt.FailedPrecondition || e.Message != "with details" || !cmp.Equal(e.Details, want) {
		t.Errorf("details: %#v", err)
	}
	_, err = probeCall(ctxT(t), g.cli, "Checked", "invalid")
	if !errors.As(err, &e) || e.Code != rt.InvalidArgument || len(e.Details) != 1 || e.Details[0].TypeURL != grpcwire.TypeBadRequest {
		t.Fatalf("validate: %#v", err)
	}
	if vs, err := grpcwire.ParseBadRequest(e.Details[0].Value); err != nil || len(vs) != 1 || vs[0].Field != "s" {
		t.Errorf("bad request: %+v %v", vs, err)
	}
}

// Request metadata goes in headers (-bin values in base64, decoded by the
// server), response metadata comes back from the headers and trailers;
// metadata gRPC cannot carry fails locally, not sent.
func TestGRPCClientMetadata(t *testing.T) {
	g := newGRPCTarget(t, true, nil)
	bin := "\x00\x01\xff"
	ctx := rt.WithMetadata(ctxT(t), "x-key", "v1", "X-Key", "v2", "trace-bin", bin)
	var md rt.MD
	got, err := probeCall(ctx, g.cli, "Meta", "out=1\nout-bin="+bin, rt.ResponseMetadata(&md))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(got, "\n")
	for _, l := range []string{"x-key=v1", "x-key=v2", "trace-bin=" + bin, "user-agent=grpc-go-yrpc/1"} {
		if !slices.Contains(lines, l) {
			t.Errorf("handler's metadata %q lacks %q", lines, l)
		}
	}
	if md.Get("out") != "1" || md.Get("out-bin") != bin || md.Get("grpc-status") != "" || md.Get("content-type") != "" {
		t.Errorf("response metadata %v", md)
	}
	// On an error, the metadata comes with the status (Trailers-Only).
	md = nil
	if _, err := probeCall(ctxT(t), g.cli, "Meta", "err=1\nfail=5", rt.ResponseMetadata(&md)); rt.CodeOf(err) != rt.NotFound || md.Get("err") != "1" {
		t.Errorf("error: %v, metadata %v; want NotFound with err=1", err, md)
	}
	for _, kv := range [][2]string{{"bad key", "v"}, {"k", "line\nbreak"}, {"k", "\u00e9"}} {
		_, err := probeCall(rt.WithMetadata(ctxT(t), kv[0], kv[1]), g.cli, "Meta", "")
		if rt.CodeOf(err) != rt.InvalidArgument || rt.IsRemote(err) {
			t.Errorf("metadata %q: %v", kv, err)
		}
	}
}

// The call's deadline reaches the handler as grpc-timeout; a call past
// it fails with DeadlineExceeded and ends the handler; a canceled call
// ends the handler too.
func TestGRPCClientDeadlineAndCancel(t *testing.T) {
	g := newGRPCTarget(t, true, nil)
	got, err := probeCall(ctxT(t), g.cli, "Deadline", "", rt.WithCallTimeout(5*time.Second))
	if d, perr := time.ParseDuration(got); err != nil || perr != nil || d <= 0 || d > 5*time.Second {
		t.Errorf("handler's deadline %q %v", got, err)
	}
	if got, err := probeCall(context.Background(), g.cli, "Deadline", ""); err != nil || got != "none" {
		t.Errorf("no deadline: %q %v", got, err)
	}
	_, err = call(ctxT(t), g.cli, &testDesc, 0, "sleep", rt.WithCallTimeout(50*time.Millisecond))
	if rt.CodeOf(err) != rt.DeadlineExceeded {
		t.Errorf("sleep past the deadline: %v", err)
	}
	<-g.impl.started
	if err := <-g.impl.ended; err == nil {
		t.Error("handler not ended")
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan error, 1)
	go func() {
		_, err := call(ctx, g.cli, &testDesc, 0, "sleep")
		done <- err
	}()
	<-g.impl.started
	cancel()
	if err := <-g.impl.ended; !errors.Is(err, context.Canceled) {
		t.Errorf("handler ended with %v", err)
	}
	if err := <-done; rt.CodeOf(err) != rt.Canceled {
		t.Errorf("canceled call: %v", err)
	}
}

// Closing the client fails its gRPC calls in flight with ErrClientClosed
// and ends their handlers.
func TestGRPCClientClose(t *testing.T) {
	g := newGRPCTarget(t, false, nil)
	done := make(chan error, 1)
	go func() {
		_, err := call(ctxT(t), g.cli, &testDesc, 0, "sleep")
		done <- err
	}()
	<-g.impl.started
	g.cli.Close()
	if err := <-done; !errors.Is(err, rt.ErrClientClosed) {
		t.Errorf("call in flight: %v", err)
	}
	if err := <-g.impl.ended; err == nil {
		t.Error("handler not ended")
	}
	if _, err := call(ctxT(t), g.cli, &testDesc, 0, "x"); !errors.Is(err, rt.ErrClientClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// A request over the server's limit is refused by the server; a
// response over the client's limit fails locally; both
// ResourceExhausted, and the connection goes on.
func TestGRPCClientMessageSize(t *testing.T) {
	g := newGRPCTarget(t, false, []rt.ServerOption{rt.WithMaxFrameSize(64 << 10)}, rt.WithMaxFrameSize(16<<10))
	_, err := call(ctxT(t), g.cli, &testDesc, 0, strings.Repeat("x", 100<<10))
	if rt.CodeOf(err) != rt.ResourceExhausted || !rt.IsRemote(err) {
		t.Errorf("large request: %v", err)
	}
	// "reply:" asks for a response as large as the request.
	_, err = call(ctxT(t), g.cli, &testDesc, 0, "reply:"+strings.Repeat("y", 20<<10))
	if rt.CodeOf(err) != rt.ResourceExhausted || rt.IsRemote(err) {
		t.Errorf("large response: %v", err)
	}
	if got, err := call(ctxT(t), g.cli, &testDesc, 0, "after"); err != nil || got != "after" {
		t.Errorf("after: %q %v", got, err)
	}
}

// With WithCompression, requests are gzipped once the server said it
// takes gzip, and the server's gzipped answers decode.
func TestGRPCClientGzip(t *testing.T) {
	g := newGRPCTarget(t, false, nil, rt.WithCompression(64))
	big := strings.Repeat("compress me ", 1000)
	for i := range 3 {
		if got, err := call(ctxT(t), g.cli, &testDesc, 0, big); err != nil || got != big {
			t.Fatalf("call %d: %d bytes, %v", i, len(got), err)
		}
	}
}

// Streams of the three kinds over gRPC, through the same NewStream:
// messages both ways, half-close, trailers, errors after messages,
// cancel and deadline.
func TestGRPCClientStreams(t *testing.T) {
	g := newGRPCTarget(t, false, nil)
	recvAll := func(s *rt.GenericClientStream[msg, msg]) ([]string, error) {
		var got []string
		for {
			m, err := s.Recv()
			if err != nil {
				return got, err
			}
			got = append(got, m.S)
		}
	}
	t.Run("server", func(t *testing.T) {
		for _, c := range []struct {
			req  string
			want []string
			code rt.Code
		}{
			{"3", []string{"0", "1", "2"}, rt.OK},
			{"0", nil, rt.OK},
			{"fail:2", []string{"0", "1"}, rt.NotFound},
		} {
			s, err := stream(ctxT(t), g.cli, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Send(&msg{S: c.req}); err != nil {
				t.Fatal(err)
			}
			if err := s.CloseSend(); err != nil {
				t.Fatal(err)
			}
			got, err := recvAll(s)
			if c.code == rt.OK && err != io.EOF || c.code != rt.OK && (rt.CodeOf(err) != c.code || !rt.IsRemote(err)) || !slices.Equal(got, c.want) {
				t.Errorf("%s: %q %v", c.req, got, err)
			}
			if tr := s.Trailer(); tr.Get("sent") != strconv.Itoa(len(c.want)) {
				t.Errorf("%s: trailer %v", c.req, tr)
			}
		}
	})
	t.Run("client", func(t *testing.T) {
		s, err := stream(ctxT(t), g.cli, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{"a", "b", "c"} {
			if err := s.Send(&msg{S: m}); err != nil {
				t.Fatal(err)
			}
		}
		if m, err := s.CloseAndRecv(); err != nil || m.S != "3:c" {
			t.Errorf("sum: %v %v", m, err)
		}
	})
	t.Run("bidi", func(t *testing.T) {
		s, err := stream(ctxT(t), g.cli, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{"x", "y", "z"} {
			if err := s.Send(&msg{S: m}); err != nil {
				t.Fatal(err)
			}
			if got, err := s.Recv(); err != nil || got.S != m {
				t.Fatalf("echo %q: %v %v", m, got, err)
			}
		}
		if err := s.CloseSend(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); err != io.EOF {
			t.Errorf("after CloseSend: %v", err)
		}
		if err := <-g.feed.ended; err != nil {
			t.Errorf("handler: %v", err)
		}
		s, err = stream(ctxT(t), g.cli, 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(&msg{S: "fail"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); rt.CodeOf(err) != rt.Aborted {
			t.Errorf("fail: %v", err)
		}
		if err := s.Send(&msg{S: "late"}); err == nil {
			t.Error("send after the stream failed: no error")
		}
	})
	t.Run("cancel", func(t *testing.T) {
		drain(g.feed.started)
		drain(g.feed.ended)
		ctx, cancel := context.WithCancel(ctxT(t))
		s, err := stream(ctx, g.cli, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(&msg{S: "block"}); err != nil {
			t.Fatal(err)
		}
		<-g.feed.started
		cancel()
		if _, err := s.Recv(); rt.CodeOf(err) != rt.Canceled {
			t.Errorf("canceled stream: %v", err)
		}
		if err := <-g.feed.ended; !errors.Is(err, context.Canceled) {
			t.Errorf("handler ended with %v", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		s, err := stream(ctxT(t), g.cli, 0, rt.WithCallTimeout(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(&msg{S: "block"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); rt.CodeOf(err) != rt.DeadlineExceeded {
			t.Errorf("stream past its deadline: %v", err)
		}
	})
	// Every stream settled with its provider: none left active.
	if ps := g.cli.Providers(&feedDesc); len(ps) != 1 || ps[0].Active != 0 {
		t.Errorf("providers after the streams: %+v", ps)
	}
}

// drain empties ch.
func drain[T any](ch chan T) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// BenchmarkGRPCClientUnary measures one call at a time of an rt.Client
// over gRPC (grpc://) to an rt.Server on loopback TCP, with the 581-byte
// body of BenchmarkGRPCUnary (net/http's client alone) and BenchmarkUnary
// (yrpc's protocol).
func BenchmarkGRPCClientUnary(b *testing.B) {
	cli, body := newGRPCClientBench(b)
	b.ReportAllocs()
	for b.Loop() {
		if got, err := call(context.Background(), cli, &testDesc, 0, body); err != nil || len(got) != len(body) {
			b.Fatal(got, err)
		}
	}
}

// BenchmarkGRPCClientUnaryParallel: many concurrent callers on the one
// HTTP/2 connection.
func BenchmarkGRPCClientUnaryParallel(b *testing.B) {
	cli, body := newGRPCClientBench(b)
	b.SetParallelism(32)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if got, err := call(context.Background(), cli, &testDesc, 0, body); err != nil || len(got) != len(body) {
				b.Error(got, err)
				return
			}
		}
	})
}

func newGRPCClientBench(b *testing.B) (*rt.Client, string) {
	srv := rt.NewServer(rt.WithObserver(nil))
	srv.RegisterService(&testDesc, newTestImpl())
	cli, err := rt.NewClient(rt.WithAddrs("grpc://"+serveB(b, srv)), rt.WithObserver(nil))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cli.Close() })
	return cli, strings.Repeat("x", 581)
}

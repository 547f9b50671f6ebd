package rt_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
)

// streamEnv is a server of test.Echo and test.Feed on loopback TCP and a
// client calling it.
type streamEnv struct {
	*env
	feed *feedImpl
}

func newStreamEnv(t *testing.T, srvOpts []rt.ServerOption, cliOpts ...rt.ClientOption) *streamEnv {
	t.Helper()
	feed := newFeedImpl()
	e := newEnvWith(t, func(s *rt.Server) { s.RegisterService(&feedDesc, feed) }, srvOpts, cliOpts...)
	return &streamEnv{env: e, feed: feed}
}

func recvAll(t *testing.T, s *rt.GenericClientStream[msg, msg]) ([]string, error) {
	t.Helper()
	var got []string
	for {
		m, err := s.Recv()
		if err != nil {
			return got, err
		}
		got = append(got, m.S)
	}
}

func TestServerStream(t *testing.T) {
	e := newStreamEnv(t, nil)
	for _, n := range []int{0, 1, 100_000} {
		s, err := stream(ctxT(t), e.cli, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(&msg{S: strconv.Itoa(n)}); err != nil {
			t.Fatal(err)
		}
		if err := s.CloseSend(); err != nil {
			t.Fatal(err)
		}
		got, err := recvAll(t, s)
		if err != io.EOF || len(got) != n {
			t.Fatalf("%d messages asked: got %d, end %v; want io.EOF", n, len(got), err)
		}
		for i, m := range got {
			if m != strconv.Itoa(i) {
				t.Fatalf("message %d is %q: out of order or corrupt", i, m)
			}
		}
		if tr := s.Trailer(); tr.Get("sent") != strconv.Itoa(n) {
			t.Fatalf("trailer %v, want sent=%d", tr, n)
		}
	}
}

// A client stream: the server reads until the client half-closes and
// answers once.
func TestClientStream(t *testing.T) {
	e := newStreamEnv(t, nil)
	for _, n := range []int{1, 100_000} {
		s, err := stream(ctxT(t), e.cli, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := s.Send(&msg{S: strconv.Itoa(i)}); err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		}
		resp, err := s.CloseAndRecv()
		if want := strconv.Itoa(n) + ":" + strconv.Itoa(n-1); err != nil || resp.S != want {
			t.Fatalf("CloseAndRecv = %v, %v; want %q", resp, err, want)
		}
	}
}

// A bidi stream echoes each message as it comes, both ways at once.
func TestBidiStream(t *testing.T) {
	e := newStreamEnv(t, nil)
	s, err := stream(ctxT(t), e.cli, 2)
	if err != nil {
		t.Fatal(err)
	}
	const n = 100_000
	errc := make(chan error, 1)
	go func() {
		for i := range n {
			if err := s.Send(&msg{S: strconv.Itoa(i)}); err != nil {
				errc <- err
				return
			}
		}
		errc <- s.CloseSend()
	}()
	got, err := recvAll(t, s)
	if err != io.EOF || len(got) != n {
		t.Fatalf("echoed %d of %d, end %v", len(got), n, err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	for i, m := range got {
		if m != strconv.Itoa(i) {
			t.Fatalf("message %d is %q", i, m)
		}
	}
}

// The server's handler fails mid-stream: the client gets the messages
// sent before, then the error with its code, and the trailer.
func TestServerErrorMidStream(t *testing.T) {
	e := newStreamEnv(t, nil)
	s, err := stream(ctxT(t), e.cli, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.Send(&msg{S: "fail:3"})
	s.CloseSend()
	got, err := recvAll(t, s)
	if len(got) != 3 || rt.CodeOf(err) != rt.NotFound || !rt.IsRemote(err) {
		t.Fatalf("got %d messages, end %v; want 3 then NotFound from the server", len(got), err)
	}
	if s.Trailer().Get("sent") != "3" {
		t.Fatalf("trailer %v", s.Trailer())
	}
	// The client's Send after the end fails instead of blocking.
	if err := s.Send(&msg{S: "late"}); err == nil {
		t.Fatal("Send after the stream ended succeeded")
	}
}

// A bidi handler that fails while the client keeps sending: the client's
// Recv gets the error.
func TestServerFailsWhileClientSends(t *testing.T) {
	e := newStreamEnv(t, nil)
	s, err := stream(ctxT(t), e.cli, 2)
	if err != nil {
		t.Fatal(err)
	}
	s.Send(&msg{S: "fail"})
	_, err = s.Recv()
	if rt.CodeOf(err) != rt.Aborted {
		t.Fatalf("Recv = %v, want Aborted", err)
	}
}

// Cancel from each side reaches the other.
func TestStreamCancel(t *testing.T) {
	t.Run("client cancels", func(t *testing.T) {
		e := newStreamEnv(t, nil)
		ctx, cancel := context.WithCancel(ctxT(t))
		s, err := stream(ctx, e.cli, 0)
		if err != nil {
			t.Fatal(err)
		}
		s.Send(&msg{S: "block"})
		<-e.feed.started
		cancel()
		if err := <-e.feed.ended; !errors.Is(err, context.Canceled) {
			t.Fatalf("handler ended with %v, want context.Canceled", err)
		}
		if _, err := s.Recv(); rt.CodeOf(err) != rt.Canceled {
			t.Fatalf("client Recv after cancel = %v, want Canceled", err)
		}
	})
	t.Run("server ends", func(t *testing.T) {
		e := newStreamEnv(t, nil)
		s, err := stream(ctxT(t), e.cli, 2)
		if err != nil {
			t.Fatal(err)
		}
		s.Send(&msg{S: "fail"})
		<-e.feed.ended
		// The client sees the end whether it receives or sends.
		if _, err := s.Recv(); rt.CodeOf(err) != rt.Aborted {
			t.Fatalf("Recv = %v, want Aborted", err)
		}
	})
}

// The method's deadline bounds the stream on both sides.
func TestStreamDeadline(t *testing.T) {
	e := newStreamEnv(t, nil)
	s, err := stream(ctxT(t), e.cli, 0, rt.WithCallTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	s.Send(&msg{S: "block"})
	if _, err := s.Recv(); rt.CodeOf(err) != rt.DeadlineExceeded {
		t.Fatalf("Recv = %v, want DeadlineExceeded", err)
	}
	if err := <-e.feed.ended; !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		t.Fatalf("handler ended with %v, want its context done", err)
	}
}

// Shutdown lets open streams finish until its context ends, then resets
// them with Unavailable; a stream that finishes in time is not touched.
func TestStreamShutdown(t *testing.T) {
	e := newStreamEnv(t, nil)
	blocked, err := stream(ctxT(t), e.cli, 0)
	if err != nil {
		t.Fatal(err)
	}
	blocked.Send(&msg{S: "block"})
	<-e.feed.started
	echo, err := stream(ctxT(t), e.cli, 2)
	if err != nil {
		t.Fatal(err)
	}
	echo.Send(&msg{S: "a"})
	if m, err := echo.Recv(); err != nil || m.S != "a" {
		t.Fatalf("echo before shutdown: %v, %v", m, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.srv.Shutdown(ctx) }()
	// The open echo stream still works during the drain, and finishes.
	echo.Send(&msg{S: "b"})
	if m, err := echo.Recv(); err != nil || m.S != "b" {
		t.Fatalf("echo during shutdown: %v, %v", m, err)
	}
	echo.CloseSend()
	if _, err := echo.Recv(); err != io.EOF {
		t.Fatalf("echo end = %v, want io.EOF", err)
	}
	cancel() // the blocked stream does not finish: give up on it
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown = %v, want context.Canceled", err)
	}
	if _, err := blocked.Recv(); rt.CodeOf(err) != rt.Unavailable {
		t.Fatalf("blocked stream after shutdown: %v, want Unavailable", err)
	}
}

// A lost connection ends every stream on it with Unavailable.
func TestStreamConnectionLoss(t *testing.T) {
	e := newStreamEnv(t, nil)
	var streams []*rt.GenericClientStream[msg, msg]
	for range 10 {
		s, err := stream(ctxT(t), e.cli, 0)
		if err != nil {
			t.Fatal(err)
		}
		s.Send(&msg{S: "block"})
		<-e.feed.started
		streams = append(streams, s)
	}
	e.srv.Close()
	for i, s := range streams {
		if _, err := s.Recv(); rt.CodeOf(err) != rt.Unavailable {
			t.Fatalf("stream %d: %v, want Unavailable", i, err)
		}
	}
}

// A thousand streams at once on one connection.
func TestThousandConcurrentStreams(t *testing.T) {
	e := newStreamEnv(t, nil)
	const n = 1000
	var wg sync.WaitGroup
	var failed atomic.Int64
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := stream(ctxT(t), e.cli, 2)
			if err != nil {
				failed.Add(1)
				t.Error(err)
				return
			}
			want := strconv.Itoa(i)
			for range 10 {
				if err := s.Send(&msg{S: want}); err != nil {
					failed.Add(1)
					t.Error(err)
					return
				}
				if m, err := s.Recv(); err != nil || m.S != want {
					failed.Add(1)
					t.Errorf("stream %d: %v, %v", i, m, err)
					return
				}
			}
			s.CloseSend()
			if _, err := s.Recv(); err != io.EOF {
				failed.Add(1)
				t.Errorf("stream %d end: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d of %d streams failed", failed.Load(), n)
	}
}

// A stream call to a provider without streams (an older yrpc) fails
// locally with Unimplemented naming it.
func TestStreamToPeerWithoutStreams(t *testing.T) {
	checkLeaks(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go oldPeer(lis)
	cli, err := rt.NewClient(rt.WithAddrs(lis.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	_, err = stream(ctxT(t), cli, 0)
	if rt.CodeOf(err) != rt.Unimplemented || !contains(err.Error(), lis.Addr().String()) {
		t.Fatalf("NewStream = %v, want Unimplemented naming the provider", err)
	}
}

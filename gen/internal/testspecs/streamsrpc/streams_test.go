package streamsrpc_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/yrpc/yrpc/gen/internal/testspecs/streamsrpc"
	"github.com/yrpc/yrpc/rt"
)

// feed implements streamsrpc.FeedServer; every handler's result goes to
// ended, so tests see how the server's end of a stream ended.
type feed struct {
	streamsrpc.UnimplementedFeedServer
	name  string
	ended chan error
}

func newFeed(name string) *feed { return &feed{name: name, ended: make(chan error, 100)} }

// Watch sends count ticks (forever for -1), or fail_after ticks and then
// NotFound, with the trailer sent=N.
func (f *feed) Watch(req *streamsrpc.Topic, s rt.ServerStreamingServer[streamsrpc.Tick]) (err error) {
	defer func() { f.ended <- err }()
	n := int64(req.Count)
	if req.FailAfter != nil {
		n = int64(*req.FailAfter)
	}
	var i int64
	for ; n < 0 || i < n; i++ {
		if err := s.Send(&streamsrpc.Tick{Seq: i, Text: f.name}); err != nil {
			return err
		}
	}
	s.SetTrailer(rt.MD{"sent", strconv.FormatInt(i, 10)})
	if req.FailAfter != nil {
		return rt.Errorf(rt.NotFound, "topic %q ends after %d ticks", req.Name, i)
	}
	return nil
}

// Upload counts the chunks and their bytes; a chunk "fail" ends the
// stream with Aborted.
func (f *feed) Upload(s rt.ClientStreamingServer[streamsrpc.Chunk, streamsrpc.Summary]) (err error) {
	defer func() { f.ended <- err }()
	sum := &streamsrpc.Summary{ServedBy: f.name}
	for {
		c, err := s.Recv()
		if err == io.EOF {
			return s.SendAndClose(sum)
		}
		if err != nil {
			return err
		}
		if string(c.Data) == "fail" {
			return rt.Errorf(rt.Aborted, "chunk %d asked to fail", sum.Chunks)
		}
		sum.Chunks++
		sum.Bytes += int64(len(c.Data))
	}
}

// Chat answers every tick with "re: " and its text; a tick "fail" ends
// the stream with Aborted.
func (f *feed) Chat(s rt.BidiStreamingServer[streamsrpc.Tick, streamsrpc.Tick]) (err error) {
	defer func() { f.ended <- err }()
	for {
		in, err := s.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if in.Text == "fail" {
			return rt.Errorf(rt.Aborted, "tick %d asked to fail", in.Seq)
		}
		if err := s.Send(&streamsrpc.Tick{Seq: in.Seq, Text: "re: " + in.Text}); err != nil {
			return err
		}
	}
}

func (f *feed) Last(ctx context.Context, req *streamsrpc.Topic) (*streamsrpc.Tick, error) {
	return &streamsrpc.Tick{Seq: -1, Text: f.name}, nil
}

// env is servers of streams.Feed on loopback TCP and a client of them.
type env struct {
	cli   *rt.Client
	feed  *streamsrpc.FeedClient
	impls []*feed
	srvs  []*rt.Server
}

// start serves impls (nil: one feed named "s0"), each on its own loopback
// port, and connects a client to all of them. Cleanup closes everything
// and checks that no goroutine is left.
func start(t *testing.T, impls ...streamsrpc.FeedServer) *env {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	e := &env{}
	if len(impls) == 0 {
		f := newFeed("s0")
		e.impls = append(e.impls, f)
		impls = []streamsrpc.FeedServer{f}
	}
	var addrs []string
	for _, impl := range impls {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := rt.NewServer()
		streamsrpc.RegisterFeed(srv, impl)
		done := make(chan error, 1)
		go func() { done <- srv.Serve(context.Background(), lis) }()
		t.Cleanup(func() {
			srv.Close()
			<-done
		})
		addrs = append(addrs, lis.Addr().String())
		e.srvs = append(e.srvs, srv)
	}
	cli, err := rt.NewClient(rt.WithAddrs(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	e.cli, e.feed = cli, streamsrpc.NewFeedClient(cli)
	return e
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// ctxLong bounds a test that moves 100,000 messages: under -race on a
// loaded 2-core machine that takes more than ctxT's 20 s.
func ctxLong(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// recvAll receives until the stream ends and returns the ticks and the
// end.
func recvAll(s interface {
	Recv() (*streamsrpc.Tick, error)
}) ([]*streamsrpc.Tick, error) {
	var got []*streamsrpc.Tick
	for {
		m, err := s.Recv()
		if err != nil {
			return got, err
		}
		got = append(got, m)
	}
}

// remote checks that err is a remote error with code.
func remote(t *testing.T, what string, err error, code rt.Code) {
	t.Helper()
	if rt.CodeOf(err) != code || !rt.IsRemote(err) {
		t.Fatalf("%s: error %v, want a remote %v", what, err, code)
	}
}

func ptr[T any](v T) *T { return &v }

// A server stream: the stub sends the request and half-closes; the
// responses come in order, then io.EOF and the trailer.
func TestWatch(t *testing.T) {
	e := start(t)
	for _, n := range []int32{0, 1, 100_000} {
		s, err := e.feed.Watch(ctxLong(t), &streamsrpc.Topic{Name: "t", Count: n})
		if err != nil {
			t.Fatal(err)
		}
		got, err := recvAll(s)
		if err != io.EOF || len(got) != int(n) {
			t.Fatalf("%d ticks asked: got %d, end %v; want io.EOF", n, len(got), err)
		}
		for i, m := range got {
			if m.Seq != int64(i) || m.Text != "s0" {
				t.Fatalf("tick %d is %+v", i, m)
			}
		}
		if tr := s.Trailer(); tr.Get("sent") != strconv.Itoa(int(n)) {
			t.Fatalf("trailer %v, want sent=%d", tr, n)
		}
		if err := <-e.impls[0].ended; err != nil {
			t.Fatalf("the handler returned %v", err)
		}
	}
}

// A server stream that fails after some responses: the client gets them,
// then the handler's error with its code; Recv keeps returning it.
func TestWatchFails(t *testing.T) {
	e := start(t)
	s, err := e.feed.Watch(ctxT(t), &streamsrpc.Topic{Name: "t", Count: 10, FailAfter: ptr[int32](3)})
	if err != nil {
		t.Fatal(err)
	}
	got, err := recvAll(s)
	if len(got) != 3 {
		t.Fatalf("got %d ticks before the error, want 3", len(got))
	}
	remote(t, "Watch", err, rt.NotFound)
	if _, again := s.Recv(); rt.CodeOf(again) != rt.NotFound {
		t.Fatalf("Recv after the end: %v, want the same NotFound", again)
	}
	if s.Trailer().Get("sent") != "3" {
		t.Fatalf("trailer %v, want sent=3 even on error", s.Trailer())
	}
}

// The generated HandleStream of a server stream answers InvalidArgument
// when the client half-closes without the request (the stub never does;
// a hand-made client can).
func TestWatchWithoutRequest(t *testing.T) {
	e := start(t)
	cs, err := e.cli.NewStream(ctxT(t), &streamsrpc.FeedServiceDesc, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.CloseSend(); err != nil {
		t.Fatal(err)
	}
	err = cs.RecvMsg(new(streamsrpc.Tick))
	remote(t, "Watch without a request", err, rt.InvalidArgument)
}

// Canceling the caller's context ends the stream on both sides: Recv
// returns Canceled and the handler's Send fails.
func TestWatchCancel(t *testing.T) {
	e := start(t)
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	s, err := e.feed.Watch(ctx, &streamsrpc.Topic{Name: "t", Count: -1})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	if _, err := recvAll(s); rt.CodeOf(err) != rt.Canceled {
		t.Fatalf("Recv after cancel: %v, want Canceled", err)
	}
	if err := <-e.impls[0].ended; err == nil {
		t.Fatal("the handler ended without an error: it never saw the cancel")
	}
}

// A deadline bounds the whole stream: a feed that never ends stops with
// DeadlineExceeded on the client, and the handler's stream ends too.
func TestWatchDeadline(t *testing.T) {
	e := start(t)
	s, err := e.feed.Watch(ctxT(t), &streamsrpc.Topic{Name: "t", Count: -1}, rt.WithCallTimeout(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	got, err := recvAll(s)
	if rt.CodeOf(err) != rt.DeadlineExceeded || len(got) == 0 {
		t.Fatalf("got %d ticks, end %v; want some, then DeadlineExceeded", len(got), err)
	}
	if err := <-e.impls[0].ended; err == nil {
		t.Fatal("the handler ended without an error: it never saw the deadline")
	}
}

// The schema's hash key of a server stream picks the provider: every
// stream of a topic goes to the same one (the service balances with
// consistent hashing), and the topics spread over both.
func TestWatchHashKey(t *testing.T) {
	e := start(t, newFeed("a"), newFeed("b"))
	ctx := ctxT(t)
	servedBy := func(topic string, opts ...rt.CallOption) string {
		s, err := e.feed.Watch(ctx, &streamsrpc.Topic{Name: topic, Count: 1}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		got, err := recvAll(s)
		if err != io.EOF || len(got) != 1 {
			t.Fatalf("Watch(%s): %d ticks, end %v", topic, len(got), err)
		}
		return got[0].Text
	}
	// Wait until the client is connected to both providers: the unary
	// method hashes on the same field.
	for i := 0; len(e.cli.Providers(&streamsrpc.FeedServiceDesc)) < 2; i++ {
		if i == 1000 {
			t.Fatal("the client never saw both providers")
		}
		if _, err := e.feed.Last(ctx, &streamsrpc.Topic{Name: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	used := map[string]bool{}
	for i := range 20 {
		topic := "topic-" + strconv.Itoa(i)
		first := servedBy(topic)
		for range 3 {
			if again := servedBy(topic); again != first {
				t.Fatalf("topic %s went to %s, then to %s", topic, first, again)
			}
		}
		used[first] = true
		if last, err := e.feed.Last(ctx, &streamsrpc.Topic{Name: topic}); err != nil || last.Text != first {
			t.Fatalf("the unary Last(%s) went to %v (%v), the stream to %s: the same key must pick the same provider", topic, last, err, first)
		}
	}
	if len(used) != 2 {
		t.Fatalf("20 topics went to %d providers, want both", len(used))
	}
	// The caller's rt.WithHashKey wins over the request's key.
	pinned := map[string]bool{}
	for i := range 20 {
		pinned[servedBy("topic-"+strconv.Itoa(i), rt.WithHashKey("pinned"))] = true
	}
	if len(pinned) != 1 {
		t.Fatalf("20 topics with one rt.WithHashKey went to %d providers, want one", len(pinned))
	}
}

// Shutdown lets an open stream go on until its context ends, then resets
// it: the client sees Unavailable after the ticks sent until then.
func TestWatchShutdown(t *testing.T) {
	e := start(t)
	s, err := e.feed.Watch(ctxT(t), &streamsrpc.Topic{Name: "t", Count: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.srvs[0].Shutdown(ctx) }()
	for range 100 { // the stream goes on while the server drains
		if _, err := s.Recv(); err != nil {
			t.Fatalf("Recv during the drain: %v", err)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown = %v, want context.Canceled: the stream was still open", err)
	}
	if _, err := recvAll(s); rt.CodeOf(err) != rt.Unavailable {
		t.Fatalf("the stream after the shutdown: %v, want Unavailable", err)
	}
}

// The schema's MaxMessageSize (Upload's is 1 KiB) bounds each encoded
// message of a stream: a chunk of 1024 bytes goes, one of 1025 is refused
// with ResourceExhausted.
func TestMaxMessageSize(t *testing.T) {
	e := start(t)
	s, err := e.feed.Upload(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	fits := &streamsrpc.Chunk{Data: make([]byte, 1021)}
	if n := fits.Size(); n != 1<<10 {
		t.Fatalf("the chunk encodes to %d bytes, want 1024", n)
	}
	if err := s.Send(fits); err != nil {
		t.Fatalf("a message of 1024 bytes on a stream limited to 1 KiB: %v", err)
	}
	if sum, err := s.CloseAndRecv(); err != nil || sum.Bytes != 1021 {
		t.Fatalf("CloseAndRecv = %+v, %v", sum, err)
	}
	s, err = e.feed.Upload(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Send(&streamsrpc.Chunk{Data: make([]byte, 1022)})
	if err == nil {
		_, err = s.CloseAndRecv()
	}
	if rt.CodeOf(err) != rt.ResourceExhausted {
		t.Fatalf("a message of 1025 bytes on a stream limited to 1 KiB: %v, want ResourceExhausted", err)
	}
}

// A client stream: the requests, then CloseAndRecv for the one response.
func TestUpload(t *testing.T) {
	e := start(t)
	for _, n := range []int{0, 1, 100_000} {
		s, err := e.feed.Upload(ctxLong(t))
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := s.Send(&streamsrpc.Chunk{Data: []byte(strconv.Itoa(i))}); err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		}
		sum, err := s.CloseAndRecv()
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for i := range n {
			want += len(strconv.Itoa(i))
		}
		if sum.Chunks != int64(n) || sum.Bytes != int64(want) || sum.ServedBy != "s0" {
			t.Fatalf("%d chunks: summary %+v, want %d chunks of %d bytes", n, sum, n, want)
		}
	}
}

// A client stream whose handler fails mid-stream: CloseAndRecv returns
// its error.
func TestUploadFails(t *testing.T) {
	e := start(t)
	s, err := e.feed.Upload(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a", "b", "fail"} {
		if err := s.Send(&streamsrpc.Chunk{Data: []byte(d)}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = s.CloseAndRecv()
	remote(t, "Upload", err, rt.Aborted)
}

// A bidi stream: sending and receiving on two goroutines, every message
// answered in order, io.EOF after CloseSend.
func TestChat(t *testing.T) {
	e := start(t)
	s, err := e.feed.Chat(ctxLong(t))
	if err != nil {
		t.Fatal(err)
	}
	const n = 100_000
	sent := make(chan error, 1)
	go func() {
		for i := range n {
			if err := s.Send(&streamsrpc.Tick{Seq: int64(i), Text: strconv.Itoa(i)}); err != nil {
				sent <- err
				return
			}
		}
		sent <- s.CloseSend()
	}()
	got, err := recvAll(s)
	if err != io.EOF || len(got) != n {
		t.Fatalf("%d answers of %d, end %v", len(got), n, err)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	for i, m := range got {
		if m.Seq != int64(i) || m.Text != "re: "+strconv.Itoa(i) {
			t.Fatalf("answer %d is %+v", i, m)
		}
	}
}

// A bidi stream whose handler fails mid-stream: the answers before the
// failure arrive, then its error; Send fails once the stream is over.
func TestChatFails(t *testing.T) {
	e := start(t)
	s, err := e.feed.Chat(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{"a", "b", "fail"} {
		if err := s.Send(&streamsrpc.Tick{Seq: int64(i), Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := recvAll(s)
	if len(got) != 2 {
		t.Fatalf("%d answers before the failure, want 2", len(got))
	}
	remote(t, "Chat", err, rt.Aborted)
	if err := s.Send(&streamsrpc.Tick{}); err == nil {
		t.Fatal("Send after the stream ended succeeded")
	}
}

// A client canceling a bidi stream reaches the handler: its Recv fails.
func TestChatCancel(t *testing.T) {
	e := start(t)
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	s, err := e.feed.Chat(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&streamsrpc.Tick{Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	if m, err := s.Recv(); err != nil || m.Text != "re: hi" {
		t.Fatalf("Recv = %+v, %v", m, err)
	}
	cancel()
	if err := <-e.impls[0].ended; err == nil {
		t.Fatal("the handler ended without an error: it never saw the cancel")
	}
	if _, err := s.Recv(); rt.CodeOf(err) != rt.Canceled {
		t.Fatalf("Recv after cancel: %v, want Canceled", err)
	}
}

// UnimplementedFeedServer answers every kind of stream with Unimplemented.
func TestUnimplemented(t *testing.T) {
	e := start(t, streamsrpc.UnimplementedFeedServer{})
	ctx := ctxT(t)
	w, err := e.feed.Watch(ctx, &streamsrpc.Topic{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Recv()
	remote(t, "Watch", err, rt.Unimplemented)
	u, err := e.feed.Upload(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = u.CloseAndRecv()
	remote(t, "Upload", err, rt.Unimplemented)
	c, err := e.feed.Chat(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Recv()
	remote(t, "Chat", err, rt.Unimplemented)
	_, err = e.feed.Last(ctx, &streamsrpc.Topic{Name: "t"})
	remote(t, "Last", err, rt.Unimplemented)
}

// The descriptor: the stream kinds, HandleStream for streams and Handle
// for the rest, the policies streams take, a hash key for the server
// stream only.
func TestServiceDesc(t *testing.T) {
	sd := &streamsrpc.FeedServiceDesc
	tests := []struct {
		name    string
		kind    rt.StreamKind
		hashKey bool
		policy  rt.MethodPolicy
	}{
		{"Watch", rt.ServerStreaming, true, rt.MethodPolicy{Timeout: time.Hour, Idempotent: true, MaxMessageSize: 64 << 10,
			Retry: rt.RetryPolicy{Tries: 3, Interval: 100 * time.Millisecond, Backoff: 2, MaxInterval: time.Second}}},
		{"Upload", rt.ClientStreaming, false, rt.MethodPolicy{Timeout: 10 * time.Minute, MaxMessageSize: 1 << 10}},
		{"Chat", rt.BidiStreaming, false, rt.MethodPolicy{}},
		{"Last", rt.NotStream, true, rt.MethodPolicy{Idempotent: true}},
	}
	if len(sd.Methods) != len(tests) {
		t.Fatalf("%d methods, want %d", len(sd.Methods), len(tests))
	}
	for i, tt := range tests {
		md := &sd.Methods[i]
		if md.Name != tt.name || md.Stream != tt.kind || md.Oneway || sd.MethodIndex(md.ID) != i {
			t.Errorf("method %d: %s %v oneway=%v index %d; want %s %v", i, md.Name, md.Stream, md.Oneway, sd.MethodIndex(md.ID), tt.name, tt.kind)
		}
		stream := tt.kind != rt.NotStream
		if (md.HandleStream != nil) != stream || (md.Handle != nil) == stream {
			t.Errorf("%s: HandleStream set %v, Handle set %v", md.Name, md.HandleStream != nil, md.Handle != nil)
		}
		if md.NewRequest == nil || md.NewResponse == nil {
			t.Errorf("%s: NewRequest or NewResponse missing", md.Name)
		}
		if (md.HashKey != nil) != tt.hashKey {
			t.Errorf("%s: HashKey set %v, want %v", md.Name, md.HashKey != nil, tt.hashKey)
		}
		if diff := cmp.Diff(tt.policy, md.Policy); diff != "" {
			t.Errorf("%s: policy (-want +got):\n%s", md.Name, diff)
		}
	}
	if key := sd.Methods[0].HashKey(&streamsrpc.Topic{Name: "news"}, nil); string(key) != "news" {
		t.Errorf("Watch hash key %q, want news", key)
	}
}

// Opening a stream on a client with no provider fails at once with the
// runtime's error: the stub returns no stream.
func TestNoProvider(t *testing.T) {
	e := start(t)
	e.cli.Close()
	if s, err := e.feed.Watch(ctxT(t), &streamsrpc.Topic{Name: "t"}); err == nil || s != nil {
		t.Fatalf("Watch on a closed client = %v, %v; want an error", s, err)
	}
	if _, err := e.feed.Chat(ctxT(t)); err == nil {
		t.Fatal("Chat on a closed client succeeded")
	}
	var rerr *rt.Error
	if _, err := e.feed.Upload(ctxT(t)); !errors.As(err, &rerr) {
		t.Fatalf("Upload on a closed client: %v, want an *rt.Error", err)
	}
}

package grpcclient

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/yrpc/yrpc/rt/internal/conn"
	"github.com/yrpc/yrpc/rt/internal/grpcwire"
)

// bmsg is a message whose wire form is its bytes.
type bmsg struct{ b []byte }

func (m *bmsg) Size() int                     { return len(m.b) }
func (m *bmsg) MarshalAppend(b []byte) []byte { return append(b, m.b...) }
func (m *bmsg) Unmarshal(b []byte) error {
	if bytes.HasPrefix(b, []byte("bad")) {
		return errors.New("bad input")
	}
	m.b = bytes.Clone(b)
	return nil
}

func checkLeaks(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// newServer serves h over h2c on loopback until the test ends.
func newServer(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, lis, h)
	return lis.Addr().String()
}

func serveOn(t *testing.T, lis net.Listener, h http.HandlerFunc) *http.Server {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: h, Protocols: &p}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return srv
}

var errTestClosed = &conn.Error{Code: unavailable, Message: "test over"}

func newTestPool(t *testing.T, addr string, cfg Config) *Pool {
	if cfg.Dial == nil {
		d := &net.Dialer{}
		cfg.Dial = func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
	}
	p := NewPool(addr, false, &cfg)
	t.Cleanup(func() { p.Close(errTestClosed) })
	return p
}

// unary calls "t.S/M" with req and returns the answer and its metadata.
func unary(ctx context.Context, p *Pool, req string, md ...string) (string, []string, error) {
	c, err := p.Get(ctx)
	if err != nil {
		return "", nil, err
	}
	var resp bmsg
	pd := conn.NewPending()
	r := &conn.Request{Name: "t.S/M", Req: &bmsg{[]byte(req)}, Resp: &resp, MD: md, WantMD: true}
	if d, ok := ctx.Deadline(); ok {
		r.Deadline = d
	}
	err = c.Call(ctx, r, pd)
	return string(resp.b), pd.MD, err
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// frame returns msg length-prefixed with flags.
func frame(flags byte, msg []byte) []byte {
	return append(grpcwire.AppendHeader(nil, flags, len(msg)), msg...)
}

func gzipped(b []byte) []byte { return grpcwire.Compress(gzip.NewWriter(nil), nil, b) }

// answer writes a gRPC answer: headers kv, the body, then the trailers
// tkv (none: no trailers at all).
func answer(w http.ResponseWriter, kv []string, body []byte, tkv ...string) {
	h := w.Header()
	h.Set("Content-Type", "application/grpc")
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	for i := 0; i+1 < len(tkv); i += 2 {
		h.Add(http.TrailerPrefix+tkv[i], tkv[i+1])
	}
}

// What a server answers, and what the client makes of it.
func TestAnswers(t *testing.T) {
	checkLeaks(t)
	details := (&grpcwire.Status{Code: 9, Message: "m", Details: []grpcwire.Any{{TypeURL: "type.googleapis.com/x.Y", Value: []byte{1, 2}}}}).MarshalAppend(nil)
	bomb := gzipped(make([]byte, 1<<20))
	for _, c := range []struct {
		name    string
		h       http.HandlerFunc
		want    string // the answer
		code    uint8  // 0: OK
		notSent bool
		check   func(t *testing.T, md []string, err error)
	}{
		{name: "ok", want: "pong", h: func(w http.ResponseWriter, r *http.Request) {
			answer(w, []string{"H-Md", "h", "Bin-Bin", grpcwire.EncodeBinary("\x00\xff")}, frame(0, []byte("pong")), "Grpc-Status", "0", "T-Md", "t")
		}, check: func(t *testing.T, md []string, err error) {
			got := map[string]string{}
			for i := 0; i+1 < len(md); i += 2 {
				got[md[i]] = md[i+1]
			}
			delete(got, "date") // net/http's server adds it
			if len(got) != 3 || got["h-md"] != "h" || got["bin-bin"] != "\x00\xff" || got["t-md"] != "t" {
				t.Errorf("metadata %q", md)
			}
		}},
		{name: "gzip", want: "zipped", h: func(w http.ResponseWriter, r *http.Request) {
			answer(w, []string{"Grpc-Encoding", "gzip"}, frame(grpcwire.FlagCompressed, gzipped([]byte("zipped"))), "Grpc-Status", "0")
		}},
		{name: "HTTP 404", code: unimplemented, h: func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }},
		{name: "HTTP 503", code: unavailable, h: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }},
		{name: "HTTP 500", code: unknown, h: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }},
		{name: "not gRPC", code: internal, h: func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>")) }},
		{name: "no status", code: internal, h: func(w http.ResponseWriter, r *http.Request) {
			answer(w, nil, frame(0, []byte("x")))
		}},
		{name: "status 99", code: unknown, h: func(w http.ResponseWriter, r *http.Request) {
			answer(w, []string{"Grpc-Status", "99", "Grpc-Message", "odd"}, nil)
		}},
		{name: "bad status", code: unknown, h: func(w http.ResponseWriter, r *http.Request) {
			answer(w, []string{"Grpc-Status", "x"}, nil)
		}},
		{name: "two messages", code: internal, h: func(w http.ResponseWriter, r *http.Request) {
			answer(w, nil, append(frame(0, []byte("a")), frame(0, []byte("b"))...), "Grpc-Status", "0")
		}},
		{name: "no message", code: internal, h: func(w http.ResponseWriter, r *http.Request) {
			answer(w, nil, nil, "Grpc-Status", "0")
		}},
		{name: "cut message", code: unavailable, h: func(w http.ResponseWriter, r *http.Request) {
			answer(w, nil, frame(0, []byte("abc"))[:6], "Grpc-Status", "0")
		}},
		{name: "undecodable", code: internal, h: func(w http.ResponseWriter, r *http.Request) {
			answer(w, nil, frame(0, []byte("bad")), "Grpc-Status", "0")
		}},
		{name: "refused", code: unavailable, notSent: true, h: func(w http.ResponseWriter, r *http.Request) {
			answer(w, []string{"Grpc-Status", "14", "Grpc-Message", "closing", "Yrpc-Refused", "1"}, nil)
		}},
		{name: "details", code: failedPrecondition, h: func(w http.ResponseWriter, r *http.Request) {
			answer(w, []string{"Grpc-Status", "9", "Grpc-Message", "100%25 sure", "Grpc-Status-Details-Bin", grpcwire.EncodeBinary(string(details))}, nil)
		}, check: func(t *testing.T, _ []string, err error) {
			var e *conn.Error
			if !errors.As(err, &e) || e.Message != "100% sure" || !e.Remote || len(e.Details) != 1 || e.Details[0].TypeURL != "type.googleapis.com/x.Y" || !bytes.Equal(e.Details[0].Value, []byte{1, 2}) {
				t.Errorf("details: %#v", err)
			}
		}},
		{name: "huge prefix", code: resourceExhausted, h: func(w http.ResponseWriter, r *http.Request) {
			answer(w, nil, grpcwire.AppendHeader(nil, 0, 1<<30), "Grpc-Status", "0")
		}},
		{name: "gzip bomb", code: resourceExhausted, h: func(w http.ResponseWriter, r *http.Request) {
			answer(w, []string{"Grpc-Encoding", "gzip"}, frame(grpcwire.FlagCompressed, bomb), "Grpc-Status", "0")
		}},
		{name: "compressed, no encoding", code: internal, h: func(w http.ResponseWriter, r *http.Request) {
			answer(w, nil, frame(grpcwire.FlagCompressed, gzipped([]byte("x"))), "Grpc-Status", "0")
		}},
		{name: "unknown encoding", code: internal, h: func(w http.ResponseWriter, r *http.Request) {
			answer(w, []string{"Grpc-Encoding", "br"}, nil, "Grpc-Status", "0")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newTestPool(t, newServer(t, c.h), Config{MaxMessage: 64 << 10})
			got, md, err := unary(ctxT(t), p, "ping")
			var ns *conn.NotSent
			var e *conn.Error
			switch {
			case c.code == 0 && (err != nil || got != c.want):
				t.Errorf("got %q %v, want %q", got, err, c.want)
			case c.code != 0 && (!errors.As(err, &e) || e.Code != c.code || errors.As(err, &ns) != c.notSent):
				t.Errorf("got %#v, want code %d (not sent %v)", err, c.code, c.notSent)
			}
			if c.check != nil {
				c.check(t, md, err)
			}
		})
	}
}

// A request carries the protocol's headers, the deadline and the
// metadata; metadata gRPC cannot carry is refused before sending.
func TestRequestHeaders(t *testing.T) {
	checkLeaks(t)
	var got http.Header
	var calls atomic.Int32
	p := newTestPool(t, newServer(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		got = r.Header.Clone()
		body, _ := io.ReadAll(r.Body)
		answer(w, nil, body, "Grpc-Status", "0")
	}), Config{})
	ctx, cancel := context.WithTimeout(ctxT(t), 3*time.Second)
	defer cancel()
	if ans, _, err := unary(ctx, p, "echo", "k", "v", "K2", "w", "x-bin", "\x00\xff", "user-agent", "app/2", "content-type", "text/plain"); err != nil || ans != "echo" {
		t.Fatalf("call: %q %v", ans, err)
	}
	d, err := grpcwire.ParseTimeout(got.Get("Grpc-Timeout"))
	if err != nil || d <= 0 || d > 3*time.Second {
		t.Errorf("grpc-timeout %q", got.Get("Grpc-Timeout"))
	}
	for k, want := range map[string]string{"Content-Type": "application/grpc", "Te": "trailers", "K": "v", "K2": "w",
		"X-Bin": grpcwire.EncodeBinary("\x00\xff"), "User-Agent": "app/2 " + userAgent, "Grpc-Accept-Encoding": "gzip,identity"} {
		if v := got.Values(k); len(v) != 1 || v[0] != want {
			t.Errorf("header %s: %q, want %q", k, v, want)
		}
	}
	for _, md := range [][]string{{"bad key", "v"}, {"k", "a\nb"}, {"k", "\u00e9"}, {"", "v"}} {
		_, _, err := unary(ctxT(t), p, "x", md...)
		var ns *conn.NotSent
		if !errors.As(err, &ns) || ns.Err.(*conn.Error).Code != invalidArgument {
			t.Errorf("metadata %q: %v", md, err)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the server saw %d calls, want 1", n)
	}
}

// gzipServer records the encoding and flags of each request and answers
// its message back; a server that refuses gzip (refuse) answers a gzipped
// request Unimplemented as grpc-go does, and accept is its
// grpc-accept-encoding (empty: none, as grpc-go's).
type gzipServer struct {
	refuse bool
	accept string
	mu     sync.Mutex
	reqs   []gzipSeen
}

type gzipSeen struct {
	encoding string
	flags    byte
}

func (g *gzipServer) serve(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		enc := r.Header.Get("Grpc-Encoding")
		var hdr []string
		if g.accept != "" {
			hdr = []string{"Grpc-Accept-Encoding", g.accept}
		}
		if g.refuse && enc == "gzip" {
			g.mu.Lock()
			g.reqs = append(g.reqs, gzipSeen{enc, 0xff})
			g.mu.Unlock()
			w.Header().Set("Content-Type", "application/grpc")
			w.Header().Set("Grpc-Status", "12")
			w.Header().Set("Grpc-Message", `grpc: Decompressor is not installed for grpc-encoding "gzip"`)
			w.WriteHeader(http.StatusOK)
			return
		}
		flags, msg, err := grpcwire.NewReader(r.Body, 1<<20, nil).Next()
		if err != nil {
			t.Error(err)
			return
		}
		g.mu.Lock()
		g.reqs = append(g.reqs, gzipSeen{enc, flags})
		g.mu.Unlock()
		if flags&grpcwire.FlagCompressed != 0 {
			msg, _ = grpcwire.Decompress(new(gzip.Reader), nil, msg, 1<<20)
		}
		answer(w, hdr, frame(0, msg), "Grpc-Status", "0")
	}
}

// Requests are gzipped from the Compress threshold on, from the first
// call unless the server lists encodings without gzip; a server that
// refuses gzip gets the call again identity, and identity from then on
// (0xff: a request refused unread).
func TestRequestGzip(t *testing.T) {
	checkLeaks(t)
	const none, gz, refused = byte(0), grpcwire.FlagCompressed, byte(0xff)
	tests := []struct {
		name   string
		srv    *gzipServer
		thresh int
		want   []gzipSeen
	}{
		{name: "accepts, silent", srv: &gzipServer{}, thresh: 100,
			want: []gzipSeen{{"gzip", gz}, {"gzip", none}, {"gzip", gz}}},
		{name: "lists gzip", srv: &gzipServer{accept: "identity, gzip"}, thresh: 100,
			want: []gzipSeen{{"gzip", gz}, {"gzip", none}, {"gzip", gz}}},
		{name: "lists no gzip", srv: &gzipServer{accept: "identity,deflate"}, thresh: 100,
			want: []gzipSeen{{"gzip", gz}, {"", none}, {"", none}}},
		{name: "refuses", srv: &gzipServer{refuse: true}, thresh: 100,
			want: []gzipSeen{{"gzip", refused}, {"", none}, {"", none}, {"", none}}},
		{name: "compression off", srv: &gzipServer{accept: "gzip"},
			want: []gzipSeen{{"", none}, {"", none}, {"", none}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestPool(t, newServer(t, tt.srv.serve(t)), Config{Compress: tt.thresh})
			big := strings.Repeat("z", 1000)
			for _, req := range []string{big, "small", big} {
				if got, _, err := unary(ctxT(t), p, req); err != nil || got != req {
					t.Fatalf("%d bytes: %d bytes %v", len(req), len(got), err)
				}
			}
			tt.srv.mu.Lock()
			defer tt.srv.mu.Unlock()
			if !slices.Equal(tt.srv.reqs, tt.want) {
				t.Errorf("requests %+v, want %+v", tt.srv.reqs, tt.want)
			}
		})
	}
}

// Streams are gzipped once the server took a gzipped call, not before:
// a refusal could not be sent again.
func TestStreamGzip(t *testing.T) {
	checkLeaks(t)
	var srv gzipServer
	p := newTestPool(t, newServer(t, srv.serve(t)), Config{Compress: 10})
	big := strings.Repeat("z", 100)
	stream := func() {
		t.Helper()
		c, err := p.Get(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.OpenStream(ctxT(t), &conn.Request{Name: "t.S/M"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(&bmsg{[]byte(big)}); err != nil {
			t.Fatal(err)
		}
		if err := s.CloseSend(); err != nil {
			t.Fatal(err)
		}
		var m bmsg
		if err := s.Recv(&m); err != nil || string(m.b) != big {
			t.Fatalf("recv %d bytes, %v", len(m.b), err)
		}
		if err := s.Recv(&m); err != io.EOF {
			t.Fatalf("end %v", err)
		}
	}
	stream()
	if got, _, err := unary(ctxT(t), p, big); err != nil || got != big {
		t.Fatalf("unary: %d bytes %v", len(got), err)
	}
	stream()
	want := []gzipSeen{{"", 0}, {"gzip", grpcwire.FlagCompressed}, {"gzip", grpcwire.FlagCompressed}}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if !slices.Equal(srv.reqs, want) {
		t.Errorf("requests %+v, want %+v", srv.reqs, want)
	}
}

// gzipRefusal tells a refused encoding from other Unimplemented errors.
func TestGzipRefusal(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&conn.Error{Code: unimplemented, Remote: true, Message: `t.S/M: grpc: Decompressor is not installed for grpc-encoding "gzip"`}, true},
		{&conn.Error{Code: unimplemented, Remote: true, Message: "Can't find decompressor for gzip"}, true},
		{&conn.Error{Code: unimplemented, Remote: true, Message: "unknown service t.S"}, false},
		{&conn.Error{Code: internal, Remote: true, Message: `grpc-encoding "gzip"`}, false},
		{&conn.Error{Code: unimplemented, Message: `grpc-encoding "gzip"`}, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := gzipRefusal(tt.err); got != tt.want {
			t.Errorf("gzipRefusal(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// A failed dial is not sent, and the redial waits its backoff on the
// pool's clock: until then Get fails at once, unless RedialNow ended the
// backoff.
func TestDialBackoff(t *testing.T) {
	checkLeaks(t)
	var dials atomic.Int32
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	p := newTestPool(t, "127.0.0.1:1", Config{
		Dial: func(context.Context, string) (net.Conn, error) {
			dials.Add(1)
			return nil, errors.New("no route")
		},
		Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
	})
	for i, want := range []int32{1, 1, 2, 2, 3} {
		switch i {
		case 2:
			mu.Lock()
			now = now.Add(time.Second)
			mu.Unlock()
		case 4:
			p.RedialNow()
		}
		_, err := p.Get(ctxT(t))
		var ns *conn.NotSent
		if !errors.As(err, &ns) || !strings.Contains(err.Error(), "no route") {
			t.Errorf("get %d: %v", i, err)
		}
		if n := dials.Load(); n != want {
			t.Errorf("get %d: %d dials, want %d", i, n, want)
		}
	}
}

// Close fails the calls in flight with its error, and later ones before
// they are sent.
func TestClose(t *testing.T) {
	checkLeaks(t)
	started := make(chan struct{})
	p := newTestPool(t, newServer(t, func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	}), Config{})
	done := make(chan error, 1)
	go func() {
		_, _, err := unary(ctxT(t), p, "hang")
		done <- err
	}()
	<-started
	p.Close(errTestClosed)
	var ns *conn.NotSent
	if err := <-done; err != errTestClosed {
		t.Errorf("call in flight: %v", err)
	}
	if _, err := p.Get(ctxT(t)); !errors.As(err, &ns) || ns.Err != errTestClosed {
		t.Errorf("after Close: %v", err)
	}
}

// handoff is a listener fed connections by the test.
type handoff struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newHandoff() *handoff { return &handoff{ch: make(chan net.Conn), done: make(chan struct{})} }

func (l *handoff) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}
func (l *handoff) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *handoff) Addr() net.Addr { return &net.TCPAddr{} }

// A server that shuts down sends its connection away (GOAWAY): the call
// in flight on it finishes there, and the next calls use a new
// connection, to the server that took over.
func TestGoAwayRedials(t *testing.T) {
	checkLeaks(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	old, next := newHandoff(), newHandoff()
	release, started := make(chan struct{}), make(chan struct{}, 1)
	var releaseOnce sync.Once
	releaseAll := func() { releaseOnce.Do(func() { close(release) }) }
	defer releaseAll()
	handler := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if bytes.HasSuffix(body, []byte("slow")) {
				started <- struct{}{}
				<-release
			}
			answer(w, nil, frame(0, []byte(name)), "Grpc-Status", "0")
		}
	}
	oldSrv := serveOn(t, old, handler("old"))
	serveOn(t, next, handler("next"))
	var accepted atomic.Int32
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			to := next
			if accepted.Add(1) == 1 {
				to = old
			}
			select {
			case to.ch <- c:
			case <-to.done:
				c.Close()
			}
		}
	}()
	p := newTestPool(t, lis.Addr().String(), Config{})
	slow := make(chan string, 1)
	go func() {
		got, _, err := unary(ctxT(t), p, "slow")
		if err != nil {
			got = err.Error()
		}
		slow <- got
	}()
	<-started
	shut := make(chan error, 1)
	go func() { shut <- oldSrv.Shutdown(ctxT(t)) }()
	// Until the GOAWAY is seen, calls may still go to the old server.
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, _, err := unary(ctxT(t), p, "fast")
		if err == nil && got == "next" {
			break
		}
		if err != nil && !errors.As(err, new(*conn.NotSent)) || time.Now().After(deadline) {
			t.Fatalf("call after the GOAWAY: %q %v", got, err)
		}
	}
	releaseAll()
	if got := <-slow; got != "old" {
		t.Errorf("the call in flight: %q", got)
	}
	if err := <-shut; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// A stream's end is known without a Recv when the server answers it
// with an error at once: onEnd runs.
func TestStreamEndsWithoutRecv(t *testing.T) {
	checkLeaks(t)
	p := newTestPool(t, newServer(t, func(w http.ResponseWriter, r *http.Request) {
		answer(w, []string{"Grpc-Status", "5", "Grpc-Message", "nothing here"}, nil)
	}), Config{})
	c, err := p.Get(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	s, err := c.OpenStream(ctxT(t), &conn.Request{Name: "t.S/Stream"}, func(err error) { ended <- err })
	if err != nil {
		t.Fatal(err)
	}
	var e *conn.Error
	if err := <-ended; !errors.As(err, &e) || e.Code != 5 || e.Message != "nothing here" {
		t.Errorf("onEnd: %v", err)
	}
	if err := s.Recv(&bmsg{}); !errors.As(err, &e) || e.Code != 5 {
		t.Errorf("recv: %v", err)
	}
	if err := s.Send(&bmsg{[]byte("x")}); !errors.As(err, &e) || e.Code != 5 {
		t.Errorf("send after the end: %v", err)
	}
}

// Reset ends a stream: the server's handler sees its request canceled,
// Recv and Send fail with the given error, onEnd gets it.
func TestStreamReset(t *testing.T) {
	checkLeaks(t)
	canceled := make(chan struct{})
	p := newTestPool(t, newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(canceled)
	}), Config{})
	c, err := p.Get(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	s, err := c.OpenStream(ctxT(t), &conn.Request{Name: "t.S/Stream"}, func(err error) { ended <- err })
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&bmsg{[]byte("x")}); err != nil {
		t.Fatal(err)
	}
	reset := errorf(resourceExhausted, "too large")
	s.Reset(resourceExhausted, "too large", reset)
	<-canceled
	if err := <-ended; err != reset {
		t.Errorf("onEnd: %v", err)
	}
	if err := s.Recv(&bmsg{}); err != reset {
		t.Errorf("recv: %v", err)
	}
	if err := s.Send(&bmsg{}); err != reset {
		t.Errorf("send: %v", err)
	}
}

// lateCtx is a context whose deadline the test moves, and that never
// ends by itself: it stands for a caller's context whose deadline passed
// before its timer fired.
type lateCtx struct {
	context.Context
	mu sync.Mutex
	d  time.Time
}

func (c *lateCtx) Deadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.d, true
}

func (c *lateCtx) set(d time.Time) {
	c.mu.Lock()
	c.d = d
	c.mu.Unlock()
}

// A call the server resets once the call's deadline passed is
// DeadlineExceeded even when the caller's context has not noticed yet
// (grpc-go's server resets a call with CANCEL at its deadline, which can
// arrive before the client's timer fires); reset before the deadline,
// it is Unavailable.
func TestResetAfterDeadline(t *testing.T) {
	checkLeaks(t)
	for _, c := range []struct {
		name    string
		passed  bool
		want    uint8
		message string
	}{
		{"deadline passed", true, deadlineExceeded, "deadline exceeded"},
		{"deadline ahead", false, unavailable, "INTERNAL_ERROR"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := &lateCtx{Context: ctxT(t), d: time.Now().Add(time.Hour)}
			p := newTestPool(t, newServer(t, func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				if c.passed {
					ctx.set(time.Now().Add(-time.Millisecond))
				}
				panic(http.ErrAbortHandler) // RST_STREAM
			}), Config{})
			_, _, err := unary(ctx, p, "x")
			var e *conn.Error
			if !errors.As(err, &e) || e.Code != c.want || !strings.Contains(e.Message, c.message) || errors.As(err, new(*conn.NotSent)) {
				t.Errorf("got %#v, want code %d with %q", err, c.want, c.message)
			}
		})
	}
}

package rt_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/internal/grpcwire"
	"github.com/yrpc/yrpc/rt/metrics"
)

// A gRPC client and a yrpc client call the same server on the same port
// at the same time: every call of both succeeds.
func TestGRPCAndYRPCOnTheSamePort(t *testing.T) {
	e := newGRPCEnv(t)
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for w := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 25 {
				s := "grpc-" + strconv.Itoa(w) + "-" + strconv.Itoa(i)
				if got, err := e.g.unary(ctxT(t), "/test.Echo/Echo", s); err != nil || got != s {
					errs <- errors.Join(err, errors.New("gRPC got "+got))
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := range 25 {
				s := "yrpc-" + strconv.Itoa(w) + "-" + strconv.Itoa(i)
				if got, err := call(ctxT(t), e.cli, &testDesc, 0, s); err != nil || got != s {
					errs <- errors.Join(err, errors.New("yrpc got "+got))
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Every code a handler returns reaches a gRPC client as grpc-status with
// the same number and the message percent-decoded, as it reaches a yrpc
// client.
func TestGRPCStatusCodes(t *testing.T) {
	e := newGRPCEnv(t)
	for c := rt.Canceled; c <= rt.Unauthenticated; c++ {
		text := "failed: 100% " + c.String() + "\n\u00e9"
		req := "fail:" + strconv.Itoa(int(c)) + ":" + text
		r, err := e.g.call(ctxT(t), grpcReq{path: "/test.Echo/Echo", msgs: [][]byte{[]byte(req)}})
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if r.code != c || r.message != text || len(r.msgs) != 0 {
			t.Errorf("gRPC %v: got %v %q (%d messages)", c, r.code, r.message, len(r.msgs))
		}
		if raw := r.header.Get("Grpc-Message"); strings.ContainsAny(raw, "%\n") && !strings.Contains(raw, "%25") {
			t.Errorf("gRPC %v: grpc-message %q not percent-encoded", c, raw)
		}
		_, yerr := call(ctxT(t), e.cli, &testDesc, 0, req)
		if rt.CodeOf(yerr) != c {
			t.Errorf("yrpc %v: got %v", c, yerr)
		}
	}
	// A handler's plain error is Unknown, a panic Internal, as on yrpc.
	for req, want := range map[string]rt.Code{"panic": rt.Internal} {
		r, err := e.g.call(ctxT(t), grpcReq{path: "/test.Echo/Echo", msgs: [][]byte{[]byte(req)}})
		if err != nil || r.code != want {
			t.Errorf("%s: %v %v, want %v", req, r.code, err, want)
		}
	}
}

// Request metadata reaches the handler with lowercase keys and -bin
// values decoded; response metadata reaches the client's trailers, -bin
// values base64-encoded, values gRPC cannot carry left out; the
// transport's headers are not metadata.
func TestGRPCMetadata(t *testing.T) {
	e := newGRPCEnv(t)
	bin := "\x00\x01\xff"
	h := md("X-Key", "v1", "x-key", "v2", "Trace-Bin", grpcwire.EncodeBinary(bin), "Multi-Bin", grpcwire.EncodeBinary("a")+","+grpcwire.EncodeBinary("b"))
	r, err := e.g.call(ctxT(t), grpcReq{path: "/grpctest.Probe/Meta", md: h, msgs: [][]byte{[]byte("out=1\nout-bin=" + bin + "\nctl=a\x01b")}})
	if err != nil || r.err() != nil {
		t.Fatal(err, r.err())
	}
	got := strings.Split(string(r.msgs[0]), "\n")
	want := []string{"multi-bin=a", "multi-bin=b", "trace-bin=" + bin, "user-agent=Go-http-client/2.0", "x-key=v1", "x-key=v2"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("handler's metadata (-want +got):\n%s", d)
	}
	if v := r.trailer.Get("Out"); v != "1" {
		t.Errorf("trailer out = %q", v)
	}
	if v, ok := r.trailer["Ctl"]; ok {
		t.Errorf("trailer ctl = %q, want none (a control character)", v)
	}
	if v, err := grpcwire.DecodeBinary(r.trailer.Get("Out-Bin")); err != nil || v != bin {
		t.Errorf("trailer out-bin = %q (%q, %v)", r.trailer.Get("Out-Bin"), v, err)
	}
	// A bad -bin value is refused.
	r, err = e.g.call(ctxT(t), grpcReq{path: "/grpctest.Probe/Meta", md: md("Trace-Bin", "!!"), msgs: [][]byte{nil}})
	if err != nil || r.code != rt.InvalidArgument || !strings.HasPrefix(r.message, "grpctest.Probe/Meta: ") {
		t.Errorf("bad -bin: %v %q %v", r.code, r.message, err)
	}
	// On an error, the metadata travels with the status (Trailers-Only).
	r, err = e.g.call(ctxT(t), grpcReq{path: "/test.Echo/Echo", msgs: [][]byte{[]byte("fail:5:gone")}})
	if err != nil || r.code != rt.NotFound || r.header.Get("Grpc-Status") != "5" {
		t.Errorf("Trailers-Only: %v %v %v", r.code, r.header, err)
	}
}

// grpc-timeout is the handler's deadline; a handler that waits for its
// context ends with DeadlineExceeded.
func TestGRPCDeadline(t *testing.T) {
	e := newGRPCEnv(t)
	r, err := e.g.call(ctxT(t), grpcReq{path: "/grpctest.Probe/Deadline", timeout: "5S", msgs: [][]byte{nil}})
	if err != nil || r.err() != nil {
		t.Fatal(err, r.err())
	}
	if d, err := time.ParseDuration(string(r.msgs[0])); err != nil || d <= 0 || d > 5*time.Second {
		t.Errorf("handler's deadline in %q", r.msgs[0])
	}
	if got, err := e.g.unary(ctxT(t), "/grpctest.Probe/Deadline", ""); err != nil || got != "none" {
		t.Errorf("no grpc-timeout: %q %v", got, err)
	}
	r, err = e.g.call(ctxT(t), grpcReq{path: "/test.Echo/Echo", timeout: "20m", msgs: [][]byte{[]byte("sleep")}})
	if err != nil || r.code != rt.DeadlineExceeded {
		t.Errorf("sleep: %v %v", r.code, err)
	}
	if err := <-e.impl.ended; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("handler ended with %v", err)
	}
	r, err = e.g.call(ctxT(t), grpcReq{path: "/test.Echo/Echo", timeout: "1x", msgs: [][]byte{nil}})
	if err != nil || r.code != rt.InvalidArgument || !strings.HasPrefix(r.message, "test.Echo/Echo: ") {
		t.Errorf("bad grpc-timeout: %v %q %v", r.code, r.message, err)
	}
}

// A client that cancels its call (RST_STREAM) cancels the handler's
// context.
func TestGRPCCancelReachesHandler(t *testing.T) {
	e := newGRPCEnv(t)
	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan error, 1)
	go func() {
		_, err := e.g.call(ctx, grpcReq{path: "/test.Echo/Echo", msgs: [][]byte{[]byte("sleep")}})
		done <- err
	}()
	<-e.impl.started
	cancel()
	if err := <-e.impl.ended; !errors.Is(err, context.Canceled) {
		t.Errorf("handler ended with %v", err)
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("client got %v", err)
	}
}

// A request message over the server's limit is refused with
// ResourceExhausted, compressed or not, and the connection goes on.
func TestGRPCMessageSizeLimit(t *testing.T) {
	e := newGRPCEnv(t, rt.WithMaxFrameSize(64<<10))
	big := []byte(strings.Repeat("x", 100<<10))
	for _, q := range []grpcReq{
		{path: "/test.Echo/Echo", msgs: [][]byte{big}},
		{path: "/test.Echo/Echo", msgs: [][]byte{big}, gzip: true}, // 100 KiB in a few hundred bytes
	} {
		r, err := e.g.call(ctxT(t), q)
		if err != nil || r.code != rt.ResourceExhausted || !strings.Contains(r.message, "limit") {
			t.Errorf("gzip %v: %v %q %v", q.gzip, r.code, r.message, err)
		}
	}
	if got, err := e.g.unary(ctxT(t), "/test.Echo/Echo", "after"); err != nil || got != "after" {
		t.Errorf("after: %q %v", got, err)
	}
}

// grpc-encoding gzip: the request is decompressed, the answer compressed
// (when large enough); identity always works; other encodings are
// Unimplemented, naming what the server takes.
func TestGRPCGzip(t *testing.T) {
	e := newGRPCEnv(t)
	big := strings.Repeat("compress me ", 1000)
	for _, s := range []string{"small", big} {
		r, err := e.g.call(ctxT(t), grpcReq{path: "/test.Echo/Echo", msgs: [][]byte{[]byte(s)}, gzip: true})
		if err != nil || r.err() != nil || len(r.msgs) != 1 || string(r.msgs[0]) != s {
			t.Fatalf("gzip %d bytes: %v %v", len(s), err, r.err())
		}
		if r.header.Get("Grpc-Encoding") != "gzip" || r.compressed != (s == big) {
			t.Errorf("%d bytes: grpc-encoding %q, compressed %v", len(s), r.header.Get("Grpc-Encoding"), r.compressed)
		}
	}
	r, err := e.g.call(ctxT(t), grpcReq{path: "/test.Echo/Echo", msgs: [][]byte{nil}, md: md("Grpc-Encoding", "snappy")})
	if err != nil || r.code != rt.Unimplemented || r.header.Get("Grpc-Accept-Encoding") == "" {
		t.Errorf("snappy: %v %v %v", r.code, r.header, err)
	}
}

// Unknown methods are Unimplemented; what is not a gRPC request gets an
// HTTP error.
func TestGRPCBadRequests(t *testing.T) {
	e := newGRPCEnv(t)
	r, err := e.g.call(ctxT(t), grpcReq{path: "/test.Echo/Nope", msgs: [][]byte{nil}})
	if err != nil || r.code != rt.Unimplemented || !strings.Contains(r.message, "test.Echo/Nope") {
		t.Errorf("unknown method: %v %q %v", r.code, r.message, err)
	}
	r, _ = e.g.call(ctxT(t), grpcReq{path: "/test.Echo/Echo", msgs: [][]byte{nil}, ctype: "application/grpc+json"})
	if r.httpStatus != http.StatusUnsupportedMediaType {
		t.Errorf("+json: HTTP %d", r.httpStatus)
	}
	res, err := e.g.hc.Get(e.g.base + "/test.Echo/Echo")
	if err != nil || res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %v %v", res, err)
	}
	res.Body.Close()
	h1 := newHTTP1Client(t, e.addr)
	r, _ = h1.call(ctxT(t), grpcReq{path: "/test.Echo/Echo", msgs: [][]byte{nil}})
	if r.httpStatus != http.StatusHTTPVersionNotSupported {
		t.Errorf("gRPC over HTTP/1.1: HTTP %d", r.httpStatus)
	}
	// A request without a message, and a bad one.
	r, err = e.g.call(ctxT(t), grpcReq{path: "/test.Echo/Echo"})
	if err != nil || r.code != rt.InvalidArgument {
		t.Errorf("no message: %v %v", r.code, err)
	}
	r, err = e.g.call(ctxT(t), grpcReq{path: "/test.Echo/Echo", msgs: [][]byte{[]byte("bad")}})
	if err != nil || r.code != rt.InvalidArgument || !strings.Contains(r.message, "decode") {
		t.Errorf("bad message: %v %q %v", r.code, r.message, err)
	}
}

// Validate's failure is InvalidArgument with a google.rpc.BadRequest
// naming the field; an *Error's Details reach the client as they are.
func TestGRPCErrorDetails(t *testing.T) {
	e := newGRPCEnv(t)
	r, err := e.g.call(ctxT(t), grpcReq{path: "/grpctest.Probe/Checked", msgs: [][]byte{[]byte("invalid")}})
	if err != nil || r.code != rt.InvalidArgument {
		t.Fatalf("invalid: %v %v", r.code, err)
	}
	var st grpcwire.Status
	if err := st.Unmarshal(r.details); err != nil {
		t.Fatal(err)
	}
	if st.Code != int32(rt.InvalidArgument) || st.Message != r.message || len(st.Details) != 1 || st.Details[0].TypeURL != grpcwire.TypeBadRequest {
		t.Fatalf("status details %+v", st)
	}
	vs, err := grpcwire.ParseBadRequest(st.Details[0].Value)
	if err != nil || len(vs) != 1 || vs[0].Field != "s" || vs[0].Description != `must not be "invalid"` {
		t.Errorf("violations %+v %v", vs, err)
	}
	if got, err := e.g.unary(ctxT(t), "/grpctest.Probe/Checked", "valid"); err != nil || got != "valid" {
		t.Errorf("valid: %q %v", got, err)
	}
	r, err = e.g.call(ctxT(t), grpcReq{path: "/grpctest.Probe/Details", msgs: [][]byte{nil}})
	if err != nil || r.code != rt.FailedPrecondition {
		t.Fatalf("details: %v %v", r.code, err)
	}
	if err := st.Unmarshal(r.details); err != nil {
		t.Fatal(err)
	}
	want := grpcwire.Status{Code: int32(rt.FailedPrecondition), Message: "with details", Details: []grpcwire.Any{{TypeURL: "type.googleapis.com/test.Detail", Value: []byte{0x08, 0x2a}}}}
	if d := cmp.Diff(want, st); d != "" {
		t.Errorf("details (-want +got):\n%s", d)
	}
}

// Oneway methods answer google.protobuf.Empty once the handler ran.
func TestGRPCOneway(t *testing.T) {
	e := newGRPCEnv(t)
	r, err := e.g.call(ctxT(t), grpcReq{path: "/test.Echo/Fire", msgs: [][]byte{[]byte("fired")}})
	if err != nil || r.err() != nil || len(r.msgs) != 1 || len(r.msgs[0]) != 0 {
		t.Fatalf("Fire: %v %v %q", err, r.err(), r.msgs)
	}
	if got := <-e.impl.oneways; got != "fired" {
		t.Errorf("handler got %q", got)
	}
}

// Server interceptors, metrics and rate limits apply to gRPC calls as to
// yrpc's.
func TestGRPCInterceptorsMetricsLimits(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	icpt := func(ctx context.Context, req rt.Message, info *rt.CallInfo, next rt.Handler) (rt.Message, error) {
		mu.Lock()
		seen = append(seen, info.Method.FullName)
		mu.Unlock()
		return next(ctx, req)
	}
	e := newGRPCEnv(t, rt.WithServerInterceptors(icpt), rt.WithLimits(rt.Limits{MaxCalls: 1}))
	if _, err := e.g.unary(ctxT(t), "/test.Echo/Echo", "x"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if !cmp.Equal(seen, []string{"test.Echo/Echo"}) {
		t.Errorf("interceptor saw %q", seen)
	}
	mu.Unlock()
	if s, ok := e.srv.Metrics().Call(metrics.Server, testDesc.Name, "Echo"); !ok || s.Count != 1 {
		t.Errorf("server metrics of the gRPC call: %+v (found %v)", s, ok)
	}
	// MaxCalls: one call in flight, the next refused and marked so.
	go func() { _, _ = e.g.unary(ctxT(t), "/test.Echo/Echo", "sleep") }()
	<-e.impl.started
	r, err := e.g.call(ctxT(t), grpcReq{path: "/test.Echo/Echo", msgs: [][]byte{nil}})
	if err != nil || r.code != rt.ResourceExhausted || r.header.Get("Yrpc-Refused") != "1" {
		t.Errorf("over MaxCalls: %v %q %v", r.code, r.header, err)
	}
}

// A rate limit of the schema refuses gRPC calls past it per client IP.
func TestGRPCRateLimit(t *testing.T) {
	desc := testDesc
	desc.Policy.RateLimit = rt.RateLimitPolicy{Rate: 1, Burst: 2}
	checkLeaks(t)
	srv := rt.NewServer()
	srv.RegisterService(&desc, newTestImpl())
	addr := serve(t, srv)
	g := newH2CClient(t, addr)
	var codes []rt.Code
	for range 3 {
		r, err := g.call(ctxT(t), grpcReq{path: "/test.Echo/Echo", msgs: [][]byte{nil}})
		if err != nil {
			t.Fatal(err)
		}
		codes = append(codes, r.code)
	}
	if !cmp.Equal(codes, []rt.Code{rt.OK, rt.OK, rt.ResourceExhausted}) {
		t.Errorf("codes %v", codes)
	}
}

// serve serves srv on a loopback port until the test ends.
func serve(t *testing.T, srv *rt.Server) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), lis) }()
	<-srv.Ready()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return lis.Addr().String()
}

// Streams of the three kinds over HTTP/2, through HandleStream: messages
// both ways, response metadata in the headers, SetTrailer's in the
// trailers, errors after messages in the trailers.
func TestGRPCStreams(t *testing.T) {
	e := newGRPCEnv(t)
	t.Run("server", func(t *testing.T) {
		r, err := e.g.call(ctxT(t), grpcReq{path: "/grpctest.Probe/List", msgs: [][]byte{[]byte("3")}})
		if err != nil || r.err() != nil {
			t.Fatal(err, r.err())
		}
		if got := strings.Join(bytesToStrings(r.msgs), ","); got != "0,1,2" || r.header.Get("List") != "headers" || r.trailer.Get("List-Count") != "3" {
			t.Errorf("messages %q, header %q, trailer %q", got, r.header.Get("List"), r.trailer.Get("List-Count"))
		}
		r, err = e.g.call(ctxT(t), grpcReq{path: "/grpctest.Probe/List", msgs: [][]byte{[]byte("2:fail")}})
		if err != nil || r.code != rt.Aborted || len(r.msgs) != 2 {
			t.Errorf("failing stream: %v %d messages %v", r.code, len(r.msgs), err)
		}
	})
	t.Run("client", func(t *testing.T) {
		r, err := e.g.call(ctxT(t), grpcReq{path: "/grpctest.Probe/Sum", msgs: [][]byte{[]byte("a"), []byte("b"), []byte("c")}})
		if err != nil || r.err() != nil || len(r.msgs) != 1 || string(r.msgs[0]) != "a+b+c" {
			t.Fatalf("Sum: %v %v %q", err, r.err(), r.msgs)
		}
		// Each message is validated.
		r, err = e.g.call(ctxT(t), grpcReq{path: "/grpctest.Probe/Sum", msgs: [][]byte{[]byte("a"), []byte("invalid")}})
		if err != nil || r.code != rt.InvalidArgument || r.details == nil {
			t.Errorf("invalid message: %v %v", r.code, err)
		}
	})
	t.Run("bidi", func(t *testing.T) {
		s := e.g.stream(t, ctxT(t), "/grpctest.Probe/Chat", nil)
		for _, m := range []string{"a", "b"} {
			if err := s.send(m); err != nil {
				t.Fatal(err)
			}
			if got, err := s.recv(); err != nil || got != "echo:"+m {
				t.Fatalf("recv %q %v", got, err)
			}
		}
		if err := s.closeSend(); err != nil {
			t.Fatal(err)
		}
		if got, err := s.recv(); err != io.EOF {
			t.Errorf("after half-close: %q %v", got, err)
		}
		s = e.g.stream(t, ctxT(t), "/grpctest.Probe/Chat", nil)
		_ = s.send("x")
		_, _ = s.recv()
		_ = s.send("fail")
		if _, err := s.recv(); rt.CodeOf(err) != rt.DataLoss {
			t.Errorf("failed chat: %v", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		// A handler blocked in RecvMsg ends at the deadline.
		s := e.g.stream(t, ctxT(t), "/grpctest.Probe/Chat", md("Grpc-Timeout", "30m"))
		if err := s.send("a"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.recv(); err != nil || got != "echo:a" {
			t.Fatalf("recv %q %v", got, err)
		}
		if _, err := s.recv(); rt.CodeOf(err) != rt.DeadlineExceeded {
			t.Errorf("blocked stream: %v", err)
		}
	})
}

func bytesToStrings(bs [][]byte) []string {
	s := make([]string, len(bs))
	for i, b := range bs {
		s[i] = string(b)
	}
	return s
}

// gRPC-Web over HTTP/1.1 and HTTP/2: unary calls, server streams, errors
// and metadata in the trailers frame; client and bidi streams are
// Unimplemented.
func TestGRPCWeb(t *testing.T) {
	e := newGRPCEnv(t)
	for name, c := range map[string]*grpcClient{"http1": newHTTP1Client(t, e.addr), "h2c": e.g} {
		t.Run(name, func(t *testing.T) {
			r, err := c.call(ctxT(t), grpcReq{web: true, path: "/test.Echo/Echo", msgs: [][]byte{[]byte("web")}})
			if err != nil || r.err() != nil || len(r.msgs) != 1 || string(r.msgs[0]) != "web" {
				t.Fatalf("unary: %v %v %q", err, r.err(), r.msgs)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/grpc-web+proto" {
				t.Errorf("content type %q", ct)
			}
			r, err = c.call(ctxT(t), grpcReq{web: true, path: "/grpctest.Probe/Meta", msgs: [][]byte{[]byte("t-bin=\x00\xff")}})
			if v, _ := grpcwire.DecodeBinary(r.trailer.Get("t-bin")); err != nil || v != "\x00\xff" {
				t.Errorf("trailer t-bin %q %v", r.trailer.Get("t-bin"), err)
			}
			r, err = c.call(ctxT(t), grpcReq{web: true, path: "/grpctest.Probe/List", msgs: [][]byte{[]byte("3:fail")}})
			if err != nil || r.code != rt.Aborted || len(r.msgs) != 3 || r.trailer.Get("list-count") != "3" {
				t.Errorf("server stream: %v %d messages, trailer %v, %v", r.code, len(r.msgs), r.trailer, err)
			}
			r, err = c.call(ctxT(t), grpcReq{web: true, path: "/test.Echo/Echo", msgs: [][]byte{[]byte("fail:7:no")}})
			if err != nil || r.code != rt.PermissionDenied || r.message != "no" {
				t.Errorf("error: %v %q %v", r.code, r.message, err)
			}
			r, err = c.call(ctxT(t), grpcReq{web: true, path: "/grpctest.Probe/Sum", msgs: [][]byte{[]byte("a")}})
			if err != nil || r.code != rt.Unimplemented {
				t.Errorf("client stream: %v %v", r.code, err)
			}
		})
	}
}

package rt_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/internal/grpcwire"
)

// grpcClient is a minimal gRPC and gRPC-Web client on net/http's client,
// as another language's gRPC library would talk to a yrpc server.
type grpcClient struct {
	hc   *http.Client
	base string // "http://addr" or "https://addr"
}

// newH2CClient returns a gRPC client of addr over HTTP/2 without TLS.
func newH2CClient(t testing.TB, addr string) *grpcClient {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return newGRPCClient(t, "http://"+addr, &http.Transport{Protocols: &p})
}

// newTLSGRPCClient returns a gRPC client of addr over HTTP/2 with TLS
// (HTTP/1.1 too with http1, for gRPC-Web).
func newTLSGRPCClient(t testing.TB, addr string, cfg *tls.Config, http1 bool) *grpcClient {
	var p http.Protocols
	p.SetHTTP2(true)
	p.SetHTTP1(http1)
	return newGRPCClient(t, "https://"+addr, &http.Transport{Protocols: &p, TLSClientConfig: cfg})
}

// newHTTP1Client returns a plaintext HTTP/1.1 client, for gRPC-Web.
func newHTTP1Client(t testing.TB, addr string) *grpcClient {
	var p http.Protocols
	p.SetHTTP1(true)
	return newGRPCClient(t, "http://"+addr, &http.Transport{Protocols: &p})
}

func newGRPCClient(t testing.TB, base string, tr *http.Transport) *grpcClient {
	tr.DialContext = (&net.Dialer{}).DialContext
	t.Cleanup(tr.CloseIdleConnections)
	return &grpcClient{hc: &http.Client{Transport: tr}, base: base}
}

// grpcReq is one call.
type grpcReq struct {
	path    string      // "/test.Echo/Echo"
	msgs    [][]byte    // request messages
	md      http.Header // request metadata
	timeout string      // grpc-timeout
	gzip    bool        // compress the messages, grpc-encoding gzip
	web     bool        // gRPC-Web
	ctype   string      // overrides the content type
	body    io.Reader   // overrides msgs
}

// grpcResp is a call's answer.
type grpcResp struct {
	httpStatus int
	header     http.Header
	trailer    http.Header // (gRPC-Web: parsed from the trailers frame)
	msgs       [][]byte
	code       rt.Code
	message    string
	details    []byte // grpc-status-details-bin, decoded
	compressed bool   // a message came compressed
}

// status returns the answer's status as an error, nil for OK.
func (r *grpcResp) err() error {
	if r.code == rt.OK {
		return nil
	}
	return &rt.Error{Code: r.code, Message: r.message, Remote: true}
}

// call makes one call and reads its whole answer.
func (c *grpcClient) call(ctx context.Context, q grpcReq) (*grpcResp, error) {
	body := q.body
	if body == nil {
		var b []byte
		zw := gzip.NewWriter(nil)
		for _, m := range q.msgs {
			if q.gzip {
				z := grpcwire.Compress(zw, nil, m)
				b = append(grpcwire.AppendHeader(b, grpcwire.FlagCompressed, len(z)), z...)
			} else {
				b = append(grpcwire.AppendHeader(b, 0, len(m)), m...)
			}
		}
		body = bytes.NewReader(b)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+q.path, body)
	if err != nil {
		return nil, err
	}
	for k, vs := range q.md {
		hr.Header[k] = vs
	}
	ct := "application/grpc"
	if q.web {
		ct = "application/grpc-web+proto"
	}
	if q.ctype != "" {
		ct = q.ctype
	}
	hr.Header.Set("Content-Type", ct)
	hr.Header.Set("TE", "trailers")
	if q.timeout != "" {
		hr.Header.Set("Grpc-Timeout", q.timeout)
	}
	if q.gzip {
		hr.Header.Set("Grpc-Encoding", "gzip")
	}
	res, err := c.hc.Do(hr)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	r := &grpcResp{httpStatus: res.StatusCode, header: res.Header}
	rd := grpcwire.NewReader(res.Body, 64<<20, nil)
	zr := new(gzip.Reader)
	for {
		flags, m, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return r, err
		}
		if flags&grpcwire.FlagTrailers != 0 {
			kv, err := grpcwire.ParseWebTrailers(m)
			if err != nil {
				return r, err
			}
			r.trailer = http.Header{}
			for i := 0; i < len(kv); i += 2 {
				r.trailer.Add(kv[i], kv[i+1])
			}
			continue
		}
		if flags&grpcwire.FlagCompressed != 0 {
			r.compressed = true
			if m, err = grpcwire.Decompress(zr, nil, m, 64<<20); err != nil {
				return r, err
			}
		}
		r.msgs = append(r.msgs, bytes.Clone(m))
	}
	if r.trailer == nil {
		r.trailer = res.Trailer
	}
	st := r.trailer
	if st.Get("Grpc-Status") == "" {
		st = res.Header // Trailers-Only
	}
	if res.StatusCode != http.StatusOK {
		return r, fmt.Errorf("HTTP status %d", res.StatusCode)
	}
	n, err := strconv.Atoi(st.Get("Grpc-Status"))
	if err != nil {
		return r, fmt.Errorf("grpc-status %q: %v", st.Get("Grpc-Status"), err)
	}
	r.code, r.message = rt.Code(n), grpcwire.DecodeMessage(st.Get("Grpc-Message"))
	if d := st.Get("Grpc-Status-Details-Bin"); d != "" {
		s, err := grpcwire.DecodeBinary(d)
		if err != nil {
			return r, err
		}
		r.details = []byte(s)
	}
	return r, nil
}

// unary calls path with one message and returns the answer's one message.
func (c *grpcClient) unary(ctx context.Context, path, msg string) (string, error) {
	r, err := c.call(ctx, grpcReq{path: path, msgs: [][]byte{[]byte(msg)}})
	if err != nil {
		return "", err
	}
	if err := r.err(); err != nil {
		return "", err
	}
	if len(r.msgs) != 1 {
		return "", fmt.Errorf("%d response messages", len(r.msgs))
	}
	return string(r.msgs[0]), nil
}

// md returns a header of metadata pairs.
func md(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// grpcEnv is a server with the test and probe services on loopback TCP,
// a yrpc client and an h2c gRPC client of it.
type grpcEnv struct {
	impl *testImpl
	srv  *rt.Server
	addr string
	cli  *rt.Client
	g    *grpcClient
}

func newGRPCEnv(t *testing.T, opts ...rt.ServerOption) *grpcEnv {
	t.Helper()
	return newGRPCEnvWith(t, nil, opts...)
}

// newGRPCEnvWith is newGRPCEnv whose server also registers what register
// registers.
func newGRPCEnvWith(t *testing.T, register func(*rt.Server), opts ...rt.ServerOption) *grpcEnv {
	t.Helper()
	checkLeaks(t)
	e := &grpcEnv{impl: newTestImpl(), srv: rt.NewServer(opts...)}
	e.srv.RegisterService(&testDesc, e.impl)
	e.srv.RegisterService(&probeDesc, struct{}{})
	if register != nil {
		register(e.srv)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = lis.Addr().String()
	done := make(chan error, 1)
	go func() { done <- e.srv.Serve(context.Background(), lis) }()
	<-e.srv.Ready()
	e.cli, err = rt.NewClient(rt.WithAddrs(e.addr))
	if err != nil {
		t.Fatal(err)
	}
	e.g = newH2CClient(t, e.addr)
	t.Cleanup(func() {
		e.cli.Close()
		e.srv.Close()
		if err := <-done; !errors.Is(err, rt.ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return e
}

// clientStream is a bidirectional gRPC stream of a grpcClient.
type clientStream struct {
	pw   *io.PipeWriter
	done chan struct{} // closed when the response headers (or an error) came
	res  *http.Response
	err  error
	rd   *grpcwire.Reader
}

// stream opens a stream of path; its request body is written as the
// test sends.
func (c *grpcClient) stream(t testing.TB, ctx context.Context, path string, h http.Header) *clientStream {
	pr, pw := io.Pipe()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, pr)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range h {
		hr.Header[k] = vs
	}
	hr.Header.Set("Content-Type", "application/grpc")
	hr.Header.Set("TE", "trailers")
	s := &clientStream{pw: pw, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.res, s.err = c.hc.Do(hr)
		if s.err == nil {
			s.rd = grpcwire.NewReader(s.res.Body, 1<<20, nil)
		}
	}()
	t.Cleanup(func() {
		pw.CloseWithError(errors.New("test over"))
		<-s.done
		if s.res != nil {
			s.res.Body.Close()
		}
	})
	return s
}

func (s *clientStream) send(m string) error {
	_, err := s.pw.Write(append(grpcwire.AppendHeader(nil, 0, len(m)), m...))
	return err
}

func (s *clientStream) closeSend() error { return s.pw.Close() }

// recv returns the next message, or io.EOF and the stream's status.
func (s *clientStream) recv() (string, error) {
	<-s.done
	if s.err != nil {
		return "", s.err
	}
	_, m, err := s.rd.Next()
	if err == io.EOF {
		if st := s.status(); st != nil {
			return "", st
		}
	}
	return string(m), err
}

// status is the stream's status once recv returned io.EOF: nil for OK.
func (s *clientStream) status() error {
	st := s.res.Trailer
	if st.Get("Grpc-Status") == "" {
		st = s.res.Header
	}
	n, err := strconv.Atoi(st.Get("Grpc-Status"))
	if err != nil {
		return fmt.Errorf("grpc-status %q", st.Get("Grpc-Status"))
	}
	if n == 0 {
		return nil
	}
	return &rt.Error{Code: rt.Code(n), Message: grpcwire.DecodeMessage(st.Get("Grpc-Message")), Remote: true}
}

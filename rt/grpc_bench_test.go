package rt_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/internal/grpcwire"
)

// grpcBench is a server with the test service on loopback TCP and a
// gRPC client of it on net/http's HTTP/2 client (h2c), making unary calls
// with a 581-byte body as BenchmarkUnary does.
type grpcBench struct {
	hc   *http.Client
	url  string
	body []byte
}

func newGRPCBench(b *testing.B) *grpcBench {
	srv := rt.NewServer(rt.WithObserver(nil))
	srv.RegisterService(&testDesc, newTestImpl())
	addr := serveB(b, srv)
	g := newH2CClient(b, addr)
	m := strings.Repeat("x", 581)
	return &grpcBench{hc: g.hc, url: g.base + "/test.Echo/Echo", body: append(grpcwire.AppendHeader(nil, 0, len(m)), m...)}
}

// call makes one call and checks its answer.
func (g *grpcBench) call(b *testing.B, buf []byte) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, g.url, bytes.NewReader(g.body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header = http.Header{"Content-Type": {"application/grpc"}, "Te": {"trailers"}}
	res, err := g.hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.ReadFull(res.Body, buf)
	if err != nil && err != io.ErrUnexpectedEOF {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if n != len(g.body) || res.Trailer.Get("Grpc-Status") != "0" {
		b.Fatalf("answer of %d bytes, status %q", n, res.Trailer.Get("Grpc-Status"))
	}
}

func serveB(b *testing.B, srv *rt.Server) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), lis) }()
	<-srv.Ready()
	b.Cleanup(func() {
		srv.Close()
		<-done
	})
	return lis.Addr().String()
}

// BenchmarkGRPCUnary measures one gRPC call at a time over loopback TCP,
// client (net/http's) and server in this process.
func BenchmarkGRPCUnary(b *testing.B) {
	g := newGRPCBench(b)
	buf := make([]byte, 1024)
	b.ReportAllocs()
	for b.Loop() {
		g.call(b, buf)
	}
}

// BenchmarkGRPCUnaryParallel measures many concurrent gRPC callers
// sharing one HTTP/2 connection.
func BenchmarkGRPCUnaryParallel(b *testing.B) {
	g := newGRPCBench(b)
	b.SetParallelism(32)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		buf := make([]byte, 1024)
		for pb.Next() {
			g.call(b, buf)
		}
	})
}

// BenchmarkGRPCUnaryServerAllocs splits the allocations of
// BenchmarkGRPCUnary between the server (yrpc's HTTP/2 server and
// handler; net/http's for HTTP/1.1) and the client, by the stacks of a
// memory profile recording every allocation. Its ns/op are inflated by
// the profiling.
func BenchmarkGRPCUnaryServerAllocs(b *testing.B) {
	g := newGRPCBench(b)
	buf := make([]byte, 1024)
	for range 100 {
		g.call(b, buf) // warm up pools and connections
	}
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	before := serverAllocs()
	n := 0
	for b.Loop() {
		g.call(b, buf)
		n++
	}
	after := serverAllocs()
	for side, k := range map[string]int{"server": 0, "rt": 1, "client": 2} {
		b.ReportMetric(float64(after[k]-before[k])/float64(n), side+"-allocs/op")
	}
}

// serverAllocs counts the allocations of the memory profile made on the
// server side (yrpc's runtime, or net/http's server), those of them in
// yrpc's code, and the others.
func serverAllocs() [3]int64 {
	runtime.GC()
	runtime.GC() // the profile is as of the last completed GC
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, true)
	for {
		recs = make([]runtime.MemProfileRecord, n+50)
		var ok bool
		if n, ok = runtime.MemProfile(recs, true); ok {
			recs = recs[:n]
			break
		}
	}
	var out [3]int64
	for _, r := range recs {
		server, handler := false, false
		frames := runtime.CallersFrames(r.Stack())
		for {
			f, more := frames.Next()
			switch {
			case strings.Contains(f.Function, "http2serverConn") || strings.Contains(f.Function, "http2responseWriter") ||
				strings.Contains(f.Function, "net/http.(*conn)") || strings.Contains(f.Function, "http2chunkWriter"):
				server = true
			case strings.HasPrefix(f.Function, "github.com/yrpc/yrpc/rt.") && !strings.Contains(f.Function, "rt_test"):
				server, handler = true, true
			}
			if !more {
				break
			}
		}
		switch {
		case handler:
			out[0] += r.AllocObjects
			out[1] += r.AllocObjects
		case server:
			out[0] += r.AllocObjects
		default:
			out[2] += r.AllocObjects
		}
	}
	return out
}

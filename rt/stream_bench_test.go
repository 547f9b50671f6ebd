package rt_test

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yrpc/yrpc/internal/benchcpu"
	"github.com/yrpc/yrpc/rt"
)

// benchBody is the size of the body of BenchmarkUnary's message.
var benchBody = strings.Repeat("x", 581)

// pump serves bench.Feed/Pump: it answers a request "N" with N messages
// of benchBody.
func pump(_ any, ss rt.ServerStreamer) error {
	var req msg
	if err := ss.RecvMsg(&req); err != nil {
		return err
	}
	n, _ := strconv.Atoi(req.S)
	m := &msg{S: benchBody}
	for range n {
		if err := ss.SendMsg(m); err != nil {
			return err
		}
	}
	return nil
}

// echoAll serves bench.Feed/Echo: every message back, until the client
// half-closes.
func echoAll(_ any, ss rt.ServerStreamer) error {
	var m msg
	for {
		if err := ss.RecvMsg(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if err := ss.SendMsg(&m); err != nil {
			return err
		}
	}
}

var benchFeedDesc = rt.ServiceDesc{
	Name: "bench.Feed",
	Methods: []rt.MethodDesc{
		{Name: "Pump", FullName: "bench.Feed/Pump", ID: 0x3001, Stream: rt.ServerStreaming,
			NewRequest: func() rt.Message { return new(msg) }, NewResponse: func() rt.Message { return new(msg) }, HandleStream: pump},
		{Name: "Echo", FullName: "bench.Feed/Echo", ID: 0x3002, Stream: rt.BidiStreaming,
			NewRequest: func() rt.Message { return new(msg) }, NewResponse: func() rt.Message { return new(msg) }, HandleStream: echoAll},
	},
	MethodIndex: func(id uint32) int {
		if id == 0x3001 || id == 0x3002 {
			return int(id - 0x3001)
		}
		return -1
	},
}

// benchStreamEnvOn starts a server of bench.Feed on loopback and a
// client calling it at scheme+address ("" for yrpc, "grpc://" for gRPC),
// both without an observer; the func stops them.
func benchStreamEnvOn(b *testing.B, scheme string) (*rt.Client, func()) {
	srv := rt.NewServer(rt.WithObserver(nil))
	srv.RegisterService(&benchFeedDesc, struct{}{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(context.Background(), lis)
	cli, err := rt.NewClient(rt.WithAddrs(scheme+lis.Addr().String()), rt.WithObserver(nil))
	if err != nil {
		b.Fatal(err)
	}
	return cli, func() { cli.Close(); srv.Close() }
}

// perMessage runs f, which moves b.N messages, and reports messages per
// second and the CPU time per message of client and server together (one
// op is one message, so cpu-ns/op and allocs/op are per message).
func perMessage(b *testing.B, f func()) {
	b.ReportAllocs()
	b.ResetTimer()
	stopCPU := benchcpu.Process(b)
	start := time.Now()
	f()
	elapsed := time.Since(start)
	b.StopTimer()
	stopCPU()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
}

// spread runs f(i, n) on k goroutines at once, i from 0 to k-1, with
// the n of each adding up to total, and waits for them.
func spread(total, k int, f func(i, n int)) {
	var wg sync.WaitGroup
	for i := range k {
		n := total / k
		if i < total%k {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i, n)
		}()
	}
	wg.Wait()
}

// BenchmarkServerStream measures a server stream's throughput in messages
// of 581 bytes over loopback TCP, client and server in this process: the
// b.N messages on one stream, or spread over 64 streams on the one
// connection.
func BenchmarkServerStream(b *testing.B) { benchServerStream(b, "") }

// BenchmarkGRPCServerStream is BenchmarkServerStream over gRPC: rt's
// gRPC client and the server's own HTTP/2.
func BenchmarkGRPCServerStream(b *testing.B) { benchServerStream(b, "grpc://") }

func benchServerStream(b *testing.B, scheme string) {
	for _, streams := range []int{1, 64} {
		b.Run("streams="+strconv.Itoa(streams), func(b *testing.B) {
			cli, stop := benchStreamEnvOn(b, scheme)
			defer stop()
			ctx := context.Background()
			perMessage(b, func() {
				spread(b.N, streams, func(_, n int) {
					cs, err := cli.NewStream(ctx, &benchFeedDesc, 0)
					if err == nil {
						err = cs.SendMsg(&msg{S: strconv.Itoa(n)})
					}
					if err != nil {
						b.Error(err)
						return
					}
					cs.CloseSend()
					var m msg
					got := 0
					for ; err == nil; got++ {
						err = cs.RecvMsg(&m)
					}
					if err != io.EOF || got-1 != n {
						b.Errorf("%d of %d messages, end %v", got-1, n, err)
					}
				})
			})
		})
	}
}

// BenchmarkBidiEcho measures round trips of a 581-byte message on bidi
// streams over loopback TCP, client and server in this process: one
// message at a time on each of c streams of one connection; one op is
// one round trip.
func BenchmarkBidiEcho(b *testing.B) { benchBidiEcho(b, "") }

// BenchmarkGRPCBidiEcho is BenchmarkBidiEcho over gRPC: rt's gRPC client
// and the server's own HTTP/2.
func BenchmarkGRPCBidiEcho(b *testing.B) { benchBidiEcho(b, "grpc://") }

func benchBidiEcho(b *testing.B, scheme string) {
	for _, c := range []int{1, 64} {
		b.Run("c="+strconv.Itoa(c), func(b *testing.B) {
			cli, stop := benchStreamEnvOn(b, scheme)
			defer stop()
			ctx := context.Background()
			streams := make([]rt.ClientStreamer, c)
			for i := range streams {
				cs, err := cli.NewStream(ctx, &benchFeedDesc, 1)
				if err != nil {
					b.Fatal(err)
				}
				streams[i] = cs
			}
			req := &msg{S: benchBody}
			perMessage(b, func() {
				spread(b.N, c, func(i, n int) {
					var resp msg
					for range n {
						err := streams[i].SendMsg(req)
						if err == nil {
							err = streams[i].RecvMsg(&resp)
						}
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
			for _, cs := range streams {
				cs.CloseSend()
				var m msg
				if err := cs.RecvMsg(&m); err != io.EOF {
					b.Fatalf("end of the echo stream: %v", err)
				}
			}
		})
	}
}

// BenchmarkStreamOpen measures a whole short stream over loopback TCP,
// client and server in this process: one op opens a server stream under
// a cancelable context (as a request's is), sends its request and reads
// its one 581-byte message to the end.
func BenchmarkStreamOpen(b *testing.B) { benchStreamOpen(b, "") }

// BenchmarkGRPCStreamOpen is BenchmarkStreamOpen over gRPC.
func BenchmarkGRPCStreamOpen(b *testing.B) { benchStreamOpen(b, "grpc://") }

func benchStreamOpen(b *testing.B, scheme string) {
	cli, stop := benchStreamEnvOn(b, scheme)
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := &msg{S: "1"}
	var m msg
	b.ReportAllocs()
	for b.Loop() {
		cs, err := cli.NewStream(ctx, &benchFeedDesc, 0)
		if err == nil {
			err = cs.SendMsg(req)
		}
		if err == nil {
			err = cs.CloseSend()
		}
		for err == nil {
			err = cs.RecvMsg(&m)
		}
		if err != io.EOF {
			b.Fatal(err)
		}
	}
}

package rt_test

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/internal/grpcwire"
	"github.com/yrpc/yrpc/rt/memnet"
	"github.com/yrpc/yrpc/rt/wire"
)

// FuzzServerConn sends arbitrary bytes to a server as one connection's
// client, then half-closes it: whatever the bytes (yrpc frames, gRPC over
// h2c, gRPC-Web over HTTP/1, or none of them), the server neither panics
// nor keeps the connection open once the client is done, nor leaves a
// goroutine behind once closed.
func FuzzServerConn(f *testing.F) {
	md := []string{"k", "v", "x-bin", "AAEC", "grpc-timeout", "1S"}
	yrpc := wire.AppendPreface(nil, wire.Preface{Features: wire.FeatureLZ4 | wire.FeatureSettings | wire.FeatureStreams})
	yrpc = wire.AppendSettingsFrame(yrpc, wire.Settings{})
	yrpc = wire.AppendFrame(yrpc, &wire.Header{Type: wire.TypeRequest, ID: 1, Method: 0x2001, Timeout: time.Second}, md, []byte("a=b\nfail=5"))
	yrpc = wire.AppendStreamOpen(yrpc, 3, 0x2008, 0, md)
	yrpc = wire.AppendFrame(yrpc, &wire.Header{Type: wire.TypeStreamMessage, ID: 3}, nil, []byte("hi"))
	yrpc = wire.AppendStreamHalfClose(yrpc, 3)
	f.Add(yrpc)
	// Compressed bodies, a server stream, window updates, a oneway call.
	var comp wire.Compressor
	big := []byte(strings.Repeat("k=v\n", 300))
	yrpc = comp.AppendFrame(yrpc, &wire.Header{Type: wire.TypeRequest, ID: 5, Method: 0x2001}, nil, big, 1)
	yrpc = wire.AppendStreamOpen(yrpc, 7, 0x2006, time.Second, nil)
	yrpc = comp.AppendFrame(yrpc, &wire.Header{Type: wire.TypeStreamMessage, ID: 7}, nil, big, 1)
	yrpc = wire.AppendWindowUpdate(yrpc, 0, 1<<20)
	yrpc = wire.AppendWindowUpdate(yrpc, 7, 1<<20)
	yrpc = wire.AppendStreamHalfClose(yrpc, 7)
	yrpc = wire.AppendFrame(yrpc, &wire.Header{Type: wire.TypeOneway, ID: 9, Method: 0x1002}, nil, []byte("fire"))
	yrpc = wire.AppendFrame(yrpc, &wire.Header{Type: wire.TypeRequest, ID: 11, Method: 0x1001}, nil, []byte("echo"))
	yrpc = wire.AppendFrame(yrpc, &wire.Header{Type: wire.TypeCancel, ID: 11}, nil, nil)
	yrpc = wire.AppendFrame(yrpc, &wire.Header{Type: wire.TypePing, ID: 13}, nil, nil)
	f.Add(yrpc)

	h2 := appendH2Frame([]byte(h2Preface), h2Settings, 0, 0, nil)
	hdrs := appendHPACKLiteral(grpcRequestHeaders("/grpctest.Probe/Meta"), "x-bin", "AAEC")
	hdrs = appendHPACKLiteral(hdrs, "grpc-timeout", "100m")
	h2 = appendH2Frame(h2, h2Headers, h2EndHeaders, 1, hdrs)
	h2 = appendH2Frame(h2, h2Data, h2EndStream, 1, []byte{0, 0, 0, 0, 3, 'a', '=', 'b'})
	h2 = appendH2Frame(h2, h2Headers, h2EndHeaders, 3, grpcRequestHeaders("/grpctest.Probe/Chat"))
	h2 = appendH2Frame(h2, h2Data, 0, 3, []byte{0, 0, 0, 0, 1, 'x'})
	h2 = appendH2Frame(h2, h2RSTStream, 0, 3, []byte{0, 0, 0, 8})
	f.Add(h2)
	// A gzip-compressed message, metadata split over CONTINUATION frames.
	gz := appendHPACKLiteral(grpcRequestHeaders("/grpctest.Probe/Meta"), "grpc-encoding", "gzip")
	h2 = appendH2Frame([]byte(h2Preface), h2Settings, 0, 0, nil)
	h2 = appendH2Frame(h2, h2Headers, 0, 1, gz[:len(gz)/2])
	h2 = appendH2Frame(h2, h2Continuation, h2EndHeaders, 1, gz[len(gz)/2:])
	zmsg := grpcwire.Compress(gzip.NewWriter(nil), nil, big)
	h2 = appendH2Frame(h2, h2Data, h2EndStream, 1, append(grpcwire.AppendHeader(nil, grpcwire.FlagCompressed, len(zmsg)), zmsg...))
	f.Add(h2)

	body := "\x00\x00\x00\x00\x03a=b"
	f.Add([]byte("POST /grpctest.Probe/Meta HTTP/1.1\r\nHost: x\r\nContent-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body))

	ignore := goleak.IgnoreCurrent()
	f.Cleanup(func() { goleak.VerifyNone(f, ignore) }) // after the server's cleanup
	mnet := memnet.New()
	lis, err := mnet.Listen("fuzz")
	if err != nil {
		f.Fatal(err)
	}
	srv := rt.NewServer(rt.WithLogger(slog.New(slog.DiscardHandler)), rt.WithCompression(64))
	srv.RegisterService(&probeDesc, struct{}{})
	srv.RegisterService(&testDesc, newTestImpl())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), lis) }()
	f.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, rt.ErrServerClosed) {
			f.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := mnet.Dial(context.Background(), "fuzz")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		_, _ = c.Write(data) // the server may have closed the connection already
		_ = c.(interface{ CloseWrite() error }).CloseWrite()
		if _, err := io.Copy(io.Discard, c); errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("the server kept the connection open 10 s after the client was done")
		}
	})
}

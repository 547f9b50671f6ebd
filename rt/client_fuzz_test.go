package rt_test

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/memnet"
	"github.com/yrpc/yrpc/rt/wire"
)

// FuzzClientConn answers a client's call with arbitrary bytes from its
// server, which then ends its side of the connection: whatever the bytes, the call ends
// (with a response or an error) and the client does not panic.
func FuzzClientConn(f *testing.F) {
	pre := wire.AppendPreface(nil, wire.Preface{Features: wire.FeatureLZ4 | wire.FeatureSettings | wire.FeatureStreams})
	pre = wire.AppendSettingsFrame(pre, wire.Settings{MaxConcurrentCalls: 10})
	var comp wire.Compressor
	// The client's first call has request ID 1.
	f.Add(wire.AppendFrame(pre, &wire.Header{Type: wire.TypeResponse, ID: 1}, []string{"k", "v"}, []byte("hello")))
	f.Add(comp.AppendFrame(pre, &wire.Header{Type: wire.TypeResponse, ID: 1}, nil, make([]byte, 500), 1))
	f.Add(wire.AppendFrame(pre, &wire.Header{Type: wire.TypeResponse, ID: 1, Status: uint8(rt.NotFound)}, nil, []byte("no such thing")))
	f.Add(wire.AppendFrame(wire.AppendFrame(pre, &wire.Header{Type: wire.TypePing, ID: 7}, nil, nil), &wire.Header{Type: wire.TypeResponse, ID: 2}, nil, nil))
	f.Add(wire.AppendFrame(pre, &wire.Header{Type: wire.TypeGoAway, ID: 0}, nil, []byte("bye")))
	f.Fuzz(func(t *testing.T, data []byte) {
		mnet := memnet.New()
		lis, err := mnet.Listen("fuzz:1")
		if err != nil {
			t.Fatal(err)
		}
		defer lis.Close()
		served := make(chan struct{})
		go func() {
			defer close(served)
			c, err := lis.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			_, _ = c.Write(data)
			_ = c.(interface{ CloseWrite() error }).CloseWrite()
			_, _ = io.Copy(io.Discard, c) // until the client closes
		}()
		dials := 0
		dial := func(ctx context.Context, addr string) (net.Conn, error) {
			if dials++; dials > 1 {
				return nil, errors.New("fuzz: one connection only")
			}
			return mnet.Dial(ctx, addr)
		}
		cli, err := rt.NewClient(rt.WithAddrs("fuzz:1"), rt.WithDialer(dial), rt.WithCompression(64))
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := call(ctx, cli, &testDesc, 0, "hi"); errors.Is(err, context.DeadlineExceeded) {
			t.Fatal("the call outlived its connection by 10 s")
		}
		_ = lis.Close()
		<-served
	})
}

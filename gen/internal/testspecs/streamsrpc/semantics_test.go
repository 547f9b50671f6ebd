package streamsrpc_test

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yrpc/yrpc/gen/internal/testspecs/streamsrpc"
	"github.com/yrpc/yrpc/rt"
)

// The tests below state what generated stream code sees from the runtime
// in the corner cases where it once failed: each failed before its fix.

// The server validates every request before the handler sees it: stream
// messages as well as unary requests (both answer InvalidArgument).
func TestStreamMessagesValidated(t *testing.T) {
	e := start(t)
	if _, err := e.feed.Last(ctxT(t), &streamsrpc.Topic{}); rt.CodeOf(err) != rt.InvalidArgument {
		t.Fatalf("unary Last with an empty name: %v, want InvalidArgument", err)
	}
	s, err := e.feed.Watch(ctxT(t), &streamsrpc.Topic{Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, err := recvAll(s)
	if len(got) != 0 || rt.CodeOf(err) != rt.InvalidArgument {
		t.Fatalf("Watch with an empty name: %d ticks, end %v; want none and InvalidArgument", len(got), err)
	}
}

// A Send that fails locally (here: the request is larger than the peer's
// max frame size) ends the stream, as gRPC-Go does: its slot is given
// back (Active falls to 0) and the server's handler does not wait for the
// request until the caller's context ends.
func TestStreamFailedSendEndsStream(t *testing.T) {
	e := start(t)
	ctx := ctxT(t)
	if _, err := e.feed.Watch(ctx, &streamsrpc.Topic{Name: strings.Repeat("x", 5<<20)}); err == nil {
		t.Fatal("a 5 MiB request went out")
	}
	for i := 0; ; i++ {
		ps := e.cli.Providers(&streamsrpc.FeedServiceDesc)
		if len(ps) == 1 && ps[0].Active == 0 {
			return
		}
		if i == 200 {
			t.Fatalf("the failed stream is still open: %+v", ps)
		}
		time.Sleep(10 * time.Millisecond) // bounded poll for the stream to end
	}
}

type noAnswer struct {
	streamsrpc.UnimplementedFeedServer
}

func (noAnswer) Upload(rt.ClientStreamingServer[streamsrpc.Chunk, streamsrpc.Summary]) error {
	return nil
}

// A client-stream handler that returns without SendAndClose gives the
// client Internal from CloseAndRecv (a cardinality violation, as gRPC-Go
// answers), as a unary handler returning a nil response does; not io.EOF
// with a nil response.
func TestStreamClientStreamWithoutResponse(t *testing.T) {
	e := start(t, noAnswer{})
	s, err := e.feed.Upload(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := s.CloseAndRecv()
	if sum != nil || rt.CodeOf(err) != rt.Internal {
		t.Fatalf("CloseAndRecv = %+v, %v; want Internal", sum, err)
	}
}

// down is a provider whose Watch fails at once with Unavailable, before
// its first response.
type down struct {
	streamsrpc.UnimplementedFeedServer
}

func (down) Watch(*streamsrpc.Topic, rt.ServerStreamingServer[streamsrpc.Tick]) error {
	return rt.Errorf(rt.Unavailable, "down for maintenance")
}

// Watch is idempotent with Retry(3, 100ms): a server stream whose
// provider fails before the first response reaches the caller is retried
// on another provider (schema/rpc.ServerStream). rt only retries the
// opening of a stream, while it provably did not reach a provider.
func TestStreamServerStreamRetriedBeforeFirstResponse(t *testing.T) {
	e := start(t, down{}, newFeed("up"))
	ctx := ctxT(t)
	for i := range 20 { // the topics hash to both providers
		s, err := e.feed.Watch(ctx, &streamsrpc.Topic{Name: "topic-" + strconv.Itoa(i), Count: 1})
		if err != nil {
			t.Fatal(err)
		}
		got, err := recvAll(s)
		if len(got) != 1 || got[0].Text != "up" || err != io.EOF {
			t.Fatalf("topic-%d: %d ticks, end %v; want the tick of the provider that is up", i, len(got), err)
		}
	}
}

// Server.Close races with a connection's handshake: serverConn.handshake
// sets the connection's stream state (c.sc) on the connection's goroutine
// after the client has its preface, and serverConn.close reads it on the
// goroutine of Close. Run with -race: each round opens a stream, which
// completes the client's handshake, and closes the server at once.
func TestCloseRacesHandshake(t *testing.T) {
	for range 50 {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := rt.NewServer()
		streamsrpc.RegisterFeed(srv, newFeed("s"))
		done := make(chan error, 1)
		go func() { done <- srv.Serve(context.Background(), lis) }()
		cli, err := rt.NewClient(rt.WithAddrs(lis.Addr().String()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := streamsrpc.NewFeedClient(cli).Upload(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		srv.Close()
		<-done
		cli.Close()
	}
}

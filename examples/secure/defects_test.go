package main

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/rt"
)

// oversized answers "big" with a reply body over the client's frame
// limit, "bigmd" with response metadata over its metadata limit, and
// holds "slow" until release is closed.
type oversized struct {
	greeterrpc.UnimplementedGreeterServer
	started chan struct{}
	release chan struct{}
}

func (o oversized) SayHello(ctx context.Context, req *greeterrpc.HelloRequest) (*greeterrpc.HelloReply, error) {
	switch req.Name {
	case "big":
		return &greeterrpc.HelloReply{Message: strings.Repeat("x", 200<<10)}, nil
	case "bigmd":
		rt.SetResponseMetadata(ctx, "k", strings.Repeat("v", 20<<10))
	case "slow":
		close(o.started)
		<-o.release
	}
	return &greeterrpc.HelloReply{Message: "ok"}, nil
}

// TestOversizedResponse is a defect of rt found while checking the
// README's Limits section, kept here because rt is not this branch's to
// change. A client announces its frame and metadata limits in the
// handshake, and refuses an oversized request locally; the server does not
// check its responses against the client's limits: a response over them
// makes the client's reader fail the connection, and every other call on
// it fails with Unavailable. Wanted (DESIGN §9: "exceeding a limit fails
// that call, never another connection's calls", and so not other calls of
// the same connection either): that call fails, say with
// ResourceExhausted, and the unrelated call in flight succeeds.
//
// It fails today; it is skipped unless YRPC_DEFECTS=1, so that it does not
// break the build before the fix.
func TestOversizedResponse(t *testing.T) {
	if os.Getenv("YRPC_DEFECTS") != "1" {
		t.Skip("known defect of rt (responses over the client's announced limits fail its connection); YRPC_DEFECTS=1 runs it")
	}
	for _, tc := range []struct {
		name string
		opts []rt.ClientOption
	}{
		{"big", []rt.ClientOption{rt.WithMaxFrameSize(64 << 10)}}, // a 200 KiB reply
		{"bigmd", nil}, // 20 KiB of response metadata, over the default 16 KiB
	} {
		t.Run(tc.name, func(t *testing.T) {
			impl := oversized{started: make(chan struct{}), release: make(chan struct{})}
			srv := rt.NewServer()
			greeterrpc.RegisterGreeter(srv, impl)
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			served := make(chan error, 1)
			go func() { served <- srv.Serve(context.Background(), lis) }()
			defer func() { srv.Close(); <-served }()
			cli, err := rt.NewClient(append([]rt.ClientOption{rt.WithAddrs(lis.Addr().String())}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			g := greeterrpc.NewGreeterClient(cli)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()

			slow := make(chan error, 1)
			go func() {
				_, err := g.SayHello(ctx, &greeterrpc.HelloRequest{Name: "slow"})
				slow <- err
			}()
			select {
			case <-impl.started:
			case err := <-slow:
				t.Fatalf("the slow call ended before its handler ran: %v", err)
			}
			_, err = g.SayHello(ctx, &greeterrpc.HelloRequest{Name: tc.name})
			close(impl.release)
			if code := rt.CodeOf(err); code != rt.ResourceExhausted {
				t.Errorf("the oversized response: %v (code %v), want ResourceExhausted for that call alone", err, code)
			}
			if err := <-slow; err != nil {
				t.Errorf("an unrelated call on the same connection failed: %v", err)
			}
		})
	}
}

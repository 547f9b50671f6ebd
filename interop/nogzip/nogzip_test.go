package nogzip_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/stats"

	"github.com/yrpc/yrpc/examples/users/userrpc"
	pb "github.com/yrpc/yrpc/interop/userspb"
	"github.com/yrpc/yrpc/rt"
)

// echo is grpc-go's Users server whose Echo answers its request.
type echo struct{ pb.UnimplementedUsersServer }

func (echo) Echo(_ context.Context, req *pb.Scalars) (*pb.Scalars, error) { return req, nil }

// calls is a grpc-go stats.Handler that counts the calls that began and
// keeps the status of the last one.
type calls struct {
	mu    sync.Mutex
	begun int
	last  error
}

func (c *calls) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (c *calls) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (c *calls) HandleConn(context.Context, stats.ConnStats)                       {}
func (c *calls) HandleRPC(_ context.Context, s stats.RPCStats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch s := s.(type) {
	case *stats.Begin:
		c.begun++
	case *stats.End:
		c.last = s.Error
	}
}

// A yrpc client with WithCompression calls a grpc-go server that does not
// take gzip: grpc-go refuses the first, gzipped, call with Unimplemented;
// the client sends it again identity, and identity from then on: every
// call succeeds.
func TestGzipRefusedByGRPCGo(t *testing.T) {
	if encoding.GetCompressor("gzip") != nil {
		t.Fatal("this test binary links grpc-go's gzip compressor: its server would take gzip")
	}
	st := new(calls)
	s := grpc.NewServer(grpc.StatsHandler(st))
	pb.RegisterUsersServer(s, echo{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)

	cli, err := rt.NewClient(rt.WithAddrs("grpc://"+lis.Addr().String()), rt.WithCompression(100))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	c := userrpc.NewUsersClient(cli)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := &userrpc.Scalars{Text: strings.Repeat("compress me ", 100)}
	for i := range 3 {
		resp, err := c.Echo(ctx, req, rt.WithTries(1))
		if err != nil || resp.Text != req.Text {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	// grpc-go counts the refused call as begun: 4 calls, the last OK.
	if st.begun != 4 || st.last != nil {
		t.Errorf("grpc-go saw %d calls, the last ending with %v; want 4 (one refused), OK", st.begun, st.last)
	}
}

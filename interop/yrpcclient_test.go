package interop_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	_ "google.golang.org/grpc/encoding/gzip" // grpc-go's server takes and answers gzip
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/yrpc/yrpc/examples/users/userrpc"
	"github.com/yrpc/yrpc/interop"
	"github.com/yrpc/yrpc/interop/feedpb"
	pb "github.com/yrpc/yrpc/interop/userspb"
	"github.com/yrpc/yrpc/rt"
)

// grpcUsers is grpc-go's server of users.Users, as the yrpc server's
// interop.Users behaves: Get of ID 404 is NotFound, of ID 999 waits for
// its context, of ID 555 answers a 5 MiB user; Rename to the name "bad"
// fails with a google.rpc.BadRequest; the Echo methods send their
// request back. Every request goes to got; request metadata with
// interop.EchoPrefix comes back in the headers, and again in the
// trailers under "t-" and the key. Echo gzips answers with a Text of
// 1 KiB or more.
type grpcUsers struct {
	pb.UnimplementedUsersServer
	got     chan proto.Message
	waiting chan struct{}
	ended   chan error
}

func (u *grpcUsers) record(ctx context.Context, req proto.Message) {
	select {
	case u.got <- req:
	default:
	}
	md, _ := metadata.FromIncomingContext(ctx)
	header, trailer := metadata.MD{}, metadata.MD{}
	for k, vs := range md {
		if strings.HasPrefix(k, interop.EchoPrefix) {
			header[k] = vs
			trailer["t-"+k] = vs
		}
	}
	_ = grpc.SetHeader(ctx, header)
	_ = grpc.SetTrailer(ctx, trailer)
}

// reset empties got.
func (u *grpcUsers) reset() {
	for {
		select {
		case <-u.got:
		default:
			return
		}
	}
}

func (u *grpcUsers) Get(ctx context.Context, req *pb.GetUser) (*pb.User, error) {
	u.record(ctx, req)
	switch req.GetId() {
	case 404:
		return nil, status.Errorf(codes.NotFound, "user %d not found", req.GetId())
	case 555:
		return &pb.User{Id: 555, Name: strings.Repeat("n", 5<<20)}, nil
	case 999:
		u.waiting <- struct{}{}
		<-ctx.Done()
		u.ended <- ctx.Err()
		return nil, ctx.Err()
	}
	return &pb.User{Id: req.GetId(), Name: "grpc-go"}, nil
}

func (u *grpcUsers) Rename(ctx context.Context, req *pb.CreateUser) (*pb.User, error) {
	u.record(ctx, req)
	if req.GetName() == "bad" {
		st, err := status.New(codes.InvalidArgument, "name is taken").WithDetails(&errdetails.BadRequest{
			FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "name", Description: "taken"}},
		})
		if err != nil {
			return nil, err
		}
		return nil, st.Err()
	}
	return &pb.User{Id: 1, Name: req.GetName()}, nil
}

func (u *grpcUsers) Touch(ctx context.Context, req *pb.TouchUser) (*emptypb.Empty, error) {
	u.record(ctx, req)
	return &emptypb.Empty{}, nil
}

func (u *grpcUsers) Echo(ctx context.Context, req *pb.Scalars) (*pb.Scalars, error) {
	u.record(ctx, req)
	if len(req.GetText()) >= 1024 {
		_ = grpc.SetSendCompressor(ctx, "gzip") // if the client takes it
	}
	return req, nil
}

func (u *grpcUsers) EchoOptionals(ctx context.Context, req *pb.Optionals) (*pb.Optionals, error) {
	u.record(ctx, req)
	return req, nil
}

func (u *grpcUsers) EchoLists(ctx context.Context, req *pb.Lists) (*pb.Lists, error) {
	u.record(ctx, req)
	return req, nil
}

func (u *grpcUsers) EchoMaps(ctx context.Context, req *pb.Maps) (*pb.Maps, error) {
	u.record(ctx, req)
	return req, nil
}

// grpcGoTarget is grpc-go's server of grpcUsers on a loopback port and
// the address an rt.Client calls it by: grpc://host:port over h2c,
// grpcs://host:port over TLS.
type grpcGoTarget struct {
	users *grpcUsers
	url   string
	in    *payloads // the messages the server received
}

// payloads is a grpc-go stats.Handler that keeps the sizes (Length and
// CompressedLength) of the messages received and of those sent.
type payloads struct {
	mu      sync.Mutex
	in, out [2]int // of the last message
}

func (p *payloads) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (p *payloads) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (p *payloads) HandleConn(context.Context, stats.ConnStats)                       {}
func (p *payloads) HandleRPC(_ context.Context, s stats.RPCStats) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch s := s.(type) {
	case *stats.InPayload:
		p.in = [2]int{s.Length, s.CompressedLength}
	case *stats.OutPayload:
		p.out = [2]int{s.Length, s.CompressedLength}
	}
}

// gzipped reports whether the last message received (or sent, with out)
// of at least n bytes was compressed, and its sizes.
func (p *payloads) gzipped(out bool, n int) (bool, [2]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.in
	if out {
		m = p.out
	}
	return m[0] >= n && m[1] < m[0], m
}

func startGRPCGo(t *testing.T, serverTLS *tls.Config) *grpcGoTarget {
	t.Helper()
	in := new(payloads)
	opts := []grpc.ServerOption{grpc.StatsHandler(in)}
	scheme := "grpc://"
	if serverTLS != nil {
		opts, scheme = append(opts, grpc.Creds(credentials.NewTLS(serverTLS))), "grpcs://"
	}
	g := &grpcGoTarget{in: in, users: &grpcUsers{got: make(chan proto.Message, 16), waiting: make(chan struct{}, 8), ended: make(chan error, 8)}}
	s := grpc.NewServer(opts...)
	pb.RegisterUsersServer(s, g.users)
	feedpb.RegisterFeedServer(s, &grpcFeed{users: g.users})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g.url = scheme + lis.Addr().String()
	done := make(chan error, 1)
	go func() { done <- s.Serve(lis) }()
	t.Cleanup(func() {
		s.Stop()
		if err := <-done; err != nil {
			t.Errorf("grpc-go Serve: %v", err)
		}
	})
	return g
}

// yrpcValue is the yrpc message that has the protobuf encoding of m.
type yrpcValue interface {
	MarshalAppend([]byte) []byte
	Unmarshal([]byte) error
}

// convert decodes m's protobuf encoding into to; to's encoding decoded
// back into m's type must equal m (no field lost or renumbered).
func convert(t *testing.T, m proto.Message, to yrpcValue) {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := to.Unmarshal(b); err != nil {
		t.Fatalf("%T.Unmarshal: %v", to, err)
	}
	checkSame(t, "conversion of "+string(proto.MessageName(m)), m, to)
}

// checkSame fails unless y's encoding decodes to a message equal to m,
// with no unknown fields.
func checkSame(t *testing.T, what string, m proto.Message, y yrpcValue) {
	t.Helper()
	back := m.ProtoReflect().New().Interface()
	if err := proto.Unmarshal(y.MarshalAppend(nil), back); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if diff := cmp.Diff(m, back, protocmp.Transform()); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

// A yrpc client (rt.Client at a grpc:// or grpcs:// address, the
// generated userrpc client) calls grpc-go's server: every field kind
// round-trips (grpc-go decodes what yrpc encoded and the other way), error
// codes, messages and details, metadata both ways, deadline exceeded and
// cancellation reach grpc-go's handler, a request over grpc-go's 4 MiB
// limit is refused with ResourceExhausted, as is locally an answer over
// the client's.
func TestYRPCClientCallsGRPCGo(t *testing.T) {
	serverTLS, clientTLS := testTLS(t)
	for _, tc := range []struct {
		name   string
		server *tls.Config
		client []rt.ClientOption
	}{{"h2c", nil, nil}, {"tls", serverTLS, []rt.ClientOption{rt.WithTLS(clientTLS)}}} {
		t.Run(tc.name, func(t *testing.T) {
			g := startGRPCGo(t, tc.server)
			cli, err := rt.NewClient(append(tc.client, rt.WithAddrs(g.url))...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cli.Close() })
			c := userrpc.NewUsersClient(cli)
			t.Run("field kinds", func(t *testing.T) { yrpcFieldKinds(t, g, c) })
			t.Run("errors", func(t *testing.T) { yrpcErrors(t, c) })
			t.Run("metadata", func(t *testing.T) {
				g.users.reset()
				bin := "\x00\xff\x01"
				ctx := rt.WithMetadata(ctxT(t), "echo-tenant", "acme", "echo-trace-bin", bin, "other", "x")
				var md rt.MD
				if _, err := c.Get(ctx, &userrpc.GetUser{ID: 1}, rt.ResponseMetadata(&md)); err != nil {
					t.Fatal(err)
				}
				got := recv(t, g.users.got).(*pb.GetUser)
				if got.GetId() != 1 {
					t.Errorf("grpc-go got %v", got)
				}
				for k, v := range map[string]string{"echo-tenant": "acme", "echo-trace-bin": bin, "t-echo-tenant": "acme", "t-echo-trace-bin": bin, "other": ""} {
					if md.Get(k) != v {
						t.Errorf("response metadata %q = %q, want %q (all: %q)", k, md.Get(k), v, md)
					}
				}
			})
			t.Run("deadline exceeded", func(t *testing.T) {
				_, err := c.Get(ctxT(t), &userrpc.GetUser{ID: 999}, rt.WithCallTimeout(100*time.Millisecond), rt.WithTries(1))
				if rt.CodeOf(err) != rt.DeadlineExceeded {
					t.Errorf("Get past its deadline: %v", err)
				}
				recv(t, g.users.waiting)
				if err := recv(t, g.users.ended); !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
					t.Errorf("grpc-go's handler's context ended with %v", err)
				}
			})
			t.Run("cancel", func(t *testing.T) {
				ctx, cancel := context.WithCancel(ctxT(t))
				res := make(chan error, 1)
				go func() {
					_, err := c.Get(ctx, &userrpc.GetUser{ID: 999}, rt.WithTryTimeout(10*time.Second), rt.WithTries(1))
					res <- err
				}()
				recv(t, g.users.waiting)
				cancel()
				if err := recv(t, res); rt.CodeOf(err) != rt.Canceled {
					t.Errorf("canceled Get: %v", err)
				}
				if err := recv(t, g.users.ended); !errors.Is(err, context.Canceled) {
					t.Errorf("grpc-go's handler's context ended with %v, want Canceled", err)
				}
			})
			t.Run("large messages", func(t *testing.T) { yrpcLargeMessages(t, g, c) })
			t.Run("gzip", func(t *testing.T) { yrpcGzip(t, g, c, tc.client) })
		})
	}
}

// yrpcFieldKinds sends the messages of TestGRPCGoClient's field kinds,
// converted to userrpc's types: grpc-go's server must decode what was
// sent, and its answer decode to the same.
func yrpcFieldKinds(t *testing.T, g *grpcGoTarget, c *userrpc.UsersClient) {
	ctx := ctxT(t)
	check := func(name string, want proto.Message, req yrpcValue, call func() (yrpcValue, error)) {
		t.Helper()
		convert(t, want, req)
		resp, err := call()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(want, recv(t, g.users.got), protocmp.Transform()); diff != "" {
			t.Errorf("%s: grpc-go's server got (-sent +got):\n%s", name, diff)
		}
		checkSame(t, name+": its answer", want, resp)
	}
	var s userrpc.Scalars
	check("Echo", scalars(), &s, func() (yrpcValue, error) { return c.Echo(ctx, &s) })
	var o, empty userrpc.Optionals
	check("EchoOptionals", optionals(), &o, func() (yrpcValue, error) { return c.EchoOptionals(ctx, &o) })
	check("EchoOptionals(empty)", &pb.Optionals{}, &empty, func() (yrpcValue, error) { return c.EchoOptionals(ctx, &empty) })
	var l userrpc.Lists
	check("EchoLists", lists(), &l, func() (yrpcValue, error) { return c.EchoLists(ctx, &l) })
	var m userrpc.Maps
	check("EchoMaps", maps(), &m, func() (yrpcValue, error) { return c.EchoMaps(ctx, &m) })
	var touch userrpc.TouchUser
	convert(t, &pb.TouchUser{Id: 3, At: at}, &touch)
	if err := c.Touch(ctx, &touch); err != nil {
		t.Errorf("Touch (oneway): %v", err)
	}
	if diff := cmp.Diff(&pb.TouchUser{Id: 3, At: at}, recv(t, g.users.got), protocmp.Transform()); diff != "" {
		t.Errorf("Touch: grpc-go's server got (-sent +got):\n%s", diff)
	}
}

// yrpcErrors: grpc-go's codes, messages and details reach the caller's
// *rt.Error, marked remote.
func yrpcErrors(t *testing.T, c *userrpc.UsersClient) {
	ctx := ctxT(t)
	var e *rt.Error
	_, err := c.Get(ctx, &userrpc.GetUser{ID: 404})
	if !errors.As(err, &e) || e.Code != rt.NotFound || e.Message != "user 404 not found" || !e.Remote {
		t.Errorf("Get(404): %#v", err)
	}
	_, err = c.Search(ctx, &userrpc.ListUsers{PageSize: 1})
	if !errors.As(err, &e) || e.Code != rt.Unimplemented || !e.Remote || !strings.Contains(e.Message, "Search") {
		t.Errorf("Search (grpc-go's Unimplemented): %#v", err)
	}
	req := &userrpc.CreateUser{Name: "bad", Emails: []string{"a@b.example"}, Address: &userrpc.Address{Street: "1 Main St", City: "Nice", Zip: "06000", Country: "FR"}}
	u, err := c.Rename(ctx, req) // Create's mock would hide the error
	if !errors.As(err, &e) || e.Code != rt.InvalidArgument || e.Message != "name is taken" || len(e.Details) != 1 {
		t.Fatalf("Rename(bad): %v %#v", u, err)
	}
	var br errdetails.BadRequest
	if e.Details[0].TypeURL != "type.googleapis.com/google.rpc.BadRequest" {
		t.Fatalf("detail %q", e.Details[0].TypeURL)
	}
	if err := proto.Unmarshal(e.Details[0].Value, &br); err != nil || len(br.GetFieldViolations()) != 1 || br.GetFieldViolations()[0].GetField() != "name" {
		t.Errorf("BadRequest %v (%v)", &br, err)
	}
}

// yrpcLargeMessages: a 5 MiB request is refused by grpc-go's server
// (its default limit is 4 MiB); a 5 MiB answer fails locally (the
// client's default limit is 4 MiB too); the connection goes on.
func yrpcLargeMessages(t *testing.T, g *grpcGoTarget, c *userrpc.UsersClient) {
	ctx := ctxT(t)
	g.users.reset()
	big := &userrpc.Scalars{Data: make([]byte, 5<<20)}
	if _, err := c.Echo(ctx, big); rt.CodeOf(err) != rt.ResourceExhausted || !rt.IsRemote(err) {
		t.Errorf("a 5 MiB request: %v, want grpc-go's ResourceExhausted", err)
	}
	if _, err := c.Get(ctx, &userrpc.GetUser{ID: 555}); rt.CodeOf(err) != rt.ResourceExhausted || rt.IsRemote(err) {
		t.Errorf("a 5 MiB answer: %v, want a local ResourceExhausted", err)
	}
	recv(t, g.users.got)
	if u, err := c.Get(ctx, &userrpc.GetUser{ID: 2}); err != nil || u.ID != 2 || u.Name != "grpc-go" {
		t.Errorf("a call after the refused ones: %v %v", u, err)
	}
	recv(t, g.users.got)
}

// yrpcGzip: a yrpc client takes grpc-go's gzipped answers; one with
// WithCompression gzips its requests to grpc-go's server, which says
// nothing of the encodings it takes (no grpc-accept-encoding), unary ones
// from the first call, streams once a unary call went gzipped.
func yrpcGzip(t *testing.T, g *grpcGoTarget, c *userrpc.UsersClient, opts []rt.ClientOption) {
	g.users.reset()
	req := &userrpc.Scalars{Text: strings.Repeat("compress me ", 1000)}
	resp, err := c.Echo(ctxT(t), req)
	if err != nil || resp.Text != req.Text {
		t.Fatalf("Echo: %v", err)
	}
	recv(t, g.users.got)
	if ok, sizes := g.in.gzipped(true, len(req.Text)); !ok {
		t.Errorf("grpc-go's answer (length, compressed): %d: not gzipped", sizes)
	}
	if ok, sizes := g.in.gzipped(false, len(req.Text)); ok {
		t.Errorf("a client without WithCompression gzipped its request (length, compressed): %d", sizes)
	}

	zcli, err := rt.NewClient(append(opts, rt.WithAddrs(g.url), rt.WithCompression(100))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zcli.Close() })
	zc := userrpc.NewUsersClient(zcli)
	resp, err = zc.Echo(ctxT(t), req)
	if err != nil || resp.Text != req.Text {
		t.Fatalf("Echo with WithCompression: %v", err)
	}
	recv(t, g.users.got)
	if ok, sizes := g.in.gzipped(false, len(req.Text)); !ok {
		t.Errorf("the request grpc-go received (length, compressed): %d: not gzipped", sizes)
	}
}

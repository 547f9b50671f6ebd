// Package users_test runs the users example's generated code against the
// runtime over loopback TCP: every method policy of the schema, as a user
// of the generated package sees it.
package users_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/yrpc/yrpc/examples/users/userrpc"
	"github.com/yrpc/yrpc/rt"
)

// users implements the service; Get fails for id 404 and waits for its
// context for id 999.
type users struct {
	userrpc.UnimplementedUsersServer
	touched chan int64
	ended   chan error
}

func (u *users) Get(ctx context.Context, req *userrpc.GetUser) (*userrpc.User, error) {
	switch req.ID {
	case 404:
		return nil, rt.Errorf(rt.NotFound, "user %d not found", req.ID)
	case 999:
		<-ctx.Done()
		u.ended <- ctx.Err()
		return nil, ctx.Err()
	}
	if md := rt.IncomingMetadata(ctx); md.Get("tenant") != "" {
		rt.SetResponseMetadata(ctx, "tenant", md.Get("tenant"))
	}
	return &userrpc.User{ID: req.ID, Name: "user-" + string(rune('a'+req.ID%26)), Role: userrpc.UserRoleAdmin}, nil
}

func (u *users) Touch(ctx context.Context, req *userrpc.TouchUser) error {
	u.touched <- req.ID
	return nil
}

func (u *users) Audit(ctx context.Context, req *userrpc.TouchUser) (*userrpc.User, error) {
	return nil, rt.Errorf(rt.Internal, "audit log unavailable")
}

func (u *users) Create(ctx context.Context, req *userrpc.CreateUser) (*userrpc.User, error) {
	return nil, rt.Errorf(rt.Unavailable, "database down")
}

func (u *users) Guest(ctx context.Context, req *userrpc.GetUser) (*userrpc.User, error) {
	return nil, rt.Errorf(rt.Unavailable, "guests are served by the mock")
}

func (u *users) EchoMaps(ctx context.Context, req *userrpc.Maps) (*userrpc.Maps, error) {
	return req, nil
}

func start(t *testing.T) (*userrpc.UsersClient, *users) {
	t.Helper()
	return startWith(t)
}

// startWith is start with client options of the caller's.
func startWith(t *testing.T, opts ...rt.ClientOption) (*userrpc.UsersClient, *users) {
	t.Helper()
	ignore := goleak.IgnoreCurrent() // now, not at cleanup: then it would ignore the leaks
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	impl := &users{touched: make(chan int64, 10), ended: make(chan error, 1)}
	srv := rt.NewServer()
	userrpc.RegisterUsers(srv, impl)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), lis) }()
	cli, err := rt.NewClient(append([]rt.ClientOption{rt.WithAddrs(lis.Addr().String()), rt.WithGroupVersion("HK", "1.2.0")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cli.Close()
		srv.Close()
		<-done
	})
	return userrpc.NewUsersClient(cli), impl
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestGeneratedStubsOverTCP(t *testing.T) {
	c, impl := start(t)
	ctx := ctxT(t)

	u, err := c.Get(ctx, &userrpc.GetUser{ID: 7})
	if err != nil || u.ID != 7 || u.Role != userrpc.UserRoleAdmin {
		t.Fatalf("Get = %+v, %v", u, err)
	}

	// Validation runs on the server before the handler.
	if _, err := c.Get(ctx, &userrpc.GetUser{ID: 0}); rt.CodeOf(err) != rt.InvalidArgument || !rt.IsRemote(err) {
		t.Fatalf("Get(id 0) = %v, want a remote InvalidArgument from Validate", err)
	}

	// Handler errors keep their code and message.
	_, err = c.Get(ctx, &userrpc.GetUser{ID: 404})
	var re *rt.Error
	if !errors.As(err, &re) || re.Code != rt.NotFound || re.Message != "user 404 not found" {
		t.Fatalf("Get(404) = %v", err)
	}

	// Metadata both ways.
	var md rt.MD
	if _, err := c.Get(rt.WithMetadata(ctx, "tenant", "acme"), &userrpc.GetUser{ID: 1}, rt.ResponseMetadata(&md)); err != nil || md.Get("tenant") != "acme" {
		t.Fatalf("metadata round trip: %v, %v", md, err)
	}

	// Oneway.
	if err := c.Touch(ctx, &userrpc.TouchUser{ID: 42, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-impl.touched:
		if id != 42 {
			t.Fatalf("Touch delivered id %d", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("oneway Touch never reached the handler")
	}

	// The schema's 300ms timeout on Get reaches the handler's context.
	start := time.Now()
	if _, err := c.Get(ctx, &userrpc.GetUser{ID: 999}); rt.CodeOf(err) != rt.DeadlineExceeded {
		t.Fatalf("Get(999) = %v, want DeadlineExceeded", err)
	}
	if herr := <-impl.ended; !errors.Is(herr, context.DeadlineExceeded) && !errors.Is(herr, context.Canceled) {
		t.Fatalf("handler context ended with %v", herr)
	}
	t.Logf("schema timeout 300ms: call ended after %v", time.Since(start).Round(time.Millisecond))

	// A nested message with maps of every kind crosses the wire intact.
	in := &userrpc.Maps{ByString: map[string]string{"a": "b"}, ByI64: map[int64]uint32{-1: 2},
		Addresses: map[string]*userrpc.Address{"home": {City: "Berlin", Zip: "10115", Country: "DE"}}}
	out, err := c.EchoMaps(ctx, in)
	if err != nil || !cmp.Equal(in, out) {
		t.Fatalf("EchoMaps: %v, diff %s", err, cmp.Diff(in, out))
	}
}

func TestGeneratedPolicies(t *testing.T) {
	c, _ := start(t)
	ctx := ctxT(t)

	// Delete has a forced mock that fails: the provider is never called.
	var md rt.MD
	_, err := c.Delete(ctx, &userrpc.GetUser{ID: 1}, rt.ResponseMetadata(&md))
	if rt.CodeOf(err) != rt.Unavailable || !strings.Contains(err.Error(), "deletes are disabled") || md.Get(rt.MDMock) != "forced" {
		t.Fatalf("Delete = %v (md %v), want the forced mock's Unavailable", err, md)
	}

	// Guest fails on the provider; its on-failure mock returns a value.
	g, err := c.Guest(ctx, &userrpc.GetUser{ID: 1}, rt.ResponseMetadata(&md))
	if err != nil || g.Name != "guest" || md.Get(rt.MDMock) != "fallback" {
		t.Fatalf("Guest = %+v, %v (md %v), want the mock value", g, err, md)
	}

	// Create fails on the provider; its on-failure mock returns empty.
	if u, err := c.Create(ctx, &userrpc.CreateUser{Name: "x", Emails: []string{"x@y"}, Address: &userrpc.Address{City: "c"}}); err != nil || u.ID != 0 {
		t.Fatalf("Create = %+v, %v, want the empty mock", u, err)
	}

	// Audit is failsafe: the error is swallowed.
	if u, err := c.Audit(ctx, &userrpc.TouchUser{ID: 1}); err != nil || u == nil {
		t.Fatalf("Audit = %+v, %v, want an empty response and no error", u, err)
	}

	// Unimplemented methods answer Unimplemented.
	if _, err := c.Tree(ctx, &userrpc.GetUser{ID: 1}); rt.CodeOf(err) != rt.Unimplemented {
		t.Fatalf("Tree = %v, want Unimplemented", err)
	}
}

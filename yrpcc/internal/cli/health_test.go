package cli

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/rt"
)

type greeter struct {
	greeterrpc.UnimplementedGreeterServer
}

// `ctl health` answers SERVING with exit 0, NOT_SERVING with exit 1, and
// a clear error for an address nobody serves.
func TestCtlHealth(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := rt.NewServer()
	greeterrpc.RegisterGreeter(srv, greeter{})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), lis) }()
	defer func() { srv.Close(); <-done }()
	addr := lis.Addr().String()
	run := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		e := &Env{Stdout: &out, Stderr: &errOut}
		code := e.ctl(context.Background(), append([]string{"health"}, args...))
		return code, out.String() + errOut.String()
	}
	if code, out := run(addr); code != 0 || !strings.Contains(out, addr+": SERVING") {
		t.Fatalf("serving: exit %d, %q", code, out)
	}
	// After ctl's ZooKeeper flags, as its usage line puts them.
	var out, errOut bytes.Buffer
	e := &Env{Stdout: &out, Stderr: &errOut}
	if code := e.ctl(context.Background(), []string{"-zk", "127.0.0.1:1", "--zk-tls", "--root=/x", "health", addr}); code != 0 || !strings.Contains(out.String(), addr+": SERVING") {
		t.Fatalf("after flags: exit %d, %q", code, out.String()+errOut.String())
	}
	srv.SetServing(false)
	if code, out := run(addr); code != 1 || !strings.Contains(out, "NOT_SERVING") {
		t.Fatalf("not serving: exit %d, %q", code, out)
	}
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	gone := free.Addr().String()
	free.Close()
	if code, out := run("--timeout", "2s", gone); code != 1 || !strings.Contains(out, gone) {
		t.Fatalf("no server: exit %d, %q", code, out)
	}
}

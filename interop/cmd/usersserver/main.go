// Command usersserver serves examples/users (interop.Users) on one port,
// for yrpc and gRPC clients alike, until interrupted:
//
//	go run ./interop/cmd/usersserver -addr 127.0.0.1:50051
//
// It prints "serving ADDR" once it accepts calls. The README's Python
// example calls it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"

	"github.com/yrpc/yrpc/examples/users/userrpc"
	"github.com/yrpc/yrpc/interop"
	"github.com/yrpc/yrpc/rt"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "the address to listen on")
	flag.Parse()
	if err := run(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "usersserver:", err)
		os.Exit(1)
	}
}

func run(addr string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := rt.NewServer()
	userrpc.RegisterUsers(srv, &interop.Users{})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), lis) }()
	select {
	case <-srv.Ready():
		fmt.Println("serving", lis.Addr())
	case err := <-done:
		return err
	}
	select {
	case <-ctx.Done():
		if err := srv.Shutdown(context.Background()); err != nil {
			return err
		}
		if err := <-done; !errors.Is(err, rt.ErrServerClosed) {
			return err
		}
		return nil
	case err := <-done:
		return err
	}
}

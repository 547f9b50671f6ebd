// Command greeter is the smallest yrpc program: a Greeter server and a
// client of it in one process, over loopback TCP.
//
//	go run ./examples/greeter [name]
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/rt"
)

// greeter implements greeterrpc.GreeterServer.
type greeter struct {
	greeterrpc.UnimplementedGreeterServer
}

func (greeter) SayHello(ctx context.Context, req *greeterrpc.HelloRequest) (*greeterrpc.HelloReply, error) {
	return &greeterrpc.HelloReply{Message: "Hello, " + req.Name + "!"}, nil
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "greeter:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	name := "world"
	if len(args) > 0 {
		name = args[0]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := rt.NewServer()
	greeterrpc.RegisterGreeter(srv, greeter{})
	go srv.Serve(ctx, lis)
	defer srv.Shutdown(ctx)

	cli, err := rt.NewClient(rt.WithAddrs(lis.Addr().String()))
	if err != nil {
		return err
	}
	defer cli.Close()
	reply, err := greeterrpc.NewGreeterClient(cli).SayHello(ctx, &greeterrpc.HelloRequest{Name: name})
	if err != nil {
		return err
	}
	fmt.Println(reply.Message)
	return nil
}

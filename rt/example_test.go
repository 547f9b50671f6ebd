package rt_test

import (
	"context"
	"fmt"

	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/memnet"
)

type greeter struct {
	greeterrpc.UnimplementedGreeterServer
}

func (greeter) SayHello(ctx context.Context, req *greeterrpc.HelloRequest) (*greeterrpc.HelloReply, error) {
	return &greeterrpc.HelloReply{Message: "Hello, " + req.Name}, nil
}

// A server and a client of the generated greeter, on an in-memory network
// (use net.Listen and rt.WithAddrs, or a registry, for real ones).
func Example() {
	network := memnet.New()
	lis, _ := network.Listen("greeter:1")

	srv := rt.NewServer(rt.WithObserver(nil))
	greeterrpc.RegisterGreeter(srv, greeter{})
	go srv.Serve(context.Background(), lis)
	defer srv.Close()

	cli, err := rt.NewClient(rt.WithAddrs("greeter:1"), rt.WithDialer(network.Dial), rt.WithObserver(nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cli.Close()
	reply, err := greeterrpc.NewGreeterClient(cli).SayHello(context.Background(), &greeterrpc.HelloRequest{Name: "Ada"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(reply.Message)
	// Output: Hello, Ada
}

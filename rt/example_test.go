package rt_test

import (
	"context"
	"fmt"

	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/memnet"
	"github.com/yrpc/yrpc/rt/metrics"
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

// The client's access log has a line per call, around all its attempts,
// naming the provider whose outcome the call returned. An observer beside
// the Recorder sees every attempt of every call with the address of the
// provider that served it (here to print it; a *slog.Logger in real use).
// An interceptor sees its own call's with OnAttempt.
func Example_attemptLog() {
	network := memnet.New()
	lis, _ := network.Listen("greeter:1")
	srv := rt.NewServer(rt.WithObserver(nil))
	greeterrpc.RegisterGreeter(srv, greeter{})
	go srv.Serve(context.Background(), lis)
	defer srv.Close()

	rec := metrics.NewRecorder(metrics.RecorderOptions{}) // what Client.Metrics would read without WithObserver
	attempts := metrics.ObserverFunc(func(e metrics.Event) {
		if e.Side == metrics.Client && e.Attempt > 0 {
			fmt.Printf("attempt %d of %s/%s at %s: %s\n", e.Attempt, e.Service, e.Method, e.Instance, e.Code)
		}
	})
	cli, err := rt.NewClient(rt.WithAddrs("greeter:1"), rt.WithDialer(network.Dial),
		rt.WithObserver(metrics.Multi(rec, attempts)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cli.Close()
	if _, err := greeterrpc.NewGreeterClient(cli).SayHello(context.Background(), &greeterrpc.HelloRequest{Name: "Ada"}); err != nil {
		fmt.Println(err)
		return
	}
	// Output: attempt 1 of greeter.Greeter/SayHello at greeter:1: OK
}

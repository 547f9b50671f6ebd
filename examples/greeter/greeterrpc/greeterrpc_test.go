package greeterrpc_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/codec/codectest"
)

func TestMessages(t *testing.T) {
	codectest.Suite[greeterrpc.HelloRequest](t, "HelloRequest", 1, 2000)
	codectest.Suite[greeterrpc.HelloReply](t, "HelloReply", 2, 2000)
}

func FuzzHelloRequest(f *testing.F) { codectest.Fuzz[greeterrpc.HelloRequest](f, 1) }
func FuzzHelloReply(f *testing.F)   { codectest.Fuzz[greeterrpc.HelloReply](f, 2) }

type greeter struct{}

func (greeter) SayHello(ctx context.Context, req *greeterrpc.HelloRequest) (*greeterrpc.HelloReply, error) {
	return &greeterrpc.HelloReply{Message: "Hello, " + req.Name + "!"}, nil
}

func TestGreeter(t *testing.T) {
	var lb codectest.Loopback
	greeterrpc.RegisterGreeter(&lb, greeter{})
	reply, err := greeterrpc.NewGreeterClient(&lb).SayHello(context.Background(), &greeterrpc.HelloRequest{Name: "世界"})
	if err != nil || reply.Message != "Hello, 世界!" {
		t.Fatalf("SayHello = %+v, %v", reply, err)
	}
}

func TestUnimplemented(t *testing.T) {
	var lb codectest.Loopback
	greeterrpc.RegisterGreeter(&lb, greeterrpc.UnimplementedGreeterServer{})
	_, err := greeterrpc.NewGreeterClient(&lb).SayHello(context.Background(), &greeterrpc.HelloRequest{})
	if rt.CodeOf(err) != rt.Unimplemented {
		t.Fatalf("SayHello = %v, want Unimplemented", err)
	}
}

// Example shows the generated client and server talking through an
// in-process transport.
func Example() {
	var srv codectest.Loopback // a *rt.Server in production
	greeterrpc.RegisterGreeter(&srv, greeter{})
	cli := greeterrpc.NewGreeterClient(&srv) // rt.NewClient(...) in production
	reply, err := cli.SayHello(context.Background(), &greeterrpc.HelloRequest{Name: "yrpc"})
	fmt.Println(reply.Message, err)
	// Output: Hello, yrpc! <nil>
}

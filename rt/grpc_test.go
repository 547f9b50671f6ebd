package rt_test

import (
	"testing"
)

func TestGRPCUnary(t *testing.T) {
	e := newEnv(t, nil)
	g := newH2CClient(t, e.lis.Addr().String())
	got, err := g.unary(ctxT(t), "/test.Echo/Echo", "hello")
	if err != nil || got != "hello" {
		t.Fatalf("gRPC Echo = %q, %v", got, err)
	}
	// The yrpc protocol on the same port.
	got, err = call(ctxT(t), e.cli, &testDesc, 0, "yrpc")
	if err != nil || got != "yrpc" {
		t.Fatalf("yrpc Echo = %q, %v", got, err)
	}
}

package rt_test

import (
	"context"
	"errors"
	"hash/fnv"
	"io"
	"testing"
	"time"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
)

// healthCheck asks the server's health service over gRPC.
func (c *grpcClient) healthCheck(t *testing.T, service string) (rt.HealthStatus, error) {
	t.Helper()
	req := rt.HealthCheckRequest{Service: service}
	r, err := c.call(ctxT(t), grpcReq{path: "/grpc.health.v1.Health/Check", msgs: [][]byte{req.MarshalAppend(nil)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.err(); err != nil {
		return 0, err
	}
	var resp rt.HealthCheckResponse
	if len(r.msgs) != 1 || resp.Unmarshal(r.msgs[0]) != nil {
		t.Fatalf("Check answered %q", r.msgs)
	}
	return resp.Status, nil
}

// healthWatch opens a Watch of service over gRPC.
func (c *grpcClient) healthWatch(t *testing.T, ctx context.Context, service string) func() (rt.HealthStatus, error) {
	s := c.stream(t, ctx, "/grpc.health.v1.Health/Watch", nil)
	req := rt.HealthCheckRequest{Service: service}
	if err := s.send(string(req.MarshalAppend(nil))); err != nil {
		t.Fatal(err)
	}
	if err := s.closeSend(); err != nil {
		t.Fatal(err)
	}
	return func() (rt.HealthStatus, error) {
		m, err := s.recv()
		if err != nil {
			return 0, err
		}
		var resp rt.HealthCheckResponse
		if err := resp.Unmarshal([]byte(m)); err != nil {
			t.Fatal(err)
		}
		return resp.Status, nil
	}
}

// yrpcHealthCheck asks the server's health service over yrpc's wire.
func yrpcHealthCheck(t *testing.T, cli *rt.Client, service string) (rt.HealthStatus, error) {
	var resp rt.HealthCheckResponse
	err := cli.Invoke(ctxT(t), &rt.HealthServiceDesc, 0, &rt.HealthCheckRequest{Service: service}, &resp)
	return resp.Status, err
}

// The health service's method IDs are the generator's (FNV-1a 32 of the
// full names) and its messages have protobuf's encoding.
func TestHealthDescriptor(t *testing.T) {
	for i, m := range rt.HealthServiceDesc.Methods {
		h := fnv.New32a()
		h.Write([]byte(m.FullName))
		if m.ID != h.Sum32() || rt.HealthServiceDesc.MethodIndex(m.ID) != i {
			t.Errorf("%s: ID %#x, want %#x", m.FullName, m.ID, h.Sum32())
		}
	}
	// protoc --encode=grpc.health.v1.HealthCheckResponse: status: NOT_SERVING
	if b := (&rt.HealthCheckResponse{Status: rt.HealthNotServing}).MarshalAppend(nil); string(b) != "\x08\x02" {
		t.Errorf("HealthCheckResponse encodes as %x", b)
	}
	if b := (&rt.HealthCheckRequest{Service: "a.B"}).MarshalAppend(nil); string(b) != "\x0a\x03a.B" {
		t.Errorf("HealthCheckRequest encodes as %x", b)
	}
}

// Check answers SERVING for the server and its services on both
// protocols, NotFound for others, and NOT_SERVING after SetServing(false);
// Watch sees each change.
func TestHealthCheckAndSetServing(t *testing.T) {
	e := newGRPCEnv(t)
	for _, svc := range []string{"", "test.Echo", "grpctest.Probe", rt.HealthServiceName} {
		if st, err := e.g.healthCheck(t, svc); err != nil || st != rt.HealthServing {
			t.Errorf("gRPC Check(%q) = %v, %v", svc, st, err)
		}
		if st, err := yrpcHealthCheck(t, e.cli, svc); err != nil || st != rt.HealthServing {
			t.Errorf("yrpc Check(%q) = %v, %v", svc, st, err)
		}
	}
	if _, err := e.g.healthCheck(t, "no.Such"); rt.CodeOf(err) != rt.NotFound {
		t.Errorf("gRPC Check(no.Such): %v", err)
	}
	if _, err := yrpcHealthCheck(t, e.cli, "no.Such"); rt.CodeOf(err) != rt.NotFound {
		t.Errorf("yrpc Check(no.Such): %v", err)
	}
	next := e.g.healthWatch(t, ctxT(t), "")
	unknown := e.g.healthWatch(t, ctxT(t), "no.Such")
	if st, err := unknown(); err != nil || st != rt.HealthServiceUnknown {
		t.Errorf("Watch(no.Such) = %v, %v", st, err)
	}
	for _, serving := range []bool{true, false, true} {
		e.srv.SetServing(serving)
		want := rt.HealthServing
		if !serving {
			want = rt.HealthNotServing
			if st, err := e.g.healthCheck(t, "test.Echo"); err != nil || st != want {
				t.Errorf("Check after SetServing(false) = %v, %v", st, err)
			}
			if st, err := yrpcHealthCheck(t, e.cli, ""); err != nil || st != want {
				t.Errorf("yrpc Check after SetServing(false) = %v, %v", st, err)
			}
		}
		if st, err := next(); err != nil || st != want {
			t.Errorf("Watch after SetServing(%v) = %v, %v", serving, st, err)
		}
	}
	// The server still answers calls while NOT_SERVING: it is advice.
	e.srv.SetServing(false)
	if got, err := e.g.unary(ctxT(t), "/test.Echo/Echo", "x"); err != nil || got != "x" {
		t.Errorf("call while NOT_SERVING: %q %v", got, err)
	}
}

// The governance config draining this instance makes its services
// NOT_SERVING (the server too when it drains every service), and
// undraining makes them SERVING again.
func TestHealthDraining(t *testing.T) {
	checkLeaks(t)
	reg := registry.NewMemory()
	t.Cleanup(func() { reg.Close() })
	srv := rt.NewServer(rt.WithRegistry(reg))
	srv.RegisterService(&testDesc, newTestImpl())
	addr := serve(t, srv)
	g := newH2CClient(t, addr)
	watchSvc, watchAll := g.healthWatch(t, ctxT(t), "test.Echo"), g.healthWatch(t, ctxT(t), "")
	for _, w := range []func() (rt.HealthStatus, error){watchSvc, watchAll} {
		if st, err := w(); err != nil || st != rt.HealthServing {
			t.Fatalf("Watch = %v, %v", st, err)
		}
	}
	for _, drain := range []bool{true, false} {
		err := reg.UpdateConfig(ctxT(t), registry.Key{Service: testDesc.Name}, func(c *registry.Config) error {
			c.Instances = map[string]registry.InstanceConfig{addr: {Draining: drain}}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := rt.HealthServing
		if drain {
			want = rt.HealthNotServing
		}
		for name, w := range map[string]func() (rt.HealthStatus, error){"test.Echo": watchSvc, "": watchAll} {
			if st, err := w(); err != nil || st != want {
				t.Errorf("Watch(%q) after drain=%v: %v, %v", name, drain, st, err)
			}
			if st, err := g.healthCheck(t, name); err != nil || st != want {
				t.Errorf("Check(%q) after drain=%v: %v, %v", name, drain, st, err)
			}
		}
	}
}

// Once Shutdown begins (here: while it waits for consumers to notice the
// deregistration), health answers NOT_SERVING and Watch says so; the
// Watch then ends with the server.
func TestHealthDuringShutdown(t *testing.T) {
	checkLeaks(t)
	srv := rt.NewServer(rt.WithDeregisterWait(time.Minute))
	srv.RegisterService(&testDesc, newTestImpl())
	addr := serve(t, srv)
	g := newH2CClient(t, addr)
	watch := g.healthWatch(t, ctxT(t), "")
	if st, err := watch(); err != nil || st != rt.HealthServing {
		t.Fatalf("Watch = %v, %v", st, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	if st, err := watch(); err != nil || st != rt.HealthNotServing {
		t.Errorf("Watch during Shutdown = %v, %v", st, err)
	}
	if st, err := g.healthCheck(t, ""); err != nil || st != rt.HealthNotServing {
		t.Errorf("Check during Shutdown = %v, %v", st, err)
	}
	cancel() // ends the deregistration wait: GOAWAY, drain, close
	if st, err := watch(); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("Watch after Shutdown = %v, %v; want the stream ended with an error", st, err)
	}
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown: %v", err)
	}
}

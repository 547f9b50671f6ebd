package registry_test

import (
	"context"
	"fmt"
	"testing"

	"go.uber.org/goleak"

	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/rt/registry/registrytest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemoryConformance(t *testing.T) {
	m := registry.NewMemory()
	defer m.Close()
	registrytest.Run(t, func(*testing.T) registry.Registry { return m.Conn() })
}

func TestMemoryClose(t *testing.T) {
	m := registry.NewMemory()
	c := m.Conn()
	k := registry.Key{Service: "a.B"}
	if err := c.Register(context.Background(), registry.Endpoint{Key: k, Role: registry.Provider, Addr: "x:1"}); err != nil {
		t.Fatal(err)
	}
	rec := registrytest.NewRecorder()
	stop, err := m.Watch(k, rec.Fn)
	if err != nil {
		t.Fatal(err)
	}
	rec.WaitFor(t, "x:1", registrytest.HasAddrs("x:1"))
	closedConn := m.Conn()
	if err := closedConn.Close(); err != nil {
		t.Fatal(err)
	}
	if !isClosed(closedConn.Done()) || isClosed(m.Done()) || isClosed(c.Done()) {
		t.Fatalf("after closing one handle: its Done closed %v, the Memory's %v, another handle's %v; want true, false, false",
			isClosed(closedConn.Done()), isClosed(m.Done()), isClosed(c.Done()))
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	stop()
	// Closing the Memory closes its handles, and handles made after.
	for name, done := range map[string]<-chan struct{}{"Memory": m.Done(), "handle": c.Done(), "new handle": m.Conn().Done()} {
		if !isClosed(done) {
			t.Errorf("after Memory.Close, the Done of the %s is not closed", name)
		}
	}
	if _, err := m.Watch(k, rec.Fn); err != registry.ErrClosed {
		t.Errorf("Watch after Close: %v, want ErrClosed", err)
	}
	for _, err := range []error{
		c.Register(context.Background(), registry.Endpoint{Key: k, Role: registry.Provider, Addr: "y:1"}),
		m.Conn().Deregister(context.Background(), registry.Endpoint{Key: k}),
		m.UpdateConfig(context.Background(), k, func(*registry.Config) error { return nil }),
	} {
		if err != registry.ErrClosed {
			t.Errorf("after Close: %v, want ErrClosed", err)
		}
	}
}

func TestStatic(t *testing.T) {
	s := registry.NewStatic("b:2", "a:1", "b:2", "")
	defer s.Close()
	k := registry.Key{Service: "pkg.Svc", Group: "g"}
	if err := s.Register(context.Background(), registry.Endpoint{Key: k, Role: registry.Provider, Addr: "z:9"}); err != nil {
		t.Fatal(err)
	}
	rec := registrytest.NewRecorder()
	stop, err := s.Watch(k, rec.Fn)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	got := rec.WaitFor(t, "the static list", registrytest.HasAddrs("a:1", "b:2"))
	if got.Key != k || got.Providers[0].Key != k || got.Providers[0].Role != registry.Provider {
		t.Errorf("snapshot = %+v", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Watch(k, rec.Fn); err != registry.ErrClosed {
		t.Errorf("Watch after Close: %v, want ErrClosed", err)
	}
	if !isClosed(s.Done()) {
		t.Errorf("Done is not closed after Close")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// isClosed reports whether done is closed, without waiting.
func isClosed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

func TestConfigClone(t *testing.T) {
	c := registry.Config{
		RateLimit: &registry.RateLimit{Rate: 1},
		Instances: map[string]registry.InstanceConfig{"a": {Weight: 1}},
		Mocks:     map[string]registry.MockConfig{"Get": {Action: "value", Value: []byte{1}}},
	}
	d := c.Clone()
	d.RateLimit.Rate = 2
	d.Instances["a"] = registry.InstanceConfig{Weight: 2}
	d.Mocks["Get"].Value[0] = 2
	if c.RateLimit.Rate != 1 || c.Instances["a"].Weight != 1 || c.Mocks["Get"].Value[0] != 1 {
		t.Errorf("Clone shares memory with the original: %+v", c)
	}
}

func ExampleMemory() {
	m := registry.NewMemory()
	defer m.Close()
	server, client := m.Conn(), m.Conn() // two "processes"
	key := registry.Key{Service: "users.Users", Version: "1.2.0"}

	_ = server.Register(context.Background(), registry.Endpoint{
		Key: key, Role: registry.Provider, Addr: "127.0.0.1:7001", App: "users"})

	got := make(chan registry.Snapshot, 1)
	stop, _ := client.Watch(key, func(s registry.Snapshot) {
		if len(s.Providers) > 0 {
			select {
			case got <- s:
			default:
			}
		}
	})
	defer stop()
	s := <-got
	fmt.Println(s.Key, s.Providers[0].Addr, s.Providers[0].App)
	// Output: users.Users@1.2.0 127.0.0.1:7001 users
}

func BenchmarkFeedPublish(b *testing.B) {
	f := registry.NewFeed(func(registry.Snapshot) {})
	defer f.Stop()
	s := registry.Snapshot{Key: registry.Key{Service: "a.B"}}
	b.ReportAllocs()
	for b.Loop() {
		f.Publish(s)
	}
}

func ExampleStatic() {
	s := registry.NewStatic("10.0.0.2:7001", "10.0.0.1:7001")
	defer s.Close()
	got := make(chan registry.Snapshot, 1)
	stop, _ := s.Watch(registry.Key{Service: "users.Users"}, func(s registry.Snapshot) { got <- s })
	defer stop()
	fmt.Println(registrytest.Addrs(<-got))
	// Output: [10.0.0.1:7001 10.0.0.2:7001]
}

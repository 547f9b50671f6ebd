package rt_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
)

// Without WithLogger, warnings reach slog.Default(), and nothing below
// Warn does.
func TestWarningsReachTheDefaultLogger(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(lockedWriter{&buf, &mu}, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(old)

	e := newEnv(t, nil)
	reg := registry.NewMemory()
	defer reg.Close()
	key := registry.Key{Service: testDesc.Name}
	if err := reg.Register(context.Background(), registry.Endpoint{Key: key, Role: registry.Provider, Addr: e.lis.Addr().String()}); err != nil {
		t.Fatal(err)
	}
	if err := reg.UpdateConfig(context.Background(), key, func(c *registry.Config) error {
		c.Mocks = map[string]registry.MockConfig{"NoSuchMethod": {Action: "empty"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cli, err := rt.NewClient(rt.WithRegistry(reg.Conn()), rt.WithDebug(true))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := call(ctxT(t), cli, &testDesc, 0, "x"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	out := buf.String()
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "mock for unknown method ignored") {
		t.Fatalf("the warning did not reach slog.Default():\n%s", out)
	}
	if strings.Contains(out, "level=DEBUG") || strings.Contains(out, "level=INFO") {
		t.Fatalf("records below Warn reached slog.Default() without WithLogger:\n%s", out)
	}
}

// The access logs write one line per call with its method and code.
func TestAccessLogs(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	l := slog.New(slog.NewTextHandler(lockedWriter{&buf, &mu}, nil))
	e := newEnv(t, []rt.ServerOption{rt.WithServerInterceptors(rt.ServerAccessLog(l))}, rt.WithClientInterceptors(rt.ClientAccessLog(l)))
	call(ctxT(t), e.cli, &testDesc, 0, "x")
	call(ctxT(t), e.cli, &testDesc, 0, "fail:5:gone")
	// A handler that panics is answered Internal below the interceptors:
	// the server's line says so too (it had none).
	call(ctxT(t), e.cli, &testDesc, 0, "panic")
	mu.Lock()
	defer mu.Unlock()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want 6 (3 calls, both sides):\n%s", len(lines), buf.String())
	}
	for _, want := range []string{"method=test.Echo/Echo code=OK", "method=test.Echo/Echo code=NotFound", "peer=127.0.0.1:"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("no line with %q:\n%s", want, buf.String())
		}
	}
	if n := strings.Count(buf.String(), "method=test.Echo/Echo code=Internal"); n != 2 {
		t.Errorf("%d lines of the panicked call with code=Internal, want 2 (both sides):\n%s", n, buf.String())
	}
	if n := strings.Count(buf.String(), "provider="+e.lis.Addr().String()+" tries=1"); n != 3 {
		t.Errorf("%d client lines name provider %s and 1 try, want 3:\n%s", n, e.lis.Addr(), buf.String())
	}
}

// The client's access log names the provider that answered a call that
// failed over, and counts its tries.
func TestClientAccessLogNamesTheProvider(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	l := slog.New(slog.NewTextHandler(lockedWriter{&buf, &mu}, nil))
	c := newClusterWith(t, 3, func(i int, impl *testImpl) { impl.fail = i == 0 },
		rt.WithClock(wallClock{}), rt.WithRetryBudget(1, 1000), rt.WithClientInterceptors(rt.ClientAccessLog(l)))
	// Until a call starts at the failing provider (see TestOnAttempt).
	for i := 0; i < 200 && c.obs.attempts.Load() == c.obs.calls.Load(); i++ {
		if _, err := call(ctxT(t), c.cli, &testDesc, 2, "x"); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(buf.String(), "tries=2") || strings.Contains(buf.String(), "provider="+c.addr(0)) {
		t.Errorf("want a line of 2 tries, and none naming the failing %s:\n%s", c.addr(0), buf.String())
	}
}

package zkctl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/yrpc/yrpc/internal/zktest"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/zkreg"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// ctl runs one command against the test root and returns its exit code
// and output. The environment is empty.
func ctl(t *testing.T, zk, root string, args ...string) (int, string, string) {
	t.Helper()
	return ctlEnv(t, nil, zk, root, args...)
}

// ctlEnv is ctl with environment variables.
func ctlEnv(t *testing.T, env map[string]string, zk, root string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := Env{Stdout: &out, Stderr: &errb, Now: func() time.Time { return now },
		Getenv: func(k string) string { return env[k] }}
	code := e.Run(context.Background(), append([]string{"-zk", zk, "-root", root}, args...))
	return code, out.String(), errb.String()
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{nil, ExitUsage, "no command"},
		{[]string{"frob"}, ExitUsage, `unknown command "frob"`},
		{[]string{"drain", "a.B"}, ExitUsage, "wrong number of arguments"},
		{[]string{"--bogus", "ls"}, ExitUsage, "flag provided but not defined"},
		{[]string{"weight", "a.B", "x:1", "-3"}, ExitUsage, "flag provided but not defined"},
		{[]string{"weight", "a.B", "x:1", "heavy"}, ExitUsage, "bad weight"},
		{[]string{"weight", "a.B", "x:1", "10001"}, ExitUsage, "bad weight: weight 10001 is out of range 0..10000"},
		{[]string{"rm", "a.B", "mock"}, ExitUsage, "want limit, all, mock METHOD or instance ADDR"},
		{[]string{"rm", "a.B", "everything"}, ExitUsage, `unknown entry "everything"`},
		{[]string{"mock", "a.B", "Get", "value", "--schema", "./s"}, ExitUsage, "needs --json"},
		{[]string{"mock", "a.B", "Get", "value", "--json={}"}, ExitUsage, "needs --schema DIR"},
		{[]string{"mock", "a.B", "Get", "value", "--json", "{}", "--schema", "./s"}, ExitUsage, "needs yrpcc's schema loader"},
		{[]string{"--auth", "digest:ops", "ls"}, ExitUsage, "--auth: zkreg: digest credential: want USER:PASSWORD"},
		{[]string{"--acl", "operators=ops:pw", "ls"}, ExitUsage, "--acl: zkreg: roles: operators"},
		{[]string{"limit", "a.B", "on"}, ExitUsage, "want RATE BURST or off"},
		{[]string{"limit", "a.B", "0", "1"}, ExitUsage, "bad rate limit: rate 0 is not a finite number > 0"},
		{[]string{"limit", "a.B", "fast", "1"}, ExitUsage, `bad rate "fast"`},
		{[]string{"limit", "a.B", "1", "lots"}, ExitUsage, `bad burst "lots"`},
		{[]string{"limit", "a.B", "NaN", "1"}, ExitUsage, "bad rate limit: rate NaN is not a finite number > 0"},
		{[]string{"limit", "a.B", "+Inf", "1"}, ExitUsage, "bad rate limit: rate +Inf is not a finite number > 0"},
		{[]string{"mock", "a.B", "Get", "fail", "Nope"}, ExitUsage, "bad code"},
		{[]string{"mock", "a.B", "Get", "value-hex", "zz"}, ExitUsage, "bad hex"},
		{[]string{"mock", "a.B", "Get", "explode"}, ExitUsage, "unknown action"},
		{[]string{"mock", "a.B", "Get", "empty", "--force=maybe"}, ExitUsage, "invalid boolean value"},
		{[]string{"weight", "a.B", "", "5", "--force"}, ExitUsage, "weight: empty ADDR"},
		{[]string{"drain", "a.B", " ", "--force"}, ExitUsage, "drain: empty ADDR"},
		{[]string{"drain", "", "x:1", "--force"}, ExitUsage, "drain: empty SERVICE"},
		{[]string{"mock", "a.B", "", "empty", "--force"}, ExitUsage, "mock: empty METHOD"},
		{[]string{"-root", "yrpc", "ls"}, ExitUsage, `-root: zkreg: root "yrpc" does not start with /`},
		{[]string{"-root", "/a/../b", "drain", "a.B", "x:1"}, ExitUsage, `-root: zkreg: bad root "/a/../b"`},
		{[]string{"-zk", "127.0.0.1:1/yrpc", "ls"}, ExitUsage, `-zk: "127.0.0.1:1/yrpc" has a path: want HOST:PORT`},
		{[]string{"-root", "/zookeeper", "limit", "a.B", "1", "1", "--force"}, ExitUsage, `-root: zkreg: root "/zookeeper" is in ZooKeeper's own tree, /zookeeper`},
		{[]string{"ls", "--help"}, ExitOK, ""},
	}
	for _, tc := range tests {
		code, out, errs := ctl(t, "127.0.0.1:1", "/x", tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("ctl %q = %d, stderr %q; want %d and %q", tc.args, code, errs, tc.code, tc.want)
		}
		if code != ExitOK && strings.Count(errs, "\n") != 1 {
			t.Errorf("ctl %q: error is not one line: %q", tc.args, errs)
		}
		if tc.code == ExitOK && !strings.Contains(out, "usage: yrpcc ctl") {
			t.Errorf("ctl --help printed %q", out)
		}
	}
}

func TestUnreachable(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the connect timeout")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var out, errb bytes.Buffer
	code := Run(ctx, []string{"-zk", "127.0.0.1:1", "ls"}, &out, &errb)
	for _, want := range []string{"connect to ZooKeeper 127.0.0.1:1", "connection refused", "-zk HOST:PORT or $YRPC_ZK"} {
		if code != ExitError || !strings.Contains(errb.String(), want) {
			t.Errorf("Run = %d, %q; want %q", code, errb.String(), want)
		}
	}
}

// TestNotZooKeeper: a server that accepts the connection but never
// answers ZooKeeper's handshake is named in the error, before the connect
// timeout.
func TestNotZooKeeper(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the handshake timeout")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 16)
	go func() { // accepts and holds connections, never answers
		for {
			c, err := ln.Accept()
			if err != nil {
				close(held)
				return
			}
			held <- c
		}
	}()
	defer func() {
		ln.Close()
		for c := range held {
			c.Close()
		}
	}()
	addr := ln.Addr().String()
	start := time.Now()
	code, _, errs := ctl(t, addr, "/x", "ls")
	t.Logf("after %v: %s", time.Since(start).Round(time.Millisecond), errs)
	if want := "last attempt: " + addr + ": no answer to the ZooKeeper handshake within 5s"; code != ExitError || !strings.Contains(errs, want) {
		t.Errorf("ctl ls against a silent server = %d, %q; want %q", code, errs, want)
	}
}

func TestAgainstZooKeeper(t *testing.T) {
	zk := zktest.Addr(t)
	root := fmt.Sprintf("/yrpcctl-%08x", rand.Uint32())
	ctx := context.Background()
	reg, err := zkreg.New(ctx, zkreg.Options{Servers: []string{zk}, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		reg.Close()
		removeTree(t, zk, root)
	})
	k := registry.Key{Service: "users.Users", Group: "HK", Version: "1.2.0"}
	methods := []string{"Create", "Get", "List"}
	for _, e := range []registry.Endpoint{
		{Key: k, Role: registry.Provider, Addr: "10.0.0.1:7001", Weight: 100, App: "users",
			Tags: map[string]string{"zone": "hk-1"}, StartTime: now.Add(-90 * time.Second), Methods: methods, Token: "tok-Secret"},
		{Key: k, Role: registry.Provider, Addr: "10.0.0.2:7001", App: "users", StartTime: now.Add(-time.Hour), Methods: methods},
		{Key: k, Role: registry.Consumer, Addr: "10.0.9.9:web-1", App: "web", StartTime: now.Add(-time.Minute)},
	} {
		if err := reg.Register(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	// A watcher proves that what ctl writes reaches running processes.
	rec := newWatch(t, reg, k)

	steps := []struct {
		args []string
		want string
		cond func(registry.Config) bool
	}{
		{[]string{"drain", "users.Users", "10.0.0.1:7001", "--group", "HK", "--version", "1.2.0"}, "users.Users[HK]@1.2.0: instance 10.0.0.1:7001: (none) -> draining\n",
			func(c registry.Config) bool { return c.Instances["10.0.0.1:7001"].Draining }},
		{[]string{"weight", "--group=HK", "--version=1.2.0", "users.Users", "10.0.0.2:7001", "50"}, "instance 10.0.0.2:7001: (none) -> serving, weight 50\n",
			func(c registry.Config) bool { return c.Instances["10.0.0.2:7001"].Weight == 50 }},
		{[]string{"limit", "users.Users", "300", "500", "--per-app", "--group", "HK", "--version", "1.2.0"}, "limit: (none) -> 300/s burst 500 per app\n",
			func(c registry.Config) bool {
				return c.RateLimit != nil && c.RateLimit.Burst == 500 && c.RateLimit.PerApp
			}},
		{[]string{"mock", "users.Users", "Get", "fail", "Unavailable", "down for maintenance", "--always", "--for", "10m", "--group", "HK", "--version", "1.2.0"},
			`mock Get: (none) -> fail Unavailable "down for maintenance", forced, expires 2026-11-29T12:10:00Z (in 10m0s)` + "\n",
			func(c registry.Config) bool {
				m := c.Mocks["Get"]
				return m.Force && m.Code == "Unavailable" && m.Expires.Equal(now.Add(10*time.Minute))
			}},
		{[]string{"mock", "users.Users", "Create", "value-hex", "0a03616263", "--group", "HK", "--version", "1.2.0"}, "mock Create: (none) -> value 5 bytes, on failure\n",
			func(c registry.Config) bool { return string(c.Mocks["Create"].Value) == "\x0a\x03abc" }},
	}
	for _, s := range steps {
		code, out, errs := ctl(t, zk, root, s.args...)
		if code != ExitOK || !strings.HasSuffix(out, s.want) || strings.Count(out, "\n") != 1 {
			t.Fatalf("ctl %q = %d, %q, %q; want %q", s.args, code, out, errs, s.want)
		}
		rec.waitConfig(t, strings.Join(s.args, " "), s.cond)
	}

	code, out, errs := ctl(t, zk, root, "ls")
	if code != ExitOK {
		t.Fatalf("ls = %d: %s", code, errs)
	}
	t.Logf("ls:\n%s", out)
	for _, want := range []string{
		"SERVICE", "users.Users", "10.0.0.1:7001", "zone=hk-1", "1m30s", "draining", "100>50",
		"consumer", "web", "limit: 300/s burst 500 per app",
		`mock Get: fail Unavailable "down for maintenance", forced, expires 2026-11-29T12:10:00Z (in 10m0s)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("ls output lacks %q", want)
		}
	}

	// An empty listing names the root it read, and a service that is not
	// there the close matches, so that a typo or a wrong -root shows.
	for _, tc := range []struct {
		root string
		args []string
		want string
	}{
		{root, []string{"ls", "other.Service"}, `no service "other.Service" under ` + root + `; known: "users.Users"` + "\n"},
		{root, []string{"ls", "users.Userz"}, `no service "users.Userz" under ` + root + `; did you mean "users.Users"?` + "\n"},
		{root + "-typo", []string{"ls"}, "no services under " + root + "-typo\n"},
	} {
		if code, out, errs := ctl(t, zk, tc.root, tc.args...); code != ExitOK || out != tc.want {
			t.Errorf("-root %s %q = %d, %q, %q; want %q", tc.root, tc.args, code, out, errs, tc.want)
		}
	}
	code, out, _ = ctl(t, zk, root, "ls", "--json", "users.Users")
	var got []jsonKey
	if err := json.Unmarshal([]byte(out), &got); code != ExitOK || err != nil {
		t.Fatalf("ls --json = %d, %v:\n%s", code, err, out)
	}
	if len(got) != 1 || got[0].Group != "HK" || len(got[0].Providers) != 2 || len(got[0].Consumers) != 1 ||
		!got[0].Config.Instances["10.0.0.1:7001"].Draining {
		t.Errorf("ls --json = %+v", got)
	}
	if strings.Contains(out, "tok-Secret") || !strings.Contains(out, `"token": "REDACTED"`) {
		t.Errorf("ls --json shows a registry token:\n%s", out)
	}

	for _, s := range []struct {
		args []string
		want string
		cond func(registry.Config) bool
	}{
		{[]string{"undrain", "users.Users", "10.0.0.1:7001", "--group", "HK", "--version", "1.2.0"}, "instance 10.0.0.1:7001: draining -> (none)\n",
			func(c registry.Config) bool { _, ok := c.Instances["10.0.0.1:7001"]; return !ok }},
		{[]string{"limit", "users.Users", "off", "--group", "HK", "--version", "1.2.0"}, "limit: 300/s burst 500 per app -> (none)\n",
			func(c registry.Config) bool { return c.RateLimit == nil }},
		{[]string{"mock", "users.Users", "Get", "off", "--group", "HK", "--version", "1.2.0"}, "forced, expires 2026-11-29T12:10:00Z (in 10m0s) -> (none)\n",
			func(c registry.Config) bool { _, ok := c.Mocks["Get"]; return !ok }},
		{[]string{"undrain", "users.Users", "10.0.0.1:7001", "--group", "HK", "--version", "1.2.0"}, "users.Users[HK]@1.2.0: no change\n", nil},
	} {
		if code, out, errs := ctl(t, zk, root, s.args...); code != ExitOK || !strings.HasSuffix(out, s.want) {
			t.Fatalf("ctl %q = %d, %q, %q; want %q", s.args, code, out, errs, s.want)
		}
		if s.cond != nil {
			rec.waitConfig(t, strings.Join(s.args, " "), s.cond)
		}
	}
}

type watch struct{ ch chan registry.Snapshot }

func newWatch(t *testing.T, reg registry.Registry, k registry.Key) *watch {
	w := &watch{ch: make(chan registry.Snapshot, 64)}
	stop, err := reg.Watch(k, func(s registry.Snapshot) { w.ch <- s })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return w
}

func (w *watch) waitConfig(t *testing.T, desc string, cond func(registry.Config) bool) {
	t.Helper()
	timeout := time.After(time.Second) // the contract: watchers see changes within 1s
	for {
		select {
		case s := <-w.ch:
			if cond(s.Config) {
				return
			}
		case <-timeout:
			t.Fatalf("watcher did not see %q within 1s", desc)
		}
	}
}

func TestDescribeMockExpired(t *testing.T) {
	m := registry.MockConfig{Action: "empty", Expires: now.Add(-time.Minute)}
	if got := describeMock(m, now); got != "empty, on failure, expired 2026-11-29T11:59:00Z" {
		t.Errorf("describeMock = %q", got)
	}
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// want is what one step of the example must print: its outcome starts
// with prefix and contains every one of has.
type want struct {
	step   string
	prefix string
	has    []string
}

// common are the steps of every registry.
var common = []want{
	{"server", "mutual TLS on 127.0.0.1:", []string{webID}},
	{"web, through the registry", "OK: Hello, secure!", []string{"You are " + webID, `CN "web"`}},
	{"batch, through the registry", "PermissionDenied (remote):", []string{"greeter.Greeter/SayHello", batchID + " may not call it"}},
	{"web, dialing the address (no token)", "Unauthenticated (remote):", []string{"registry token"}},
	{"no TLS, through the registry", "FailedPrecondition:", []string{"requires TLS", "127.0.0.1:"}},
	{"no TLS, dialing the address", "Unavailable:", []string{"this server requires TLS"}},
	{"certificate from another CA", "Unavailable:", []string{"tls: unknown certificate authority"}},
	{"web after the rotation", "OK: Hello, secure!", []string{"You are " + webID}},
}

// onZooKeeper are the steps only a ZooKeeper registry shows.
var onZooKeeper = []want{
	{"intruder registers a provider", "refused:", []string{"zk: not authenticated"}},
	{"intruder takes over the provider's node", "refused:", []string{"zk: not authenticated"}},
	{"intruder drains the provider", "refused:", []string{"zk: not authenticated"}},
	{"provider identity drains the provider", "refused:", []string{"zk: not authenticated"}},
	{"operator sets the provider's weight", "OK", nil},
	{"intruder reads the provider's payload", "OK: tls=true, a registry token of 32 characters", nil},
	{"operator removes the config after shutdown", "OK", nil},
}

// runExample runs the example with args and checks every step of wants,
// the certificates the clients saw before and after the rotation, and
// that no password appears in its output or log.
func runExample(t *testing.T, wants []want, args ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, args, &stdout, &stderr)
	t.Logf("output:\n%s\nlog:\n%s", stdout.String(), stderr.String())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		step, outcome, ok := strings.Cut(l, ":")
		if !ok {
			t.Fatalf("line %q is not STEP: OUTCOME", l)
		}
		got[step] = append(got[step], strings.TrimSpace(outcome))
	}
	for _, w := range wants {
		outs := got[w.step]
		if len(outs) != 1 {
			t.Errorf("step %q printed %d times, want once", w.step, len(outs))
			continue
		}
		if !strings.HasPrefix(outs[0], w.prefix) {
			t.Errorf("%s: %q, want it to start with %q", w.step, outs[0], w.prefix)
		}
		for _, h := range w.has {
			if !strings.Contains(outs[0], h) {
				t.Errorf("%s: %q, want it to contain %q", w.step, outs[0], h)
			}
		}
	}
	if seen := got["server certificate seen"]; fmt.Sprint(seen) != "[server-1 server-2]" {
		t.Errorf("server certificates seen before and after the rotation: %q, want server-1 then server-2", seen)
	}
	for _, secret := range []string{providerSecret, operatorSecret} {
		_, pass, _ := strings.Cut(secret, ":")
		if strings.Contains(stdout.String()+stderr.String(), pass) {
			t.Errorf("a password appears in the output or the log")
		}
	}
}

func TestInMemory(t *testing.T) {
	runExample(t, common)
}

func TestOnZooKeeper(t *testing.T) {
	addr := os.Getenv("YRPC_ZK")
	if addr == "" {
		if os.Getenv("YRPC_ZK_REQUIRED") != "" {
			t.Fatal("YRPC_ZK_REQUIRED is set but YRPC_ZK is empty")
		}
		t.Skip("YRPC_ZK not set: no ZooKeeper (scripts/test.sh starts one)")
	}
	root := fmt.Sprintf("/yrpc-secure-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	runExample(t, slices.Concat(common, onZooKeeper), "-registry", "zk://"+addr, "-root", root)
}

func TestBadRegistry(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"-registry", "etcd://x"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `unknown registry "etcd://x"`) {
		t.Fatalf("err = %v, want an unknown registry error", err)
	}
}

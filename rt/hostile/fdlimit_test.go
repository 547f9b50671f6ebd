//go:build linux

package hostile

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/rt"
)

// The test binary re-executed with envChild set runs childMain instead of
// the tests.
const (
	envChild  = "YRPC_HOSTILE_CHILD"  // "serve"
	envNoFile = "YRPC_HOSTILE_NOFILE" // the child's RLIMIT_NOFILE
)

// acceptRetry is the message of the server's warning when Accept fails
// and will be retried.
const acceptRetry = "rt: accept failed; retrying"

// childMain lowers RLIMIT_NOFILE to $YRPC_HOSTILE_NOFILE, serves
// greeter.Greeter on 127.0.0.1, prints "ready ADDR" on stdout and the
// server's warnings on stderr, and returns when its stdin ends.
func childMain() int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	n, err := strconv.ParseUint(os.Getenv(envNoFile), 10, 64)
	if err != nil {
		return fail(err)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fail(err)
	}
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fail(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	srv := rt.NewServer(rt.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	greeterrpc.RegisterGreeter(srv, greeter{h: newHolder()})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), lis) }()
	fmt.Printf("ready %s\n", lis.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = srv.Close()
	if err := <-served; err != rt.ErrServerClosed {
		return fail(fmt.Errorf("Serve returned %v", err))
	}
	return 0
}

// With descriptors exhausted (`ulimit -n 64` and 200 connection attempts)
// Serve keeps accepting once they free up, and a connection that was
// open before keeps being served (issue 11, item 1).
func TestDescriptorExhaustion(t *testing.T) {
	const nofile, attempts = 64, 200
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"=serve", envNoFile+"="+strconv.Itoa(nofile))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var retries atomic.Int64
	var other strings.Builder // the child's other output, for failures
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), acceptRetry) {
				retries.Add(1)
			} else {
				other.WriteString(sc.Text() + "\n")
			}
		}
	}()
	exited := false
	wait := func() error {
		stdin.Close()
		<-logged
		exited = true
		return cmd.Wait()
	}
	t.Cleanup(func() {
		if !exited {
			cmd.Process.Kill()
			_ = wait()
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ready ")
	if err != nil || !ok {
		t.Fatalf("child: %q, %v", line, err)
	}

	tg := &target{t: t, addr: addr}
	t.Cleanup(tg.closeAttackers)
	good := startGood(t, addr)
	t.Cleanup(good.close)
	start := time.Now()
	for i := range attempts {
		c, err := tg.dial(attackerIP(i % 4))
		if err != nil {
			t.Fatal(err) // the kernel queues the connections Accept cannot take
		}
		if _, err := c.Write(prefaceV1); err != nil && !closed(err) {
			t.Fatal(err)
		}
	}
	if !poll(10*time.Second, func() bool { return retries.Load() > 0 }) {
		t.Fatalf("no %q warning from the child after %d connections with RLIMIT_NOFILE %d", acceptRetry, attempts, nofile)
	}
	exhausted := time.Since(start)
	// Free the descriptors: close every attacker connection.
	tg.closeAttackers()
	freed := time.Now()
	if err := callOnce(addr); err != nil {
		t.Errorf("a new client after the descriptors were freed: %v", err)
	}
	recovered := time.Since(freed)
	calls, failed, first := good.finish()
	if err := wait(); err != nil {
		t.Errorf("child: %v\n%s", err, other.String())
	}
	t.Logf("RLIMIT_NOFILE %d, %d connection attempts: accept failed after %v; %d accept retries logged; a new client served %v after the descriptors were freed; the client connected before: %d calls, %d failed",
		nofile, attempts, exhausted.Round(time.Millisecond), retries.Load(), recovered.Round(time.Millisecond), calls, failed)
	if failed > 0 {
		t.Errorf("the client connected before: %d of %d calls failed; first: %v", failed, calls+failed, first)
	}
}

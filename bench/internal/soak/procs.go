package soak

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/yrpc/yrpc/bench/internal/procfs"
)

// provider is one provider process, started by the soak.
type provider struct {
	name, addr string
	cmd        *exec.Cmd
	stdin      io.WriteCloser
	lines      chan string // its protocol lines, closed at the end of its output
	exited     chan struct{}
	err        error // of Wait; read after exited
	started    time.Time
}

// providerSpec is how to start providers: the command (this binary and the
// arguments that make it run Provider, then the provider's flags), the
// environment and where their logs go.
type providerSpec struct {
	command []string
	env     []string
	zk      string
	root    string
	session time.Duration
	dir     string // put logs (NAME.puts) and stderr (NAME.log)
}

// start starts provider name on addr ("127.0.0.1:0" for any port) and
// waits until it listens.
func (s *providerSpec) start(name, addr string) (*provider, error) {
	args := append(s.command[1:len(s.command):len(s.command)], "-name", name, "-addr", addr, "-zk", s.zk, "-root", s.root,
		"-session", s.session.String(), "-putlog", filepath.Join(s.dir, name+".puts"))
	cmd := exec.Command(s.command[0], args...)
	cmd.Env = s.env
	logf, err := os.OpenFile(filepath.Join(s.dir, name+".log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child has its own descriptor
	cmd.Stderr = logf
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("soak: starting %s: %w", name, err)
	}
	p := &provider{name: name, cmd: cmd, stdin: stdin, lines: make(chan string, 4), exited: make(chan struct{}), started: time.Now()}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
				p.lines <- rest
			}
		}
	}()
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	line, err := p.expect("ready", 40*time.Second)
	if err != nil {
		p.kill()
		return nil, fmt.Errorf("soak: provider %s did not start: %w (see %s.log)", name, err, name)
	}
	p.addr = line
	return p, nil
}

// expect waits up to limit for the provider's next protocol line, which
// must start with verb, and returns the rest of it.
func (p *provider) expect(verb string, limit time.Duration) (string, error) {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case line, ok := <-p.lines:
		if !ok {
			return "", errors.New("exited")
		}
		rest, found := strings.CutPrefix(line, verb+" ")
		if !found {
			return "", fmt.Errorf("said %q, want %q", line, verb)
		}
		return rest, nil
	case <-t.C:
		return "", fmt.Errorf("no %q within %v", verb, limit)
	}
}

// stats asks the provider for its goroutines and live heap.
func (p *provider) stats() (goroutines int, heap uint64, err error) {
	if _, err := io.WriteString(p.stdin, "stats\n"); err != nil {
		return 0, 0, err
	}
	line, err := p.expect("stats", 5*time.Second)
	if err != nil {
		return 0, 0, err
	}
	if _, err := fmt.Sscan(line, &goroutines, &heap); err != nil {
		return 0, 0, fmt.Errorf("soak: bad stats %q: %w", line, err)
	}
	return goroutines, heap, nil
}

// kill sends SIGKILL and waits for the exit.
func (p *provider) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
	_ = p.stdin.Close()
}

// term sends SIGTERM (graceful shutdown) and waits up to limit for the
// exit, then kills it. It returns the exit's error, or one for the kill.
func (p *provider) term(limit time.Duration) error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-p.exited:
		_ = p.stdin.Close()
		return p.err
	case <-t.C:
		p.kill()
		return fmt.Errorf("soak: provider %s still running %v after SIGTERM; killed", p.name, limit)
	}
}

// ScriptZK returns an Options.RestartZK for the standalone ZooKeeper that
// scripts/zk.sh started: addr is its client address ($YRPC_ZK), dir its
// directory ($YRPC_ZK_DIR), which holds "pid" (the JVM's) and "run.sh"
// (which starts it again with the same data and writes the new pid, so
// "zk.sh stop" still finds it).
func ScriptZK(addr, dir string) func(down time.Duration) error {
	z := &zooKeeper{addr: addr, dir: dir}
	return func(down time.Duration) error {
		if err := z.stop(); err != nil {
			return err
		}
		time.Sleep(down) // ZooKeeper stays down this long: the fault itself
		return z.start()
	}
}

// zooKeeper is a server of scripts/zk.sh.
type zooKeeper struct {
	addr, dir string
}

// stop stops the server with SIGTERM (SIGKILL after 10 s) and waits for
// its exit.
func (z *zooKeeper) stop() error {
	pid, err := z.pid()
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("soak: stopping ZooKeeper (pid %d): %w", pid, err)
	}
	for i := 0; syscall.Kill(pid, 0) == nil; i++ {
		if i == 100 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond) // polling for the exit of a process that is not our child
	}
	return nil
}

// start runs run.sh in a session of its own (so that it outlives the soak,
// as the server of zk.sh does; zk.sh stop finds it by its pid file) and
// waits up to a minute until the server serves.
func (z *zooKeeper) start() error {
	cmd := exec.Command(filepath.Join(z.dir, "run.sh"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("soak: starting ZooKeeper: %w", err)
	}
	go cmd.Wait() // reap it if it ends while the soak runs
	deadline := time.Now().Add(time.Minute)
	for !z.serving() {
		if time.Now().After(deadline) {
			return fmt.Errorf("soak: ZooKeeper %s does not serve a minute after its start (see %s/zookeeper.log)", z.addr, z.dir)
		}
		time.Sleep(200 * time.Millisecond) // polling the server's state
	}
	return nil
}

func (z *zooKeeper) pid() (int, error) {
	b, err := os.ReadFile(filepath.Join(z.dir, "pid"))
	if err != nil {
		return 0, fmt.Errorf("soak: ZooKeeper's pid file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("soak: ZooKeeper's pid file: %w", err)
	}
	return pid, nil
}

// serving reports whether the server answers the four-letter word "srvr"
// with its mode, which it does only once it serves.
func (z *zooKeeper) serving() bool {
	conn, err := net.DialTimeout("tcp", z.addr, time.Second)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(conn, "srvr"); err != nil {
		return false
	}
	b, _ := io.ReadAll(conn)
	return strings.Contains(string(b), "Mode: ")
}

// procRSS returns the resident set of process pid in MiB, or 0.
func procRSS(pid int) float64 {
	rss, _, _ := procfs.Mem(pid)
	return rss
}

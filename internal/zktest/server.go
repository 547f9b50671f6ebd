package zktest

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serverJar is where Debian's zookeeper package (scripts/zk.sh installs
// it) puts ZooKeeper.
const serverJar = "/usr/share/java/zookeeper.jar"

// jvmOptions returns scripts/zk.sh's JVM options (keep them alike): a
// small heap, serial GC and C1 only, so that a server starts in about half
// a second and takes little memory, and timestamps in its log.
func jvmOptions() []string {
	return []string{"-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
		"-Dzookeeper.admin.enableServer=false",
		"-Dzookeeper.fastleader.maxNotificationInterval=1000", "-Dzookeeper.leaderConnectDelayDuringRetryMs=400",
		"-Dorg.slf4j.simpleLogger.showDateTime=true", "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS"}
}

// Server is a standalone ZooKeeper of one test's own on a free loopback
// port, configured like scripts/zk.sh's (tickTime 500ms, so sessions of
// 1s to 60s; no fsync). Unlike the shared server of $YRPC_ZK, the test
// may stop, wipe and restart it. Make one with StartServer (the zero value is not
// usable); it is not safe for concurrent use.
type Server struct {
	t      testing.TB
	addr   string
	dir    string // zoo.cfg, zookeeper.log, data/
	cmd    *exec.Cmd
	exited chan struct{}
	jars   []string // added to the class path
}

// ServerOptions add to a Server's configuration. The zero value adds
// nothing.
type ServerOptions struct {
	// Config holds more zoo.cfg lines ("secureClientPort=2281").
	Config []string
	// Jars are added to the server's class path (Netty's codec, which
	// Debian's package leaves out, for a TLS client port).
	Jars []string
}

// StartServer starts a ZooKeeper and stops it at cleanup. It skips the
// test when Java or ZooKeeper is missing, or fails it if
// $YRPC_ZK_REQUIRED=1.
func StartServer(t testing.TB) *Server {
	t.Helper()
	return StartServerWith(t, ServerOptions{})
}

// StartServerWith is StartServer with more configuration.
func StartServerWith(t testing.TB, opts ServerOptions) *Server {
	t.Helper()
	_, jarErr := os.Stat(serverJar)
	_, javaErr := exec.LookPath("java")
	if jarErr != nil || javaErr != nil {
		msg := fmt.Sprintf("zktest: this test starts its own ZooKeeper and needs java on $PATH and %s (scripts/zk.sh installs them)", serverJar)
		if os.Getenv("YRPC_ZK_REQUIRED") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("zktest: listen: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &Server{t: t, addr: addr, dir: t.TempDir(), jars: opts.Jars}
	_, port, _ := net.SplitHostPort(addr)
	cfg := strings.Join([]string{
		"tickTime=500",
		"initLimit=4",
		"syncLimit=5",
		"dataDir=" + filepath.Join(s.dir, "data"),
		"clientPort=" + port,
		"clientPortAddress=127.0.0.1",
		"maxClientCnxns=0",
		"admin.enableServer=false",
		"4lw.commands.whitelist=ruok,srvr,stat,cons",
		"minSessionTimeout=1000",
		"maxSessionTimeout=60000",
		"forceSync=no",
	}, "\n") + "\n" + strings.Join(append(opts.Config, ""), "\n")
	if err := os.WriteFile(filepath.Join(s.dir, "zoo.cfg"), []byte(cfg), 0o644); err != nil {
		t.Fatalf("zktest: %v", err)
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("ZooKeeper log (tail):\n%s", tail(s.Log(), 3000))
		}
	})
	s.Start()
	return s
}

// Addr is the server's address, for Options.Servers.
func (s *Server) Addr() string { return s.addr }

// Log returns what the server wrote to its log so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "zookeeper.log"))
	return string(b)
}

// Start runs the server and waits (up to 60s) until it serves requests.
func (s *Server) Start() {
	s.t.Helper()
	if err := os.MkdirAll(filepath.Join(s.dir, "data"), 0o755); err != nil {
		s.t.Fatalf("zktest: %v", err)
	}
	log, err := os.OpenFile(filepath.Join(s.dir, "zookeeper.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		s.t.Fatalf("zktest: %v", err)
	}
	defer log.Close()
	cp := serverJar
	if _, err := os.Stat("/usr/share/java/slf4j-simple.jar"); err == nil {
		cp += ":/usr/share/java/slf4j-simple.jar"
	}
	for _, j := range s.jars {
		cp += ":" + j
	}
	args := append(jvmOptions(), "-cp", cp,
		"org.apache.zookeeper.server.ZooKeeperServerMain", filepath.Join(s.dir, "zoo.cfg"))
	cmd := exec.Command("java", args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // dies with the test
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("zktest: start ZooKeeper: %v", err)
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	go func(exited chan struct{}) { cmd.Wait(); close(exited) }(s.exited)

	tick := time.NewTicker(100 * time.Millisecond) // polls the server; bounded below
	defer tick.Stop()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(FourLetter(s.addr, "srvr"), "Mode: ") {
		select {
		case <-s.exited:
			s.cmd = nil
			s.t.Fatalf("zktest: ZooKeeper exited at start: %s", tail(s.Log(), 2000))
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			s.Stop()
			s.t.Fatalf("zktest: ZooKeeper did not start on %s: %s", s.addr, tail(s.Log(), 2000))
		}
	}
}

// Stop stops the server (SIGTERM, then SIGKILL after 10s) and waits for it
// to exit. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	kill := time.NewTimer(10 * time.Second)
	defer kill.Stop()
	select {
	case <-s.exited:
	case <-kill.C:
		s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

// Wipe deletes the data dir of a stopped server: when it starts again, it
// knows no node and no session, and its zxid starts over.
func (s *Server) Wipe() {
	s.t.Helper()
	if s.cmd != nil {
		s.t.Fatal("zktest: Wipe of a running server")
	}
	if err := os.RemoveAll(filepath.Join(s.dir, "data")); err != nil {
		s.t.Fatalf("zktest: %v", err)
	}
}

// FourLetter sends a ZooKeeper four-letter word to addr and returns the
// answer, or "" on error.
func FourLetter(addr, word string) string {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, word); err != nil {
		return ""
	}
	b, _ := io.ReadAll(c)
	return string(b)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

package suite

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

// zkJar is where Debian's zookeeper package (scripts/zk.sh installs it)
// puts ZooKeeper.
const zkJar = "/usr/share/java/zookeeper.jar"

// zkServer is a standalone ZooKeeper of the test's own, on a free loopback
// port, configured like scripts/zk.sh's (tickTime 500ms, so sessions of
// 1s..60s). The test owns it: it may stop and restart it, and cleanup
// stops it.
type zkServer struct {
	t      *testing.T
	port   int
	dir    string // zoo.cfg, zookeeper.log, data/
	cmd    *exec.Cmd
	exited chan struct{}
}

// startZK starts a ZooKeeper, or skips the test when Java or ZooKeeper is
// missing (fails with YRPC_ZK_REQUIRED=1).
func startZK(t *testing.T) *zkServer {
	t.Helper()
	_, jarErr := os.Stat(zkJar)
	_, javaErr := exec.LookPath("java")
	if jarErr != nil || javaErr != nil {
		msg := fmt.Sprintf("suite: this scenario starts its own ZooKeeper and needs java on $PATH and %s (scripts/zk.sh installs them)", zkJar)
		if os.Getenv("YRPC_ZK_REQUIRED") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	z := &zkServer{t: t, port: port, dir: t.TempDir()}
	cfg := fmt.Sprintf(`tickTime=500
initLimit=10
syncLimit=5
dataDir=%s
clientPort=%d
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,stat,cons
minSessionTimeout=1000
maxSessionTimeout=60000
`, filepath.Join(z.dir, "data"), port)
	if err := os.WriteFile(filepath.Join(z.dir, "zoo.cfg"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		z.stop()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(z.dir, "zookeeper.log"))
			t.Logf("ZooKeeper log (tail):\n%s", tail(string(b), 3000))
		}
	})
	z.start()
	return z
}

func (z *zkServer) addr() string { return fmt.Sprintf("127.0.0.1:%d", z.port) }

// start runs the server and waits (bounded) until it serves requests.
func (z *zkServer) start() {
	z.t.Helper()
	if err := os.MkdirAll(filepath.Join(z.dir, "data"), 0o755); err != nil {
		z.t.Fatal(err)
	}
	cp := zkJar
	if _, err := os.Stat("/usr/share/java/slf4j-simple.jar"); err == nil {
		cp += ":/usr/share/java/slf4j-simple.jar"
	}
	logf, err := os.OpenFile(filepath.Join(z.dir, "zookeeper.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		z.t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command("java", "-Xmx256m", "-cp", cp, "-Dzookeeper.admin.enableServer=false",
		"org.apache.zookeeper.server.ZooKeeperServerMain", filepath.Join(z.dir, "zoo.cfg"))
	cmd.Stdout, cmd.Stderr = logf, logf
	// The JVM dies with the test process, even if that is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		z.t.Fatal(err)
	}
	z.cmd, z.exited = cmd, make(chan struct{})
	go func() { cmd.Wait(); close(z.exited) }()
	if _, ok := waitFor(60*time.Second, func() bool {
		select {
		case <-z.exited:
			return true
		default:
		}
		return strings.Contains(fourLetter(z.addr(), "srvr"), "Mode: ")
	}); !ok || z.done() {
		b, _ := os.ReadFile(filepath.Join(z.dir, "zookeeper.log"))
		z.stop()
		z.t.Fatalf("ZooKeeper did not start on %s: %s", z.addr(), tail(string(b), 2000))
	}
}

func (z *zkServer) done() bool {
	select {
	case <-z.exited:
		return true
	default:
		return false
	}
}

// stop stops the server (SIGTERM, then SIGKILL after 10s) and waits.
func (z *zkServer) stop() {
	if z.cmd == nil {
		return
	}
	z.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-z.exited:
	case <-time.After(10 * time.Second):
		z.cmd.Process.Kill()
		<-z.exited
	}
	z.cmd = nil
}

// wipe removes the data dir of a stopped server: its next start expires
// every session.
func (z *zkServer) wipe() {
	z.t.Helper()
	if err := os.RemoveAll(filepath.Join(z.dir, "data")); err != nil {
		z.t.Fatal(err)
	}
}

// fourLetter sends a ZooKeeper four-letter word and returns the answer, or
// "" on error.
func fourLetter(addr, word string) string {
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

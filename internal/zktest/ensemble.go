package zktest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Environment of the ensemble that scripts/zk.sh starts (see its header).
const (
	envEnsemble    = "YRPC_ZK_ENSEMBLE"     // "127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3"
	envEnsembleDir = "YRPC_ZK_ENSEMBLE_DIR" // n1/, n2/, n3/ and the lock file
)

// Bounds of the ensemble's waits: limits for failures, not sleeps.
const (
	lockWait   = 3 * time.Minute  // for another test process's lock
	serveWait  = 60 * time.Second // for a restarted node to serve
	killedWait = 10 * time.Second // for a killed node's port to close
)

// Ensemble is the three-node ZooKeeper ensemble that scripts/zk.sh starts
// on loopback, found through $YRPC_ZK_ENSEMBLE and $YRPC_ZK_ENSEMBLE_DIR.
// Test processes (one per package) share it, so a test holds a lock on it
// from UseEnsemble or TakeEnsemble until its cleanup: a shared one to use
// it, an exclusive one to kill, pause and start nodes. A test that took
// the ensemble leaves it as it found it: its cleanup resumes the nodes it
// paused, starts those it killed and waits until all three serve with one
// leader before letting other tests in.
//
// Make one with UseEnsemble or TakeEnsemble; the zero value is not usable.
// It is not safe for concurrent use.
type Ensemble struct {
	t         testing.TB
	nodes     []Node
	exclusive bool
	killed    map[int]bool // by Node.ID
	paused    map[int]bool // by Node.ID
}

// Node is one server of an Ensemble. The zero value is not a node.
type Node struct {
	ID   int    // myid; node i is the i-th address of $YRPC_ZK_ENSEMBLE
	Addr string // client address, 127.0.0.1:port
	dir  string // zoo.cfg, data/, pid, run.sh, zookeeper.log
}

// UseEnsemble returns the shared ensemble, holding a shared lock on it
// until the test's cleanup. When $YRPC_ZK_ENSEMBLE is unset the test is
// skipped, or fails if $YRPC_ZK_REQUIRED=1 (as scripts/test.sh sets).
func UseEnsemble(t testing.TB) *Ensemble {
	t.Helper()
	return openEnsemble(t, false)
}

// TakeEnsemble is UseEnsemble with an exclusive lock, for a test that
// kills or pauses nodes; at cleanup it resumes and starts them again and
// waits until every node serves and one leads.
func TakeEnsemble(t testing.TB) *Ensemble {
	t.Helper()
	return openEnsemble(t, true)
}

func openEnsemble(t testing.TB, exclusive bool) *Ensemble {
	t.Helper()
	addrs, dir := os.Getenv(envEnsemble), os.Getenv(envEnsembleDir)
	if addrs == "" || dir == "" {
		if os.Getenv("YRPC_ZK_REQUIRED") == "1" {
			t.Fatalf("zktest: %s or %s is unset but YRPC_ZK_REQUIRED=1: run ./scripts/test.sh", envEnsemble, envEnsembleDir)
		}
		t.Skipf("zktest: %s is unset; run ./scripts/test.sh, or eval \"$(scripts/zk.sh ensemble-start)\"", envEnsemble)
	}
	e := &Ensemble{t: t, exclusive: exclusive, killed: map[int]bool{}, paused: map[int]bool{}}
	for i, addr := range strings.Split(addrs, ",") {
		n := Node{ID: i + 1, Addr: addr, dir: filepath.Join(dir, "n"+strconv.Itoa(i+1))}
		if _, err := os.Stat(filepath.Join(n.dir, "run.sh")); err != nil {
			t.Fatalf("zktest: ensemble node %d: %v (is %s=%s current?)", n.ID, err, envEnsembleDir, dir)
		}
		e.nodes = append(e.nodes, n)
	}
	unlock := lockFile(t, filepath.Join(dir, "lock"), exclusive)
	t.Cleanup(func() {
		defer unlock()
		if exclusive {
			e.restore()
		}
	})
	return e
}

// lockFile takes a flock on path, waiting (bounded) for other holders,
// and returns the function that releases it.
func lockFile(t testing.TB, path string, exclusive bool) func() {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatalf("zktest: ensemble lock: %v", err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	tick := time.NewTicker(20 * time.Millisecond) // polls the lock; bounded by lockWait
	defer tick.Stop()
	deadline := time.Now().Add(lockWait)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			t.Fatalf("zktest: ensemble lock %s (exclusive %v): %v", path, exclusive, err)
		}
		<-tick.C
	}
}

// Servers returns the client addresses, node 1 first.
func (e *Ensemble) Servers() []string {
	s := make([]string, len(e.nodes))
	for i, n := range e.nodes {
		s[i] = n.Addr
	}
	return s
}

// Addr returns the client addresses comma-separated, as in
// $YRPC_ZK_ENSEMBLE.
func (e *Ensemble) Addr() string { return strings.Join(e.Servers(), ",") }

// Nodes returns the nodes, node 1 first.
func (e *Ensemble) Nodes() []Node { return append([]Node(nil), e.nodes...) }

// Mode returns what the server at addr says it is in answer to srvr:
// "leader", "follower" or "standalone"; "" while it does not serve.
func Mode(addr string) string {
	for _, line := range strings.Split(FourLetter(addr, "srvr"), "\n") {
		if m, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(m)
		}
	}
	return ""
}

// WaitLeader waits up to limit until every node not killed by this test
// serves (a paused one does not) and exactly one of them leads, and
// returns the leader and how long it waited.
func (e *Ensemble) WaitLeader(limit time.Duration) (Node, time.Duration, error) {
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond) // polls srvr; bounded by limit
	defer tick.Stop()
	for {
		leader, state := e.leader()
		if leader.ID != 0 {
			return leader, time.Since(start), nil
		}
		if time.Since(start) > limit {
			return Node{}, time.Since(start), fmt.Errorf("zktest: no ensemble leader after %v: %s", limit, state)
		}
		<-tick.C
	}
}

// leader returns the leader if every live node serves and one leads, and
// a description of the nodes' modes.
func (e *Ensemble) leader() (Node, string) {
	var leaders []Node
	serving, live := 0, 0
	var state []string
	for _, n := range e.nodes {
		if e.killed[n.ID] {
			state = append(state, fmt.Sprintf("%d:killed", n.ID))
			continue
		}
		live++
		m := Mode(n.Addr)
		state = append(state, fmt.Sprintf("%d:%q", n.ID, m))
		switch m {
		case "leader":
			leaders = append(leaders, n)
			serving++
		case "follower":
			serving++
		}
	}
	if serving == live && len(leaders) == 1 {
		return leaders[0], ""
	}
	return Node{}, strings.Join(state, " ")
}

// Kill sends SIGKILL to node n and waits until its client port is closed.
// Only a test that took the ensemble may kill nodes.
func (e *Ensemble) Kill(n Node) {
	e.t.Helper()
	e.signal(n, syscall.SIGKILL)
	e.killed[n.ID] = true
	delete(e.paused, n.ID)
	tick := time.NewTicker(10 * time.Millisecond) // polls the port; bounded by killedWait
	defer tick.Stop()
	deadline := time.Now().Add(killedWait)
	for {
		c, err := net.DialTimeout("tcp", n.Addr, time.Second)
		if err != nil {
			return
		}
		c.Close()
		if time.Now().After(deadline) {
			e.t.Fatalf("zktest: node %d still accepts connections %v after SIGKILL", n.ID, killedWait)
		}
		<-tick.C
	}
}

// Pause stops node n with SIGSTOP until Resume (or the test's cleanup):
// it keeps its connections but answers nothing. Only a test that took the
// ensemble may pause nodes.
func (e *Ensemble) Pause(n Node) {
	e.t.Helper()
	e.signal(n, syscall.SIGSTOP)
	e.paused[n.ID] = true
}

// Resume continues node n after Pause.
func (e *Ensemble) Resume(n Node) {
	e.t.Helper()
	e.signal(n, syscall.SIGCONT)
	delete(e.paused, n.ID)
}

// signal sends sig to node n's JVM.
func (e *Ensemble) signal(n Node, sig syscall.Signal) {
	e.t.Helper()
	if !e.exclusive {
		e.t.Fatalf("zktest: sending %v to a node needs TakeEnsemble, not UseEnsemble", sig)
	}
	pid, err := n.pid()
	if err == nil {
		err = syscall.Kill(pid, sig)
	}
	if err != nil {
		e.t.Fatalf("zktest: %v to node %d: %v", sig, n.ID, err)
	}
}

// pid returns the process id of node n's JVM from its pid file, after
// checking that the process runs n's configuration.
func (n Node) pid() (int, error) {
	b, err := os.ReadFile(filepath.Join(n.dir, "pid"))
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("bad pid file: %w", err)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), filepath.Join(n.dir, "zoo.cfg")) {
		return 0, fmt.Errorf("process %d is not node %d's ZooKeeper (%q, %v)", pid, n.ID, cmdline, err)
	}
	return pid, nil
}

// Start starts node n again (after Kill) with its data, detached from the
// test process: the node outlives the test, and scripts/zk.sh stops it
// with the others. It does not wait; see WaitLeader.
func (e *Ensemble) Start(n Node) {
	e.t.Helper()
	if !e.exclusive {
		e.t.Fatal("zktest: Start needs TakeEnsemble, not UseEnsemble")
	}
	// sh starts run.sh in the background and exits: the node is nobody's
	// child here, in a session of its own.
	cmd := exec.Command("/bin/sh", "-c", `"$0" </dev/null >/dev/null 2>&1 &`, filepath.Join(n.dir, "run.sh"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("zktest: start node %d: %v: %s", n.ID, err, out)
	}
	delete(e.killed, n.ID)
}

// restore resumes the nodes this test paused, starts those it killed and
// waits until every node serves with one leader.
func (e *Ensemble) restore() {
	for _, n := range e.nodes {
		switch {
		case e.paused[n.ID]:
			e.Resume(n)
		case e.killed[n.ID]:
			e.Start(n)
		}
	}
	if _, took, err := e.WaitLeader(serveWait); err != nil {
		e.t.Errorf("zktest: the ensemble did not recover after the test: %v", err)
		for _, n := range e.nodes {
			e.t.Logf("node %d log (tail):\n%s", n.ID, tail(n.log(), 2000))
		}
	} else {
		e.t.Logf("zktest: ensemble serving again %v after the test", took.Round(time.Millisecond))
	}
}

// log returns what node n wrote to its log so far.
func (n Node) log() string {
	b, _ := os.ReadFile(filepath.Join(n.dir, "zookeeper.log"))
	return string(b)
}

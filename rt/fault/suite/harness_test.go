package suite

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/yrpc/yrpc/examples/tour/tourrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/metrics"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/zkreg"
)

// storeKey is the registry key of the tour's Store service.
var storeKey = registry.Key{Service: tourrpc.StoreServiceDesc.Name}

// waitFor polls cond every 10ms until it holds or limit passes; it returns
// how long it took and whether cond held.
func waitFor(limit time.Duration, cond func() bool) (time.Duration, bool) {
	start := time.Now()
	for {
		if cond() {
			return time.Since(start), true
		}
		if time.Since(start) > limit {
			return time.Since(start), false
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, bounded by limit
	}
}

// cluster is the provider processes of one test, registered under a root
// of their own, and the directory of their put logs and stderr.
type cluster struct {
	t       *testing.T
	zk      string        // ZooKeeper servers for providers and consumers, comma-separated
	session time.Duration // their ZooKeeper session timeout; set before starting any
	root    string
	dir     string
	mu      sync.Mutex
	procs   map[string]*proc // by name; the latest process of that name
}

func newCluster(t *testing.T, zk string) *cluster {
	root := fmt.Sprintf("/yrpc-suite/%s-%d", strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()), time.Now().UnixNano())
	c := &cluster{t: t, zk: zk, session: providerSession, root: root, dir: t.TempDir(), procs: map[string]*proc{}}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, p := range c.procs {
			p.kill()
		}
		if t.Failed() {
			for name := range c.procs {
				if b, err := os.ReadFile(filepath.Join(c.dir, name+".log")); err == nil && len(b) > 0 {
					t.Logf("stderr of %s:\n%s", name, tail(string(b), 3000))
				}
			}
		}
	})
	return c
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// provOpts are extra settings of one provider process.
type provOpts struct {
	addr    string // default "127.0.0.1:0"
	faults  string // envFaults
	faultMD bool
	cycle   string // envCycle
	grace   string // envShutdown
}

// proc is one provider process.
type proc struct {
	name, addr string
	cmd        *exec.Cmd
	stdin      interface{ Close() error }
	exited     chan struct{}
	err        error // of Wait; read after exited
}

// start starts provider name and waits until it listens.
func (c *cluster) start(name string, o provOpts) *proc {
	c.t.Helper()
	if o.addr == "" {
		o.addr = "127.0.0.1:0"
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	md := "0"
	if o.faultMD {
		md = "1"
	}
	cmd.Env = append(os.Environ(),
		envProvider+"="+name, envAddr+"="+o.addr, envZK+"="+c.zk, envRoot+"="+c.root,
		envPutLog+"="+filepath.Join(c.dir, name+".puts"), envFaults+"="+o.faults, envFaultMD+"="+md, envCycle+"="+o.cycle,
		envSession+"="+c.session.String(), envShutdown+"="+o.grace,
		"GORACE=halt_on_error=1")
	logf, err := os.OpenFile(filepath.Join(c.dir, name+".log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	defer logf.Close() // the child holds its own descriptor
	cmd.Stderr = logf
	stdin, err := cmd.StdinPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	p := &proc{name: name, cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		for sc.Scan() { // keep the pipe drained until the process exits
		}
	}()
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	c.mu.Lock()
	c.procs[name] = p
	c.mu.Unlock()
	select {
	case line, ok := <-lines:
		addr, found := strings.CutPrefix(line, "ready ")
		if !ok || !found {
			p.kill()
			b, _ := os.ReadFile(filepath.Join(c.dir, name+".log"))
			c.t.Fatalf("provider %s did not start (%q): %s", name, line, tail(string(b), 2000))
		}
		p.addr = addr
	case <-time.After(30 * time.Second):
		p.kill()
		c.t.Fatalf("provider %s did not start within 30s", name)
	}
	return p
}

// startN starts providers p1..pn.
func (c *cluster) startN(n int) []*proc {
	ps := make([]*proc, n)
	for i := range ps {
		ps[i] = c.start(fmt.Sprintf("p%d", i+1), provOpts{})
	}
	return ps
}

// kill sends SIGKILL and waits for the exit.
func (p *proc) kill() {
	if p.cmd.Process == nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
	p.stdin.Close()
}

// term sends SIGTERM (graceful shutdown) and waits up to limit for a clean
// exit.
func (p *proc) term(limit time.Duration) error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		p.stdin.Close()
		return p.err
	case <-time.After(limit):
		p.kill()
		return fmt.Errorf("suite: provider %s still running %v after SIGTERM", p.name, limit)
	}
}

// putIDs returns how many times each id appears in the put logs.
func (c *cluster) putIDs() map[int64]int {
	c.t.Helper()
	files, _ := filepath.Glob(filepath.Join(c.dir, "*.puts"))
	seen := map[int64]int{}
	for _, f := range files {
		ids, err := readPutLog(f)
		if err != nil {
			c.t.Fatal(err)
		}
		for _, id := range ids {
			seen[id]++
		}
	}
	return seen
}

// checkPuts fails the test if a Put ran twice or an acknowledged Put is
// missing, and returns the number of duplicates.
func (c *cluster) checkPuts(l *load) int {
	c.t.Helper()
	seen := c.putIDs()
	dups := 0
	for id, n := range seen {
		if n > 1 {
			dups++
			c.t.Errorf("Put %d executed %d times", id, n)
		}
	}
	missing := 0
	for _, id := range l.putsOK() {
		if seen[id] == 0 {
			missing++
		}
	}
	if missing > 0 {
		c.t.Errorf("%d acknowledged Puts are not in any provider's log", missing)
	}
	return dups
}

// consumer is one client process's view: its own ZooKeeper session and
// rt.Client.
type consumer struct {
	reg   *zkreg.Registry
	cli   *rt.Client
	store *tourrpc.StoreClient
	obs   *attemptObserver
}

// newConsumer connects a consumer to zk (default: the cluster's).
func (c *cluster) newConsumer(zk string) *consumer {
	c.t.Helper()
	if zk == "" {
		zk = c.zk
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reg, err := zkreg.New(ctx, zkreg.Options{Servers: strings.Split(zk, ","), Root: c.root, SessionTimeout: c.session})
	if err != nil {
		c.t.Fatal(err)
	}
	obs := &attemptObserver{}
	cli, err := rt.NewClient(rt.WithRegistry(reg), rt.WithApp("suite-consumer"), rt.WithObserver(obs))
	if err != nil {
		reg.Close()
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() {
		cli.Close()
		reg.Close()
	})
	return &consumer{reg: reg, cli: cli, store: tourrpc.NewStoreClient(cli), obs: obs}
}

// addrs returns the providers the client routes to (listed and not
// draining), sorted.
func (k *consumer) addrs() []string {
	var out []string
	for _, p := range k.cli.Providers(&tourrpc.StoreServiceDesc) {
		out = append(out, p.Addr)
	}
	return out
}

// draining reports whether the client knows addr as draining.
func (k *consumer) draining(addr string) bool {
	for _, p := range k.cli.Providers(&tourrpc.StoreServiceDesc) {
		if p.Addr == addr {
			return p.Draining
		}
	}
	return false
}

// waitProviders waits until the client knows exactly the providers ps
// (calling Get meanwhile, so that it watches the service) and returns how
// long it took.
func (k *consumer) waitProviders(t *testing.T, limit time.Duration, ps ...*proc) time.Duration {
	t.Helper()
	want := make([]string, len(ps))
	for i, p := range ps {
		want[i] = p.addr
	}
	sort.Strings(want)
	d, ok := waitFor(limit, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		k.store.Get(ctx, &tourrpc.Key{ID: 1})
		cancel()
		return slices.Equal(k.addrs(), want)
	})
	if !ok {
		t.Fatalf("consumer sees providers %v after %v, want %v", k.addrs(), limit, want)
	}
	return d
}

// attemptObserver counts client attempts per provider address, failed
// attempts, and failed third attempts.
type attemptObserver struct {
	m           sync.Map // addr -> *atomic.Int64
	failed      atomic.Int64
	failedThird atomic.Int64
}

func (o *attemptObserver) Observe(e metrics.Event) {
	if e.Attempt == 0 || e.Instance == "" {
		return
	}
	if e.Code != "OK" {
		o.failed.Add(1)
		if e.Attempt == 3 {
			o.failedThird.Add(1)
		}
	}
	v, ok := o.m.Load(e.Instance)
	if !ok {
		v, _ = o.m.LoadOrStore(e.Instance, new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(1)
}

func (o *attemptObserver) attempts(addr string) int64 {
	if v, ok := o.m.Load(addr); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

// znodes reads the providers registered under the cluster's root straight
// from ZooKeeper (zkreg's List: no cache, no grace), with a session of its
// own.
type znodes struct{ reg *zkreg.Registry }

func (c *cluster) watchZnodes() *znodes {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reg, err := zkreg.New(ctx, zkreg.Options{Servers: strings.Split(c.zk, ","), Root: c.root, SessionTimeout: c.session})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { reg.Close() })
	return &znodes{reg: reg}
}

// list returns the registered provider addresses; ok is false when
// ZooKeeper did not answer.
func (z *znodes) list() (addrs map[string]bool, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	ls, err := z.reg.List(ctx)
	if err != nil {
		return nil, false
	}
	addrs = map[string]bool{}
	for _, l := range ls {
		if l.Key == storeKey {
			for _, p := range l.Providers {
				addrs[p.Addr] = true
			}
		}
	}
	return addrs, true
}

// hasAll reports whether every one of ps is registered.
func (z *znodes) hasAll(ps ...*proc) bool {
	addrs, ok := z.list()
	if !ok {
		return false
	}
	for _, p := range ps {
		if !addrs[p.addr] {
			return false
		}
	}
	return true
}

// waitGone waits until addr's znode is gone and returns the time since
// from.
func (z *znodes) waitGone(t *testing.T, addr string, from time.Time) time.Duration {
	t.Helper()
	if _, ok := waitFor(20*time.Second, func() bool { addrs, ok := z.list(); return ok && !addrs[addr] }); !ok {
		t.Fatalf("znode of %s still there 20s later", addr)
	}
	return time.Since(from)
}

// ms formats a duration for figures: milliseconds, or microseconds below
// 10ms.
func ms(d time.Duration) string {
	if d < 10*time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

package soak

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yrpc/yrpc/examples/tour/tourrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/zkreg"
)

// Defaults of Options.
const (
	DefaultDuration  = 30 * time.Minute
	DefaultChurn     = time.Minute
	DefaultSample    = 10 * time.Second
	DefaultZKDown    = 15 * time.Second
	DefaultProviders = 3
	DefaultWorkers   = 16
	DefaultRate      = 2000
	DefaultSession   = 5 * time.Second
)

// Options configure a soak. The zero value of each field means its
// default; ZK and Command are required.
type Options struct {
	Duration time.Duration // how long the load runs; default 30 min
	Churn    time.Duration // a provider restart every Churn; default 1 min
	Sample   time.Duration // a sample of every process every Sample; default 10 s
	// ZK is the ZooKeeper server, "host:port" (scripts/zk.sh's $YRPC_ZK).
	ZK string
	// RestartZK stops ZooKeeper, leaves it down for the given time and
	// starts it again with its data, returning once it serves: the
	// restart halfway (ScriptZK makes one for a server of
	// scripts/zk.sh). nil skips the restart.
	RestartZK func(down time.Duration) error
	ZKDown    time.Duration // how long ZooKeeper stays down; default 15 s
	// Providers is the number of provider processes, at least 2; the last
	// is never restarted. Default 3.
	Providers int
	Workers   int           // default 16
	Rate      int           // calls per second; default 2,000
	Timeout   time.Duration // call timeout; 0: the schema's (Get 2 s, Put 1 s)
	Session   time.Duration // ZooKeeper session timeout of every process; default 5 s
	// Dir receives the providers' put logs and stderr; default a new
	// temporary directory.
	Dir string
	// Command starts a provider: a binary and the arguments that make it
	// run Provider (the provider's flags follow). Required.
	Command []string
	Env     []string  // the providers' environment; default os.Environ()
	Log     io.Writer // a progress line per sample and event; default io.Discard
}

func (o *Options) defaults() error {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Duration, DefaultDuration)
	def(&o.Churn, DefaultChurn)
	def(&o.Sample, DefaultSample)
	def(&o.ZKDown, DefaultZKDown)
	def(&o.Session, DefaultSession)
	n := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	n(&o.Providers, DefaultProviders)
	n(&o.Workers, DefaultWorkers)
	n(&o.Rate, DefaultRate)
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	switch {
	case o.ZK == "":
		return errors.New("soak: no ZooKeeper (-zk or $YRPC_ZK)")
	case len(o.Command) == 0:
		return errors.New("soak: no provider command")
	case o.Providers < 2:
		return errors.New("soak: need at least 2 providers")
	}
	return nil
}

// Event is one fault the soak injected.
type Event struct {
	At       float64 `json:"at_s"` // seconds since the load started
	Kind     string  `json:"kind"` // "graceful", "kill" or "zookeeper"
	Provider string  `json:"provider,omitempty"`
	Took     float64 `json:"took_s"` // until the provider served again, or ZooKeeper did
	Error    string  `json:"error,omitempty"`
}

// step is a planned event.
type step struct {
	at       time.Duration
	kind     string
	provider int // index; -1 for ZooKeeper
}

// plan returns the events of a soak, in time order: a provider restart
// every churn (the providers but the last in turn, each first gracefully
// and with SIGKILL the next time), none in the last churn of the run (so
// that the last samples are steady), and the ZooKeeper restart halfway,
// between two provider restarts, when zk is set.
func plan(d, churn time.Duration, providers int, zk bool) []step {
	var steps []step
	churned := providers - 1
	for k := 1; time.Duration(k)*churn <= d-churn; k++ {
		kind := "graceful"
		if ((k-1)/churned)%2 == 1 {
			kind = "kill"
		}
		steps = append(steps, step{at: time.Duration(k) * churn, kind: kind, provider: (k - 1) % churned})
	}
	if zk {
		at := d/2/churn*churn + churn/2
		steps = append(steps, step{at: at, kind: "zookeeper", provider: -1})
		slices.SortStableFunc(steps, func(a, b step) int { return int(a.at - b.at) })
	}
	return steps
}

// Run runs a soak and returns its report. ctx ends it early (the report
// then covers the time it ran).
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if o.Dir == "" {
		dir, err := os.MkdirTemp("", "yrpc-soak-")
		if err != nil {
			return nil, err
		}
		o.Dir = dir
	}
	if err := freshLogs(o.Dir, o.Providers); err != nil {
		return nil, err
	}
	spec := &providerSpec{command: o.Command, env: o.Env, zk: o.ZK, session: o.Session, dir: o.Dir,
		root: fmt.Sprintf("/yrpc-soak/%d", time.Now().UnixNano())}
	rep := &Report{Started: time.Now().UTC(), Settings: settingsOf(o, spec.root)}
	provs := make([]*provider, o.Providers)
	defer func() {
		for _, p := range provs {
			if p != nil {
				p.kill()
			}
		}
	}()
	for i := range provs {
		p, err := spec.start(providerName(i), "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		provs[i] = p
	}
	regCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	reg, err := zkreg.New(regCtx, zkreg.Options{Servers: strings.Split(o.ZK, ","), Root: spec.root, SessionTimeout: o.Session,
		Logger: slog.New(slog.NewTextHandler(o.Log, &slog.HandlerOptions{Level: slog.LevelWarn})).With("consumer", "zkreg")})
	cancel()
	if err != nil {
		return nil, err
	}
	defer reg.Close()
	cli, err := rt.NewClient(rt.WithRegistry(reg), rt.WithApp("soak-consumer"),
		rt.WithLogger(slog.New(slog.NewTextHandler(o.Log, &slog.HandlerOptions{Level: slog.LevelWarn})).With("consumer", "rt")))
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	store := tourrpc.NewStoreClient(cli)
	if err := waitProviders(ctx, cli, store, len(provs)); err != nil {
		return nil, err
	}

	l := startLoad(store, loadOptions{workers: o.Workers, rate: o.Rate, putEvery: 8, timeout: o.Timeout})
	s := &soak{o: o, spec: spec, provs: provs, load: l, rep: rep}
	s.run(ctx)
	l.stop()
	rep.Seconds = time.Since(l.start).Seconds()
	for i, p := range provs { // stop them so that their put logs are complete
		if err := p.term(15 * time.Second); err != nil {
			fmt.Fprintf(o.Log, "soak: stopping %s at the end: %v\n", p.name, err)
		}
		provs[i] = nil
	}
	if err := rep.finish(l, o.Dir, o.timeouts()); err != nil {
		return rep, err
	}
	return rep, nil
}

// timeouts returns the calls' timeout by method: Options.Timeout, or
// the tour schema's timeout of each method.
func (o *Options) timeouts() map[string]time.Duration {
	m := map[string]time.Duration{}
	for _, md := range tourrpc.StoreServiceDesc.Methods {
		m[md.Name] = cmp.Or(o.Timeout, md.Policy.Timeout)
	}
	return m
}

// freshLogs removes the put logs and stderr logs of the providers of an
// earlier soak in dir: the providers append to them (a restarted
// provider goes on with its predecessor's), and Put ids start at 1 in
// every soak, so an old put log would count as Puts executed twice.
func freshLogs(dir string, providers int) error {
	for i := range providers {
		for _, ext := range []string{".puts", ".log"} {
			if err := os.Remove(filepath.Join(dir, providerName(i)+ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("soak: %w", err)
			}
		}
	}
	return nil
}

// providerName names provider i: p1, p2, ...
func providerName(i int) string { return "p" + strconv.Itoa(i+1) }

// waitProviders calls Get until the client knows n providers (or 30 s
// pass): the load starts against the whole cluster.
func waitProviders(ctx context.Context, cli *rt.Client, store *tourrpc.StoreClient, n int) error {
	deadline := time.Now().Add(30 * time.Second)
	for len(cli.Providers(&tourrpc.StoreServiceDesc)) < n {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("soak: the consumer sees %d of %d providers after 30 s", len(cli.Providers(&tourrpc.StoreServiceDesc)), n)
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		_, _ = store.Get(cctx, &tourrpc.Key{ID: 1})
		cancel()
		time.Sleep(100 * time.Millisecond) // polling discovery
	}
	return nil
}

// soak is the state of a running soak's main loop.
type soak struct {
	o     Options
	spec  *providerSpec
	mu    sync.Mutex // guards provs against the sampler during a restart
	provs []*provider
	load  *load
	rep   *Report
	zkWG  sync.WaitGroup
}

// run injects the planned events and takes the samples until the
// duration is over or ctx ends.
func (s *soak) run(ctx context.Context) {
	steps := plan(s.o.Duration, s.o.Churn, len(s.provs), s.o.RestartZK != nil)
	start := s.load.start
	nextSample := s.o.Sample
	for {
		next, isStep := nextSample, false
		if len(steps) > 0 && steps[0].at <= next {
			next, isStep = steps[0].at, true
		}
		if next > s.o.Duration {
			next = s.o.Duration
		}
		t := time.NewTimer(time.Until(start.Add(next)))
		select {
		case <-ctx.Done():
			t.Stop()
			s.zkWG.Wait()
			return
		case <-t.C:
		}
		switch {
		case next >= s.o.Duration:
			s.sample()
			s.zkWG.Wait()
			return
		case isStep:
			st := steps[0]
			steps = steps[1:]
			s.inject(st)
		default:
			s.sample()
			nextSample += s.o.Sample
		}
	}
}

// inject runs one planned event. A provider restart runs in the main loop;
// the ZooKeeper restart, which takes ZKDown and more, in a goroutine.
func (s *soak) inject(st step) {
	at := time.Since(s.load.start)
	if st.kind == "zookeeper" {
		s.zkWG.Add(1)
		go func() {
			defer s.zkWG.Done()
			ev := Event{At: at.Seconds(), Kind: st.kind}
			t0 := time.Now()
			err := s.o.RestartZK(s.o.ZKDown)
			ev.Took = time.Since(t0).Seconds()
			if err != nil {
				ev.Error = err.Error()
			}
			s.event(ev)
		}()
		return
	}
	s.mu.Lock()
	old := s.provs[st.provider]
	s.provs[st.provider] = nil
	s.mu.Unlock()
	name, addr := providerName(st.provider), "127.0.0.1:0"
	ev := Event{At: at.Seconds(), Kind: st.kind, Provider: name}
	t0 := time.Now()
	var errs []error
	switch {
	case old == nil: // its last start failed: only start it
		errs = append(errs, fmt.Errorf("soak: %s was not running", name))
	case st.kind == "kill":
		old.kill()
		addr = old.addr
	default:
		if err := old.term(15 * time.Second); err != nil {
			errs = append(errs, err)
		}
		addr = old.addr
	}
	p, err := s.spec.start(name, addr)
	if err != nil {
		errs = append(errs, err)
		// Keep the cluster's size: any port will do.
		p, err = s.spec.start(name, "127.0.0.1:0")
		errs = append(errs, err)
	}
	ev.Took = time.Since(t0).Seconds()
	if err := errors.Join(errs...); err != nil {
		ev.Error = err.Error()
	}
	s.mu.Lock()
	s.provs[st.provider] = p
	s.mu.Unlock()
	s.event(ev)
}

// event records an event and logs it.
func (s *soak) event(ev Event) {
	s.mu.Lock()
	s.rep.Events = append(s.rep.Events, ev)
	s.mu.Unlock()
	fmt.Fprintf(s.o.Log, "soak %6.0fs event %-9s %-3s took %.2fs %s\n", ev.At, ev.Kind, ev.Provider, ev.Took, ev.Error)
}

// sample records the consumer's and every provider's figures.
func (s *soak) sample() {
	smp := Sample{At: time.Since(s.load.start).Seconds(), Calls: s.load.gets.Load() + s.load.puts.Load(),
		Consumer: selfStats(), Providers: map[string]ProcStats{}}
	getFail, putFail, _, _ := s.load.counts()
	smp.GetFail, smp.PutFail = total(getFail), total(putFail)
	s.mu.Lock()
	provs := slices.Clone(s.provs)
	s.mu.Unlock()
	for _, p := range provs {
		if p == nil {
			continue // being restarted
		}
		st := ProcStats{RSS: procRSS(p.cmd.Process.Pid), Uptime: time.Since(p.started).Seconds()}
		g, heap, err := p.stats()
		if err == nil {
			st.Goroutines, st.Heap = g, float64(heap)/(1<<20)
		}
		smp.Providers[p.name] = st
	}
	s.mu.Lock()
	s.rep.Samples = append(s.rep.Samples, smp)
	s.mu.Unlock()
	var ps []string
	for _, name := range slices.Sorted(maps.Keys(smp.Providers)) {
		st := smp.Providers[name]
		ps = append(ps, fmt.Sprintf("%s %.0fMiB/%dg", name, st.RSS, st.Goroutines))
	}
	fmt.Fprintf(s.o.Log, "soak %6.0fs calls=%d get_fail=%d put_fail=%d consumer rss=%.1fMiB goroutines=%d heap=%.1fMiB | %s\n",
		smp.At, smp.Calls, smp.GetFail, smp.PutFail, smp.Consumer.RSS, smp.Consumer.Goroutines, smp.Consumer.Heap, strings.Join(ps, " "))
}

// selfStats returns this process's figures, its live heap after a GC.
func selfStats() ProcStats {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ProcStats{RSS: procRSS(os.Getpid()), Goroutines: runtime.NumGoroutine(), Heap: float64(ms.HeapAlloc) / (1 << 20)}
}

// readPutLogs returns how many times each Put id appears in the put logs
// (NAME.puts) in dir.
func readPutLogs(dir string) (map[int64]int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.puts"))
	if err != nil {
		return nil, err
	}
	seen := map[int64]int{}
	for _, name := range files {
		if err := readPutLog(name, seen); err != nil {
			return nil, err
		}
	}
	return seen, nil
}

func readPutLog(name string, seen map[int64]int) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		id, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil {
			return fmt.Errorf("soak: %s: bad line %q", name, sc.Text())
		}
		seen[id]++
	}
	return sc.Err()
}

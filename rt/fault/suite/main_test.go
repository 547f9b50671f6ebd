package suite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/yrpc/yrpc/examples/tour/tourrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/fault"
	"github.com/yrpc/yrpc/zkreg"
)

// Environment of a provider process: the test binary re-executed with
// envProvider set runs providerMain instead of the tests.
const (
	envProvider = "YRPC_SUITE_PROVIDER"    // provider name, e.g. "p1"
	envAddr     = "YRPC_SUITE_ADDR"        // listen address; "127.0.0.1:0" picks one
	envZK       = "YRPC_SUITE_ZK"          // ZooKeeper servers, comma-separated
	envRoot     = "YRPC_SUITE_ROOT"        // zkreg root
	envPutLog   = "YRPC_SUITE_PUTLOG"      // file receiving the id of each Put executed
	envFaults   = "YRPC_SUITE_FAULTS"      // "Method:fraction:rule|..." (rule as fault.Parse)
	envFaultMD  = "YRPC_SUITE_FAULT_MD"    // "1": apply fault rules from call metadata
	envCycle    = "YRPC_SUITE_FAULT_CYCLE" // e.g. "10s": envFaults on for a period, off for the next
	envSession  = "YRPC_SUITE_SESSION"     // ZooKeeper session timeout, e.g. "2s"
	envShutdown = "YRPC_SUITE_SHUTDOWN"    // how long SIGTERM's Shutdown waits for calls and streams; default 5s
)

// exitShutdownTimeout is a provider's exit code when its Shutdown's time
// ran out with calls or streams still open (they were then reset).
const exitShutdownTimeout = 4

// providerSession is the default ZooKeeper session timeout of providers
// and consumers: short, so that a killed provider's node goes soon.
const providerSession = 2 * time.Second

func TestMain(m *testing.M) {
	if name := os.Getenv(envProvider); name != "" {
		os.Exit(providerMain(name))
	}
	goleak.VerifyTestMain(m)
}

// providerMain serves tourrpc.Store until SIGTERM (graceful shutdown),
// SIGKILL, or the end of stdin (the test process died). It prints
// "ready ADDR" once it listens; its registration follows at once.
func providerMain(name string) int {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("provider", name)
	fail := func(err error) int {
		logger.Error("provider failed", "err", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	go func() { // the parent holds our stdin: EOF means it is gone
		io.Copy(io.Discard, os.Stdin)
		logger.Warn("stdin closed; exiting")
		os.Exit(3)
	}()

	putLog, err := os.OpenFile(os.Getenv(envPutLog), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fail(err)
	}
	defer putLog.Close()
	inj, rules, err := injectorFromEnv()
	if err != nil {
		return fail(err)
	}
	if c := os.Getenv(envCycle); c != "" && inj != nil {
		period, err := time.ParseDuration(c)
		if err != nil || period <= 0 {
			return fail(fmt.Errorf("suite: bad %s %q", envCycle, c))
		}
		go cycleFaults(ctx, inj, rules, period)
	}
	session, err := time.ParseDuration(os.Getenv(envSession))
	if err != nil || session <= 0 {
		return fail(fmt.Errorf("suite: bad %s %q", envSession, os.Getenv(envSession)))
	}
	regCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	reg, err := zkreg.New(regCtx, zkreg.Options{
		Servers:        strings.Split(os.Getenv(envZK), ","),
		Root:           os.Getenv(envRoot),
		SessionTimeout: session,
		Logger:         logger,
	})
	cancel()
	if err != nil {
		return fail(err)
	}
	defer reg.Close()
	lis, err := net.Listen("tcp", os.Getenv(envAddr))
	if err != nil {
		return fail(err)
	}
	opts := []rt.ServerOption{rt.WithRegistry(reg), rt.WithApp("suite-store"), rt.WithLogger(logger),
		rt.WithDeregisterWait(300 * time.Millisecond)}
	if inj != nil {
		opts = append(opts, rt.WithServerInterceptors(inj.Interceptor()))
	}
	srv := rt.NewServer(opts...)
	tourrpc.RegisterStore(srv, &store{name: name, putLog: putLog})
	fmt.Printf("ready %s\n", lis.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), lis) }()
	select {
	case err := <-done:
		return fail(err)
	case <-ctx.Done():
	}
	grace := 5 * time.Second
	if g := os.Getenv(envShutdown); g != "" {
		if grace, err = time.ParseDuration(g); err != nil {
			return fail(fmt.Errorf("suite: bad %s %q", envShutdown, g))
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); errors.Is(err, context.DeadlineExceeded) {
		<-done
		return exitShutdownTimeout
	} else if err != nil {
		return fail(fmt.Errorf("shutdown: %w", err))
	}
	<-done
	return 0
}

// injectorFromEnv builds the provider's fault.Injector and returns its
// rules, or nil when it has no faults.
func injectorFromEnv() (*fault.Injector, []fault.Rule, error) {
	spec, fromMD := os.Getenv(envFaults), os.Getenv(envFaultMD) == "1"
	if spec == "" && !fromMD {
		return nil, nil, nil
	}
	rules, err := parseFaults(spec)
	if err != nil {
		return nil, nil, err
	}
	return fault.NewWithOptions(fault.Options{FromMetadata: fromMD}, rules...), rules, nil
}

// cycleFaults turns the rules off and on every period until ctx ends (a
// provider process's main loop, so real time).
func cycleFaults(ctx context.Context, inj *fault.Injector, rules []fault.Rule, period time.Duration) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for on := true; ; {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		on = !on
		if on {
			inj.Set(rules...)
		} else {
			inj.Set()
		}
	}
}

// parseFaults reads "Get:0.02:drop|Get:0.05:delay=20ms".
func parseFaults(spec string) ([]fault.Rule, error) {
	var rules []fault.Rule
	for _, s := range strings.Split(spec, "|") {
		if s == "" {
			continue
		}
		parts := strings.SplitN(s, ":", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("suite: bad fault %q (want Method:fraction:rule)", s)
		}
		frac, err := strconv.ParseFloat(parts[1], 64)
		if err != nil {
			return nil, fmt.Errorf("suite: bad fault fraction %q: %w", parts[1], err)
		}
		r, err := fault.Parse(parts[2])
		if err != nil {
			return nil, fmt.Errorf("suite: fault %q: %w", s, err)
		}
		r.Method, r.Fraction = parts[0], frac
		rules = append(rules, r)
	}
	return rules, nil
}

// store implements tourrpc.StoreServer; Put records each id it executes;
// Watch is a feed of updates every 10 ms, endless (until the stream ends)
// for ids below finiteFeed, else of id/finiteFeed updates.
type store struct {
	tourrpc.UnimplementedStoreServer
	name   string
	putLog *os.File
}

func (s *store) Get(_ context.Context, k *tourrpc.Key) (*tourrpc.Entry, error) {
	return &tourrpc.Entry{ID: k.ID, Value: "v" + strconv.FormatInt(k.ID, 10), ServedBy: s.name}, nil
}

func (s *store) Put(_ context.Context, e *tourrpc.Entry) (*tourrpc.Entry, error) {
	// One write syscall per call (O_APPEND): lines never interleave, and
	// a line is on disk before the caller can see success.
	if _, err := s.putLog.Write(append(strconv.AppendInt(make([]byte, 0, 24), e.ID, 10), '\n')); err != nil {
		return nil, rt.Errorf(rt.Internal, "suite: put log: %v", err)
	}
	e.ServedBy = s.name
	return e, nil
}

// readPutLog returns the ids in a put log, one per line.
func readPutLog(path string) ([]int64, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ids []int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		id, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("suite: %s: bad line %q", path, sc.Text())
		}
		ids = append(ids, id)
	}
	return ids, sc.Err()
}

// finiteFeed marks the ids of Watch feeds that end by themselves: id =
// n*finiteFeed + i sends n updates and ends with OK.
const finiteFeed = 1 << 32

func (s *store) Watch(k *tourrpc.Key, stream rt.ServerStreamingServer[tourrpc.Entry]) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	n := k.ID / finiteFeed
	for i := int64(1); n == 0 || i <= n; i++ {
		if err := stream.Send(&tourrpc.Entry{ID: k.ID, Value: strconv.FormatInt(i, 10), ServedBy: s.name}); err != nil {
			return err
		}
		select {
		case <-tick.C:
		case <-stream.Context().Done():
			return stream.Context().Err()
		}
	}
	return nil
}

package soak

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/yrpc/yrpc/examples/tour/tourrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/zkreg"
)

// prefix starts every line of the provider's protocol on its standard
// output: "@soak ready ADDR" once it listens, "@soak stats GOROUTINES
// HEAP" in answer to "stats" on its standard input.
const prefix = "@soak "

// Provider runs "soak provider": serve tourrpc.Store on -addr, registered
// in ZooKeeper, until SIGTERM (graceful shutdown: deregister, drain, exit
// 0), SIGKILL, or the end of stdin (the soak is gone: exit 3 at once).
// Every Put it executes appends its id to -putlog with one write.
func Provider(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer, stderr io.Writer) error {
	fs := flag.NewFlagSet("provider", flag.ContinueOnError)
	name := fs.String("name", "p1", "provider name, returned in every Entry's served_by")
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	zk := fs.String("zk", "", "ZooKeeper servers, comma-separated")
	root := fs.String("root", "", "zkreg root")
	session := fs.Duration("session", DefaultSession, "ZooKeeper session timeout")
	putLog := fs.String("putlog", "", "file receiving the id of each Put executed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("provider", *name)
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	out := &lineWriter{w: stdout}

	log, err := os.OpenFile(*putLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("soak: provider %s: %w", *name, err)
	}
	defer log.Close()
	regCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	reg, err := zkreg.New(regCtx, zkreg.Options{Servers: strings.Split(*zk, ","), Root: *root, SessionTimeout: *session, Logger: logger})
	cancel()
	if err != nil {
		return fmt.Errorf("soak: provider %s: %w", *name, err)
	}
	defer reg.Close()
	lis, err := listen(ctx, *addr)
	if err != nil {
		return fmt.Errorf("soak: provider %s: %w", *name, err)
	}
	srv := rt.NewServer(rt.WithRegistry(reg), rt.WithApp("soak-store"), rt.WithLogger(logger),
		rt.WithDeregisterWait(300*time.Millisecond))
	tourrpc.RegisterStore(srv, &store{name: *name, putLog: log})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.WithoutCancel(ctx), lis) }()
	go answer(stdin, out, logger)
	if err := out.say("ready %s", lis.Addr()); err != nil {
		return err
	}
	select {
	case err := <-served:
		return fmt.Errorf("soak: provider %s stopped serving: %w", *name, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("soak: provider %s: shutdown: %w", *name, err)
	}
	<-served
	return nil
}

// listen listens on addr, retrying for up to 10 s while the address is in
// use (a provider started again on its old address right after a kill).
func listen(ctx context.Context, addr string) (net.Listener, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		lis, err := net.Listen("tcp", addr)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return lis, err
		}
		time.Sleep(100 * time.Millisecond) // waiting for the kernel to free the port
	}
}

// answer serves the provider's standard input: "stats" gets the
// goroutines and live heap; the end of input means the soak is gone.
func answer(stdin io.Reader, out *lineWriter, logger *slog.Logger) {
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "stats" {
			continue
		}
		runtime.GC() // the live heap, as the soak's own samples
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if err := out.say("stats %d %d", runtime.NumGoroutine(), ms.HeapAlloc); err != nil {
			break
		}
	}
	logger.Warn("stdin closed; exiting")
	os.Exit(3)
}

// lineWriter writes whole protocol lines from several goroutines.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) say(format string, args ...any) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := fmt.Fprintf(l.w, prefix+format+"\n", args...)
	return err
}

// store implements tourrpc.StoreServer; Put records each id it executes.
type store struct {
	tourrpc.UnimplementedStoreServer
	name   string
	putLog *os.File
}

func (s *store) Get(_ context.Context, k *tourrpc.Key) (*tourrpc.Entry, error) {
	return &tourrpc.Entry{ID: k.ID, Value: "v" + strconv.FormatInt(k.ID, 10), ServedBy: s.name}, nil
}

func (s *store) Put(_ context.Context, e *tourrpc.Entry) (*tourrpc.Entry, error) {
	// One write per call (O_APPEND): lines never interleave, and a line is
	// in the file before the caller can see success.
	if _, err := s.putLog.Write(append(strconv.AppendInt(make([]byte, 0, 24), e.ID, 10), '\n')); err != nil {
		return nil, rt.Errorf(rt.Internal, "soak: put log: %v", err)
	}
	e.ServedBy = s.name
	return e, nil
}

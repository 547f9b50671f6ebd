package runner

import (
	"bufio"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/yrpc/yrpc/bench/internal/certs"
	"github.com/yrpc/yrpc/bench/internal/impl"
	"github.com/yrpc/yrpc/bench/internal/timeline"
)

// Server runs "bench server": serve one implementation on loopback and
// answer the harness on stdin/stdout until "quit" or end of input.
func Server(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	name := fs.String("impl", "", "implementation: "+strings.Join(impl.Names(), ", "))
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	certDir := fs.String("certs", "", "directory of the run's certificates, for TLS implementations (bench run makes it)")
	size := fs.Int("size", 0, "request size in bytes (0: the workload's 581)")
	listeners := fs.Int("listeners", 1, "independent servers, each on its own listener (the providers curve)")
	timelineFile := fs.String("timeline", "", "file to write when the collections of this process ended to, on quit (bench tail)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listeners < 1 || *size < 0 {
		return fmt.Errorf("runner: need listeners >= 1 and size >= 0")
	}
	im, err := impl.Lookup(*name)
	if err != nil {
		return err
	}
	cfg, err := tlsConfig(im, *certDir, (*certs.Set).Server)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Each listener gets a server of its own; served reports the first
	// that stops, waitAll waits for all of them once ctx is cancelled.
	served := make(chan error, *listeners)
	var addrs []string
	var accepted atomic.Int64 // connections accepted on all listeners
	for range *listeners {
		inner, err := net.Listen("tcp", *addr)
		if err != nil {
			cancel()
			waitAll(served, len(addrs))
			return fmt.Errorf("runner: listen: %w", err)
		}
		lis := countingListener{inner, &accepted}
		go func() { served <- im.Serve(ctx, lis, impl.Options{Size: *size, TLS: cfg}) }()
		addrs = append(addrs, lis.Addr().String())
	}
	stop := func() error {
		cancel()
		err := waitAll(served, len(addrs))
		if *timelineFile != "" {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if werr := timeline.Write(*timelineFile, &timeline.File{Role: "server", Impl: im.Name, GCEnds: timeline.GCEnds(&m)}); err == nil {
				err = werr
			}
		}
		return err
	}
	if err := say(stdout, "addr %s", strings.Join(addrs, ",")); err != nil {
		stop()
		return err
	}

	cmds := make(chan string)
	go func() {
		defer close(cmds)
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
			select {
			case cmds <- strings.TrimSpace(sc.Text()):
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case err := <-served:
			cancel()
			waitAll(served, len(addrs)-1)
			return fmt.Errorf("runner: %s server stopped: %w", im.Name, err)
		case cmd, ok := <-cmds:
			if !ok || cmd == "quit" {
				return stop()
			}
			switch cmd {
			case "mem":
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				err = say(stdout, "mem %d %d %d", m.Mallocs, m.TotalAlloc, accepted.Load())
			default:
				err = say(stdout, "error unknown command %q", cmd)
			}
			if err != nil {
				stop()
				return err
			}
		}
	}
}

// countingListener counts the connections it accepts in n, so that the
// runner can tell how many client connections a point really had (the
// fan-in and providers curves). The connections themselves are the inner
// listener's, unwrapped.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// waitAll waits for n servers to report on served and returns the first
// error.
func waitAll(served <-chan error, n int) error {
	var first error
	for range n {
		if err := <-served; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// tlsConfig loads side's config of the run's certificates in dir for a
// TLS implementation; nil for the others.
func tlsConfig(im *impl.Impl, dir string, side func(*certs.Set) *tls.Config) (*tls.Config, error) {
	if !im.TLS {
		return nil, nil
	}
	s, err := certs.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("runner: %s runs over TLS: %w", im.Name, err)
	}
	return side(s), nil
}

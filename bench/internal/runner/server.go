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

	"github.com/yrpc/yrpc/bench/internal/certs"
	"github.com/yrpc/yrpc/bench/internal/impl"
)

// Server runs "bench server": serve one implementation on loopback and
// answer the harness on stdin/stdout until "quit" or end of input.
func Server(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	name := fs.String("impl", "", "implementation: "+strings.Join(impl.Names(), ", "))
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	certDir := fs.String("certs", "", "directory of the run's certificates, for TLS implementations (bench run makes it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	im, err := impl.Lookup(*name)
	if err != nil {
		return err
	}
	cfg, err := tlsConfig(im, *certDir, (*certs.Set).Server)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("runner: listen: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- im.Serve(ctx, lis, cfg) }()
	if err := say(stdout, "addr %s", lis.Addr()); err != nil {
		cancel()
		<-served
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
			return fmt.Errorf("runner: %s server stopped: %w", im.Name, err)
		case cmd, ok := <-cmds:
			if !ok || cmd == "quit" {
				cancel()
				return <-served
			}
			switch cmd {
			case "mem":
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				err = say(stdout, "mem %d %d", m.Mallocs, m.TotalAlloc)
			default:
				err = say(stdout, "error unknown command %q", cmd)
			}
			if err != nil {
				cancel()
				<-served
				return err
			}
		}
	}
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

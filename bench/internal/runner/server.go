package runner

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"

	"github.com/yrpc/yrpc/bench/internal/impl"
)

// Server runs "bench server": serve one implementation on loopback and
// answer the harness on stdin/stdout until "quit" or end of input.
func Server(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	name := fs.String("impl", "", "implementation: "+strings.Join(impl.Names(), ", "))
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	im, err := impl.Lookup(*name)
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
	go func() { served <- im.Serve(ctx, lis) }()
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

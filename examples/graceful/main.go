// Command graceful is a provider whose main stops the way a deployment
// stops it: on SIGTERM (or Ctrl-C) it deregisters, waits for consumers to
// notice, drains the calls in flight and exits 0, logging no warning on the
// way. It serves the greeter example's Greeter service.
//
//	go run ./examples/graceful -zk 127.0.0.1:2181     # registered in ZooKeeper
//	go run ./examples/graceful -listen 127.0.0.1:7001  # no registry: consumers dial the address
//
// The order is what makes it graceful:
//
//  1. Serve gets a context that the signal does not end: the end of
//     Serve's context closes the server at once, as Close does (calls in
//     flight are canceled), not gracefully.
//  2. On the signal, Shutdown gets a fresh context bounded by -drain: the
//     signal's context is already done, and Shutdown given a done context
//     gives up deregistering and draining at once.
//  3. The registry is closed last, after Shutdown returned and Serve with
//     it: closed earlier, Shutdown's deregistration fails ("registry:
//     closed"), and consumers keep the provider until its ZooKeeper
//     session expires.
//
// A second signal during the shutdown kills the process at once (signal
// handling is back to the default by then).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/yrpc/yrpc/examples/greeter/greeterrpc"
	"github.com/yrpc/yrpc/rt"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/zkreg"
)

// MDProvider is the response metadata key in which the greeter names the
// provider that answered.
const MDProvider = "provider"

// greeter implements greeterrpc.GreeterServer; each call takes work.
type greeter struct {
	greeterrpc.UnimplementedGreeterServer
	addr string
	work time.Duration
}

func (g greeter) SayHello(ctx context.Context, req *greeterrpc.HelloRequest) (*greeterrpc.HelloReply, error) {
	if g.work > 0 {
		t := time.NewTimer(g.work)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	rt.SetResponseMetadata(ctx, MDProvider, g.addr)
	return &greeterrpc.HelloReply{Message: "Hello, " + req.Name + "!"}, nil
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "graceful:", err)
		os.Exit(1)
	}
}

// run serves until SIGTERM or an interrupt, then shuts down gracefully.
func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("graceful", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	zk := fs.String("zk", "", "ZooKeeper servers, host:port[,host:port]; empty: no registry")
	root := fs.String("root", "/yrpc", "ZooKeeper root path")
	deregWait := fs.Duration("deregister-wait", time.Second, "how long consumers get to notice the deregistration (with -zk)")
	drain := fs.Duration("drain", 10*time.Second, "how long calls in flight get to finish")
	work := fs.Duration("work", 0, "how long each call takes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))

	// The signal ends this context; only the wait below uses it.
	sig, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	addr := lis.Addr().String()
	opts := []rt.ServerOption{rt.WithLogger(logger)}
	var reg registry.Registry
	if *zk != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		z, err := zkreg.New(ctx, zkreg.Options{Servers: strings.Split(*zk, ","), Root: *root, Logger: logger})
		cancel()
		if err != nil {
			lis.Close()
			return fmt.Errorf("connect to ZooKeeper at %s: %w", *zk, err)
		}
		reg = z
		opts = append(opts, rt.WithRegistry(z), rt.WithDeregisterWait(*deregWait))
	}
	srv := rt.NewServer(opts...)
	greeterrpc.RegisterGreeter(srv, greeter{addr: addr, work: *work})

	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), lis) }() // (1)
	fmt.Fprintf(stdout, "listening on %s\n", addr)

	select {
	case <-sig.Done():
	case err := <-served: // Serve failed on its own (registration, accept)
		if reg != nil {
			reg.Close()
		}
		return err
	}
	stop()
	logger.Info("graceful: shutting down", "addr", addr, "drain", *drain)
	ctx, cancel := context.WithTimeout(context.Background(), *drain) // (2)
	defer cancel()
	shutErr := srv.Shutdown(ctx)
	serveErr := <-served
	if reg != nil {
		reg.Close() // (3)
	}
	if shutErr != nil {
		return fmt.Errorf("shutdown: calls still running after %v: %w", *drain, shutErr)
	}
	if !errors.Is(serveErr, rt.ErrServerClosed) {
		return serveErr
	}
	fmt.Fprintln(stdout, "shut down")
	return nil
}

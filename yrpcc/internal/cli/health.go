package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/yrpc/yrpc/rt"
)

// ctlHealth runs `yrpcc ctl health ADDR [SERVICE]`: it asks a provider's
// grpc.health.v1.Health service, over yrpc's own protocol, how it is, and
// prints the answer. Its exit code is 0 for SERVING, 1 for any other
// answer or failure, so that scripts and probes can use it.
func (e *Env) ctlHealth(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("ctl health", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	fs.Usage = func() {
		fmt.Fprintln(e.Stderr, "usage: yrpcc ctl health [--timeout D] ADDR [SERVICE]")
		fmt.Fprintln(e.Stderr, "Asks the provider at ADDR (host:port) how it, or its SERVICE, is; exit 0 for SERVING.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fs.Usage()
		return 2
	}
	addr, service := fs.Arg(0), fs.Arg(1)
	// Failures are the answer; the runtime's warnings would only repeat them.
	cli, err := rt.NewClient(rt.WithAddrs(addr), rt.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		fmt.Fprintf(e.Stderr, "yrpcc ctl health: %v\n", err)
		return 1
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	var resp rt.HealthCheckResponse
	if err := cli.Invoke(ctx, &rt.HealthServiceDesc, 0, &rt.HealthCheckRequest{Service: service}, &resp); err != nil {
		fmt.Fprintf(e.Stderr, "yrpcc ctl health: %s: %v\n", addr, err)
		return 1
	}
	what := addr
	if service != "" {
		what += " " + service
	}
	fmt.Fprintf(e.Stdout, "%s: %s\n", what, resp.Status)
	if resp.Status != rt.HealthServing {
		return 1
	}
	return 0
}

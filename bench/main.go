package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/yrpc/yrpc/bench/internal/runner"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: bench run|server|client|report [flags] (see go doc)")
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "run":
		return runner.Run(ctx, rest, os.Stdout, os.Stderr)
	case "server":
		return runner.Server(ctx, rest, os.Stdin, os.Stdout)
	case "client":
		return runner.Client(ctx, rest, os.Stdin, os.Stdout)
	case "report":
		return runner.Report(rest, os.Stdout)
	default:
		return fmt.Errorf("unknown command %q; want run, server, client or report", cmd)
	}
}

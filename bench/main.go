package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"

	"github.com/yrpc/yrpc/bench/internal/certs"
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
		return fmt.Errorf("usage: bench run|curves|streams|grpcserver|tail|server|client|report|certs [flags] (see go doc)")
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "run":
		return runner.Run(ctx, rest, os.Stdout, os.Stderr)
	case "curves":
		return runner.Curves(ctx, rest, os.Stdout, os.Stderr)
	case "streams": // issue 14: "run" with the stream rows
		return runner.Streams(ctx, rest, os.Stdout, os.Stderr)
	case "grpcserver": // issue 15: "run" with gRPC-Go's client on both servers
		return runner.GRPCServer(ctx, rest, os.Stdout, os.Stderr)
	case "tail": // issue 16: where the slowest calls are
		return runner.Tail(ctx, rest, os.Stdout, os.Stderr)
	case "server":
		defer profile(cmd)()
		return runner.Server(ctx, rest, os.Stdin, os.Stdout)
	case "client":
		defer profile(cmd)()
		return runner.Client(ctx, rest, os.Stdin, os.Stdout)
	case "report":
		return runner.Report(rest, os.Stdout)
	case "certs":
		if len(rest) != 1 {
			return fmt.Errorf("usage: bench certs DIR")
		}
		if err := os.MkdirAll(rest[0], 0o700); err != nil {
			return err
		}
		return certs.Generate(rest[0])
	default:
		return fmt.Errorf("unknown command %q; want run, curves, streams, grpcserver, tail, server, client, report or certs", cmd)
	}
}

// profile starts a CPU profile of this server or client process when
// BENCH_PROFILE names a directory, and an execution trace when BENCH_TRACE
// does; with BENCH_MEMPROFILE it writes an allocation profile (every
// allocation sampled, .mprof; "go tool pprof -sample_index=alloc_space")
// when the process ends. The files are named after the role and the
// process id. The returned func stops them.
func profile(role string) func() {
	var stops []func()
	name := func(dir, ext string) string {
		return filepath.Join(dir, fmt.Sprintf("%s-%d.%s", role, os.Getpid(), ext))
	}
	if dir := os.Getenv("BENCH_PROFILE"); dir != "" {
		if f, err := os.Create(name(dir, "pprof")); err != nil {
			fmt.Fprintln(os.Stderr, "bench: profile:", err)
		} else if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench: profile:", err)
			f.Close()
		} else {
			stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if dir := os.Getenv("BENCH_TRACE"); dir != "" {
		if f, err := os.Create(name(dir, "trace")); err != nil {
			fmt.Fprintln(os.Stderr, "bench: trace:", err)
		} else if err := trace.Start(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench: trace:", err)
			f.Close()
		} else {
			stops = append(stops, func() { trace.Stop(); f.Close() })
		}
	}
	if dir := os.Getenv("BENCH_MEMPROFILE"); dir != "" {
		runtime.MemProfileRate = 1
		stops = append(stops, func() {
			f, err := os.Create(name(dir, "mprof"))
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench: memory profile:", err)
			}
		})
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}

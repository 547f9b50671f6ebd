// Soak runs yrpc under provider churn for a long time (issue 11): three
// provider processes of the tour's Store registered in a real ZooKeeper,
// one consumer (this process) making idempotent Gets and non-idempotent
// Puts, a provider restarted every minute (gracefully and with SIGKILL in
// turn), ZooKeeper restarted once halfway; see package
// github.com/yrpc/yrpc/bench/internal/soak.
//
// Usage:
//
//	eval "$(scripts/zk.sh start)"     # from the repository's root: $YRPC_ZK, $YRPC_ZK_DIR
//	cd bench && go build -o bin/soak ./cmd/soak
//	nohup bin/soak -duration 30m -out results/soak > soak.log 2>&1 &
//	scripts/zk.sh stop
//
// It prints a line per sample and event, then the report, and writes
// soak.json and soak.md to -out. "soak provider" is a provider process,
// started by the soak itself.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/yrpc/yrpc/bench/internal/soak"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	if len(os.Args) > 1 && os.Args[1] == "provider" {
		err = soak.Provider(ctx, os.Args[2:], os.Stdin, os.Stdout, os.Stderr)
	} else {
		err = run(ctx, os.Args[1:])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	var o soak.Options
	fs.DurationVar(&o.Duration, "duration", soak.DefaultDuration, "how long the load runs")
	fs.DurationVar(&o.Churn, "churn", soak.DefaultChurn, "a provider restart every churn")
	fs.DurationVar(&o.Sample, "sample", soak.DefaultSample, "a sample of every process every sample")
	fs.StringVar(&o.ZK, "zk", os.Getenv("YRPC_ZK"), "ZooKeeper server (scripts/zk.sh start sets $YRPC_ZK)")
	zkDir := fs.String("zk-dir", os.Getenv("YRPC_ZK_DIR"), `the ZooKeeper's directory (scripts/zk.sh sets $YRPC_ZK_DIR), for its restart halfway; "" skips it`)
	fs.DurationVar(&o.ZKDown, "zk-down", soak.DefaultZKDown, "how long ZooKeeper stays down")
	fs.IntVar(&o.Providers, "providers", soak.DefaultProviders, "provider processes; the last is never restarted")
	fs.IntVar(&o.Workers, "workers", soak.DefaultWorkers, "calling goroutines")
	fs.IntVar(&o.Rate, "rate", soak.DefaultRate, "calls per second")
	fs.DurationVar(&o.Timeout, "timeout", 0, "call timeout (0: the schema's: Get 2s, Put 1s)")
	fs.DurationVar(&o.Session, "session", soak.DefaultSession, "ZooKeeper session timeout of every process")
	out := fs.String("out", "results/soak", "directory for soak.json, soak.md and the providers' logs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	o.Command = []string{exe, "provider"}
	if *zkDir != "" {
		o.RestartZK = soak.ScriptZK(o.ZK, *zkDir)
	}
	o.Dir = filepath.Join(*out, "work")
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return err
	}
	o.Log = os.Stdout
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	t0 := time.Now()
	rep, err := soak.Run(ctx, o)
	if rep == nil {
		return err
	}
	for _, f := range []struct {
		name  string
		write func(*os.File) error
	}{
		{"soak.json", func(f *os.File) error { return rep.WriteJSON(f) }},
		{"soak.md", func(f *os.File) error { return rep.WriteMarkdown(f) }},
	} {
		fh, ferr := os.Create(filepath.Join(*out, f.name))
		if ferr != nil {
			return ferr
		}
		ferr = f.write(fh)
		if cerr := fh.Close(); ferr == nil {
			ferr = cerr
		}
		if ferr != nil {
			return ferr
		}
	}
	fmt.Println()
	if werr := rep.WriteMarkdown(os.Stdout); werr != nil {
		return werr
	}
	fmt.Printf("\nwrote %s and %s after %s\n", filepath.Join(*out, "soak.json"), filepath.Join(*out, "soak.md"), time.Since(t0).Round(time.Second))
	return err
}

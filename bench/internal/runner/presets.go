package runner

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/yrpc/yrpc/bench/internal/impl"
)

// A preset is "bench run" with other defaults: its implementations,
// concurrencies and output directory. Flags given to it come after these
// and override them.
type preset struct {
	impls []string
	conc  string
	out   string
}

var (
	// streamsPreset is issue 14's benchmark: server-stream throughput and
	// bidi echo round trips of yrpc, gRPC-Go and drpc, at one and 64
	// streams.
	streamsPreset = preset{
		impls: []string{"feed/yrpc", "feed/grpc", "feed/drpc", "echo/yrpc", "echo/grpc", "echo/drpc"},
		conc:  "1,64",
		out:   "results/streams",
	}
	// grpcServerPreset is issue 15's: gRPC-Go's client on gRPC-Go's server
	// and on a default yrpc server's gRPC endpoint, and yrpc's own protocol
	// on that port and on a server with gRPC off.
	grpcServerPreset = preset{
		impls: []string{"grpcc/grpc", "grpcc/yrpc", "native/yrpc", "native/yrpc-grpcoff"},
		conc:  "1,64,256",
		out:   "results/grpcserver",
	}
)

// Streams runs "bench streams": "bench run" with streamsPreset.
func Streams(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runPreset(ctx, streamsPreset, args, stdout, stderr)
}

// GRPCServer runs "bench grpcserver": "bench run" with grpcServerPreset.
func GRPCServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runPreset(ctx, grpcServerPreset, args, stdout, stderr)
}

func runPreset(ctx context.Context, p preset, args []string, stdout, stderr io.Writer) error {
	return Run(ctx, append(p.args(args), args...), stdout, stderr)
}

// args returns the flags of p for a run given args: the implementations
// compiled in (yrpc's need the "yrpc" tag), and the output directory,
// under which a smoke run (-quick) writes to "quick".
func (p preset) args(args []string) []string {
	impls := slices.DeleteFunc(slices.Clone(p.impls), func(name string) bool { return !impl.Has(name) })
	out := p.out
	if slices.ContainsFunc(args, func(a string) bool {
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		on, err := strconv.ParseBool(val)
		return name == "quick" && (!hasVal || err == nil && on) // as package flag reads a bool flag
	}) {
		out = filepath.Join(out, "quick")
	}
	return []string{"-impls", strings.Join(impls, ","), "-c", p.conc, "-out", out}
}

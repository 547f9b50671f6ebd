package impl

import (
	"context"
	"errors"
	"net"
	"runtime/debug"

	"google.golang.org/protobuf/proto"

	"github.com/yrpc/yrpc/bench/benchpb"
	"github.com/yrpc/yrpc/bench/internal/workload"
)

// prepare checks that addr is one address (name's client takes no list)
// and returns it with the workers' requests.
func prepare(name, addr string, o Options) (string, []*benchpb.BenchmarkMessage, error) {
	addr, err := oneAddr(name, addr)
	if err != nil {
		return "", nil, err
	}
	reqs, err := requests(o)
	return addr, reqs, err
}

// requests returns one filled request of o.Size bytes per worker. Workers
// reuse theirs for every call, so building requests is outside the
// measured calls for every implementation alike.
func requests(o Options) ([]*benchpb.BenchmarkMessage, error) {
	m, err := workload.NewSized(o.Size)
	if err != nil {
		return nil, err
	}
	reqs := make([]*benchpb.BenchmarkMessage, o.workers())
	for i := range reqs {
		reqs[i] = proto.CloneOf(m) // strings are shared, not copied
	}
	return reqs, nil
}

// serveUntil runs serve in a goroutine until ctx ends, then calls stop and
// waits for serve to return. An error from serve after stop is the
// server's normal way out and is dropped.
func serveUntil(ctx context.Context, serve func() error, stop func()) error {
	done := make(chan error, 1)
	go func() { done <- serve() }()
	select {
	case err := <-done:
		if ctx.Err() != nil {
			return nil // serve saw ctx end first
		}
		if err == nil {
			err = errors.New("impl: server stopped by itself")
		}
		return err
	case <-ctx.Done():
		stop()
		<-done
		return nil
	}
}

// moduleVersion returns the version of module path this binary was built
// with, or "(devel)" when it is unknown.
func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == path {
				if m.Replace != nil && m.Replace.Version != "" {
					return m.Replace.Version
				}
				return m.Version
			}
		}
	}
	return "(devel)"
}

// closeAll closes every listener or connection and returns the first error.
func closeAll[T interface{ Close() error }](cs []T) error {
	var first error
	for _, c := range cs {
		if err := c.Close(); err != nil && first == nil && !errors.Is(err, net.ErrClosed) {
			first = err
		}
	}
	return first
}

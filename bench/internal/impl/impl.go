package impl

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"

	"github.com/yrpc/yrpc/bench/internal/harness"
)

// Impl is one implementation under test. Its zero value is not usable; the
// values returned by All are read-only and safe to share.
type Impl struct {
	// Name is the short name used on the command line ("grpc").
	Name string
	// Label names it in reports, with its version.
	Label string
	// Ref marks a reference line (no framework), which ratios to "the best
	// peer" leave out.
	Ref bool
	// TLS marks an implementation that runs over mutual TLS: Serve and
	// Dial are given the run's TLS configs (package certs); the others get
	// nil and ignore it.
	TLS bool
	// Scale multiplies the run's counted calls for this implementation
	// (0 means 1): a streamed message costs far less than a round trip.
	Scale int
	// Serve serves the workload on lis until ctx ends, then stops, closes
	// lis and returns nil (or the error that stopped it earlier).
	Serve func(ctx context.Context, lis net.Listener, cfg *tls.Config) error
	// Dial connects to addr for c concurrent workers.
	Dial func(ctx context.Context, addr string, c int, cfg *tls.Config) (harness.Client, error)
}

// All returns every implementation compiled in, in report order: yrpc (when
// built with the "yrpc" tag), the peers, the reference lines, then the TLS
// variants (yrpc-tls, grpc-tls).
func All() []*Impl {
	var all []*Impl
	plain, secure := extra()
	all = append(all, plain...)
	all = append(all, grpcImpl(), rpcxImpl(), netrpcImpl(), drpcImpl(), pingPongImpl(), pipelineImpl())
	all = append(all, secure...)
	return append(all, grpcTLSImpl())
}

// Names returns the names of All, in order.
func Names() []string {
	var names []string
	for _, im := range All() {
		names = append(names, im.Name)
	}
	return names
}

// Lookup returns the implementation called name, of All or Grouped.
func Lookup(name string) (*Impl, error) {
	for _, im := range append(All(), Grouped()...) {
		if im.Name == name {
			return im, nil
		}
	}
	return nil, fmt.Errorf("impl: unknown implementation %q (have %v)", name, Names())
}

// Has reports whether an implementation called name (of All or Grouped)
// is compiled in.
func Has(name string) bool {
	_, err := Lookup(name)
	return err == nil
}

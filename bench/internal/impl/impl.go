package impl

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"

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
	// Extra marks a variant that runs only when named (yrpc-lz4), not in
	// the default list of Names.
	Extra bool
	// ConnPerWorker marks a client that opens a connection per worker
	// (drpc, the TCP ping-pong): it cannot put c workers on fewer
	// connections, so the fan-in curve leaves it out below c connections.
	ConnPerWorker bool
	// Balanced marks a client that takes a comma-separated list of
	// addresses and balances calls over them (yrpc); the others take one.
	Balanced bool
	// Serve serves the workload on lis until ctx ends, then stops, closes
	// lis and returns nil (or the error that stopped it earlier). It reads
	// o.TLS and o.Size.
	Serve func(ctx context.Context, lis net.Listener, o Options) error
	// Dial connects to addr for o.C concurrent workers.
	Dial func(ctx context.Context, addr string, o Options) (harness.Client, error)
}

// Options are the settings of one side of a measurement. The zero value
// is the workload of README.md in plaintext for one worker.
type Options struct {
	// C is the number of concurrent workers of a client (Dial only);
	// below 1 means 1.
	C int
	// Size is the encoded request size in bytes (workload.NewSized); 0
	// means the workload's 581 bytes. Both sides must be given the same.
	Size int
	// TLS is this side's TLS config, for a TLS implementation; nil
	// otherwise.
	TLS *tls.Config
}

// workers returns o.C, at least 1.
func (o Options) workers() int { return max(o.C, 1) }

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

// Names returns the names of All that run by default (not Extra), in
// order.
func Names() []string {
	var names []string
	for _, im := range All() {
		if !im.Extra {
			names = append(names, im.Name)
		}
	}
	return names
}

// AllNames returns the names of All, Extra ones included, in order.
func AllNames() []string {
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
	return nil, fmt.Errorf("impl: unknown implementation %q (have %v)", name, AllNames())
}

// Has reports whether an implementation called name (of All or Grouped)
// is compiled in.
func Has(name string) bool {
	_, err := Lookup(name)
	return err == nil
}

// oneAddr returns addr, or an error naming the implementation when addr is
// a list (only Balanced clients take one).
func oneAddr(name, addr string) (string, error) {
	if strings.Contains(addr, ",") {
		return "", fmt.Errorf("impl: %s dials one address, not %q", name, addr)
	}
	return addr, nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/zkreg"
)

// The example's ZooKeeper credentials, "user:password" of the digest
// scheme. They are fixed so that runs against the same ZooKeeper find the
// nodes of the earlier ones writable; a real deployment reads each from
// its secret store, and each process holds only its own.
const (
	providerSecret = "provider:example-provider-password"
	operatorSecret = "operator:example-operator-password"
)

// registries are the registry handles of the example, one per role as
// separate processes would have them: the server's and the clients'; on
// ZooKeeper also an operator's (yrpcc ctl --auth) and an intruder's.
type registries struct {
	name     string
	provider registry.Registry
	consumer registry.Registry
	zk       *zkRoles // nil for the in-process registry
	close    func()
}

// openRegistries opens the registry that url names: "mem://" (in-process)
// or "zk://host:port[,host:port...]".
func openRegistries(ctx context.Context, url, root string, log *slog.Logger) (*registries, error) {
	switch {
	case url == "mem://":
		m := registry.NewMemory()
		return &registries{name: "mem:// (in-process; no ACLs)", provider: m.Conn(), consumer: m.Conn(), close: func() { m.Close() }}, nil
	case strings.HasPrefix(url, "zk://"):
		z := &zkRoles{servers: strings.Split(strings.TrimPrefix(url, "zk://"), ","), root: root, log: log}
		r, err := z.open(ctx)
		if err != nil {
			z.closeAll()
			return nil, fmt.Errorf("ZooKeeper at %s: %w", url, err)
		}
		r.name = url + root + " (digest credentials, DigestPolicy ACLs)"
		return r, nil
	}
	return nil, fmt.Errorf("unknown registry %q (want mem:// or zk://host:port)", url)
}

// zkRoles are the ZooKeeper handles of the example's identities.
type zkRoles struct {
	servers  []string
	root     string
	log      *slog.Logger
	provider *zkreg.Registry // providers' credential: registers the server
	operator *zkreg.Registry // operators' credential: writes governance config
	intruder *zkreg.Registry // no credential: a process that merely reaches ZooKeeper
	handles  []*zkreg.Registry
}

// open makes every role's handle. Every process of a deployment is given
// the same Roles (digest ids, not secrets) and its own credential;
// consumers need none, since everyone may read.
func (z *zkRoles) open(ctx context.Context) (*registries, error) {
	prov, err := zkreg.ParseCredential("digest:" + providerSecret)
	if err != nil {
		return nil, err
	}
	op, err := zkreg.ParseCredential("digest:" + operatorSecret)
	if err != nil {
		return nil, err
	}
	policy, err := zkreg.DigestPolicy(zkreg.Roles{Providers: prov.DigestID(), Operators: op.DigestID()})
	if err != nil {
		return nil, err
	}
	consumer, err := z.dial(ctx, policy)
	if err != nil {
		return nil, err
	}
	if z.provider, err = z.dial(ctx, policy, prov); err != nil {
		return nil, err
	}
	if z.operator, err = z.dial(ctx, policy, op); err != nil {
		return nil, err
	}
	if z.intruder, err = z.dial(ctx, nil); err != nil {
		return nil, err
	}
	return &registries{provider: z.provider, consumer: consumer, zk: z, close: z.closeAll}, nil
}

func (z *zkRoles) dial(ctx context.Context, acl zkreg.ACLPolicy, auth ...zkreg.Credential) (*zkreg.Registry, error) {
	r, err := zkreg.New(ctx, zkreg.Options{Servers: z.servers, Root: z.root, SessionTimeout: 4 * time.Second,
		Logger: z.log, Auth: auth, ACL: acl, FailFast: true})
	if err != nil {
		return nil, err
	}
	z.handles = append(z.handles, r)
	return r, nil
}

// closeAll closes every handle; ZooKeeper deletes their ephemeral nodes.
func (z *zkRoles) closeAll() {
	for _, h := range z.handles {
		h.Close()
	}
}

// demo shows who may do what in the locked-down registry while the
// provider at addr is registered under key.
func (z *zkRoles) demo(ctx context.Context, out *printer, key registry.Key, addr string) {
	out.line("intruder registers a provider", refusal(z.intruder.Register(ctx,
		registry.Endpoint{Key: key, Role: registry.Provider, Addr: "127.0.0.1:9", StartTime: time.Now()})))
	out.line("intruder takes over the provider's node", refusal(z.intruder.Register(ctx,
		registry.Endpoint{Key: key, Role: registry.Provider, Addr: addr, StartTime: time.Now()})))
	drain := func(c *registry.Config) error {
		c.Instances = map[string]registry.InstanceConfig{addr: {Draining: true}}
		return nil
	}
	out.line("intruder drains the provider", refusal(z.intruder.UpdateConfig(ctx, key, drain)))
	out.line("provider identity drains the provider", refusal(z.provider.UpdateConfig(ctx, key, drain)))
	out.line("operator sets the provider's weight", result(z.operator.UpdateConfig(ctx, key, func(c *registry.Config) error {
		c.Instances = map[string]registry.InstanceConfig{addr: {Weight: 50}}
		return nil
	})))

	// What registry tokens do not stop: everyone reads the payload.
	ls, err := z.intruder.List(ctx)
	if err != nil {
		out.line("intruder reads the provider's payload", "error: "+err.Error())
		return
	}
	for _, l := range ls {
		if l.Key != key {
			continue
		}
		for _, p := range l.Providers {
			if p.Addr == addr {
				out.line("intruder reads the provider's payload", fmt.Sprintf("OK: tls=%t, a registry token of %d characters (readers of the registry get it; mutual TLS still stops them)", p.TLS, len(p.Token)))
				return
			}
		}
	}
	out.line("intruder reads the provider's payload", "provider not listed")
}

// cleanup removes the config the operator wrote; with no provider or
// consumer left, zkreg deletes the key's nodes with it.
func (z *zkRoles) cleanup(ctx context.Context, out *printer, key registry.Key) {
	err := z.operator.UpdateConfig(ctx, key, func(c *registry.Config) error {
		*c = registry.Config{}
		return nil
	})
	if err == nil {
		var ls []zkreg.Listing
		if ls, err = z.operator.List(ctx); err == nil && slices.ContainsFunc(ls, func(l zkreg.Listing) bool { return l.Key == key }) {
			err = errors.New("the key's nodes are still there")
		}
	}
	out.line("operator removes the config after shutdown", result(err))
}

// refusal describes the outcome of a write ZooKeeper should refuse.
func refusal(err error) string {
	if err == nil {
		return "ALLOWED (the registry is not locked down)"
	}
	return "refused: " + err.Error()
}

// result describes the outcome of a write that should succeed.
func result(err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return "OK"
}

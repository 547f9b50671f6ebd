package zkreg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/yrpc/yrpc/rt/registry"
)

// Config returns the governance config of key (the zero Config when its
// node does not exist). Like List, it first syncs the server it reads
// from with the leader, so that it sees every write completed before it
// was called, through whichever server.
func (r *Registry) Config(ctx context.Context, key registry.Key) (registry.Config, error) {
	if r.isClosed() {
		return registry.Config{}, registry.ErrClosed
	}
	if key.Service == "" {
		return registry.Config{}, errors.New("zkreg: config: key has no service")
	}
	if err := r.paths.checkKey(key); err != nil {
		return registry.Config{}, fmt.Errorf("zkreg: config: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return registry.Config{}, fmt.Errorf("zkreg: config of %s: %w", key, err)
	}
	conn, path := r.conn(), r.paths.config(key)
	if _, err := conn.Sync(path); err != nil {
		return registry.Config{}, fmt.Errorf("zkreg: config of %s: sync: %w", key, err)
	}
	data, _, err := conn.Get(path)
	if errors.Is(err, zk.ErrNoNode) {
		return registry.Config{}, nil
	}
	if err != nil {
		return registry.Config{}, fmt.Errorf("zkreg: config of %s: %w", key, err)
	}
	cfg, err := decodeConfig(data)
	if err != nil {
		return registry.Config{}, fmt.Errorf("zkreg: config of %s: %w", key, err)
	}
	return cfg, nil
}

// UpdateConfig applies fn to the config of key and stores the result with
// the znode version as compare-and-set: when another writer stored a
// config in between, fn runs again on the newer one. An error from fn is
// returned as is and nothing is stored, as is a result that fails
// registry.Config.Check (the error names key, the field and the value). A
// config node holding bad JSON is an error (fix it with zkCli, or delete
// it).
func (r *Registry) UpdateConfig(ctx context.Context, key registry.Key, fn func(*registry.Config) error) error {
	if r.isClosed() {
		return registry.ErrClosed
	}
	if key.Service == "" {
		return errors.New("zkreg: update config: key has no service")
	}
	if err := r.paths.checkKey(key); err != nil {
		return fmt.Errorf("zkreg: update config: %w", err)
	}
	path := r.paths.config(key)
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("zkreg: update config of %s: %w", key, err)
		}
		conn, err := r.writeConn(ctx)
		if err != nil {
			return fmt.Errorf("zkreg: update config of %s: %w", key, err)
		}
		data, st, err := conn.Get(path)
		exists := err == nil
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return fmt.Errorf("zkreg: update config of %s: %w", key, err)
		}
		cfg, err := decodeConfig(data)
		if err != nil {
			return fmt.Errorf("zkreg: update config of %s: %w", key, err)
		}
		if err := fn(&cfg); err != nil {
			return err
		}
		if err := cfg.Check(); err != nil {
			return fmt.Errorf("zkreg: update config of %s: %w", key, err)
		}
		out, err := json.Marshal(cfg)
		if err != nil {
			return fmt.Errorf("zkreg: update config of %s: %w", key, err)
		}
		switch {
		case cfg.IsZero() && exists:
			// An empty config leaves nothing behind when nothing else is
			// in the key (`ctl ls` would list it), else an empty node. A
			// key already empty (its providers left) is pruned too.
			if !r.prune(conn, key, st.Version) && len(data) > 0 {
				_, err = conn.Set(path, nil, st.Version)
			}
		case cfg.IsZero():
			return nil // nothing stored, nothing to store
		case exists:
			_, err = conn.Set(path, out, st.Version)
		default:
			err = r.create(conn, path, out, 0, NodeConfig, NodeDir)
		}
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNodeExists), errors.Is(err, zk.ErrNoNode):
			continue // lost a race with another writer: read again
		default:
			return fmt.Errorf("zkreg: update config of %s: %w", key, explainNoAuth(err))
		}
	}
}

// prune deletes key's nodes, its config (at version cfgVersion) with its
// providers and consumers nodes and the key's node, in one transaction,
// if no endpoint is registered; then the group and service nodes while
// they have no children. It reports whether it deleted the key. A node
// that gains a child meanwhile stays: ZooKeeper deletes only childless
// nodes.
func (r *Registry) prune(conn *zk.Conn, key registry.Key, cfgVersion int32) bool {
	ops := []any{&zk.DeleteRequest{Path: r.paths.config(key), Version: cfgVersion}}
	for _, dir := range []string{r.paths.providers(key), r.paths.consumers(key)} {
		ok, st, err := conn.Exists(dir)
		switch {
		case err != nil || ok && st.NumChildren > 0:
			return false
		case ok:
			ops = append(ops, &zk.DeleteRequest{Path: dir, Version: -1})
		}
	}
	kp := r.paths.key(key)
	ops = append(ops, &zk.DeleteRequest{Path: kp, Version: -1})
	if _, err := conn.Multi(ops...); err != nil {
		return false
	}
	for _, p := range []string{parent(kp), parent(parent(kp))} { // group, service
		if err := conn.Delete(p, -1); err != nil {
			break
		}
	}
	return true
}

// Listing is everything stored under one Key, for `yrpcc ctl ls`. It is
// plain data.
type Listing struct {
	Key       registry.Key        `json:"key"`
	Providers []registry.Endpoint `json:"providers"`
	Consumers []registry.Endpoint `json:"consumers"`
	Config    registry.Config     `json:"config"`
	// Skipped lists nodes whose payload was bad, with the reason.
	Skipped []string `json:"skipped,omitempty"`
}

// List reads every key under the root, sorted by service, group and
// version. It reads ZooKeeper directly (no cache) and sets no watches.
// A ZooKeeper server answers reads from its own copy, which may lag
// behind writes made through other servers, so List syncs it with the
// leader first: it sees every write completed before it was called.
func (r *Registry) List(ctx context.Context) ([]Listing, error) {
	if r.isClosed() {
		return nil, registry.ErrClosed
	}
	if _, err := r.conn().Sync(r.paths.rootPath()); err != nil {
		return nil, fmt.Errorf("zkreg: list: sync: %w", err)
	}
	children := func(path string) ([]string, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		names, _, err := r.conn().Children(path)
		if errors.Is(err, zk.ErrNoNode) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("zkreg: list %q: %w", path, err)
		}
		slices.Sort(names)
		return names, nil
	}
	root := r.paths.rootPath()
	base := strings.TrimSuffix(root, "/")
	services, err := children(root)
	if err != nil {
		return nil, err
	}
	var out []Listing
	for _, svcSeg := range services {
		if base == "" && svcSeg == "zookeeper" {
			continue // ZooKeeper's own tree when the root is "/"
		}
		svc, err := unescape(svcSeg)
		if err != nil {
			continue
		}
		groups, err := children(base + "/" + svcSeg)
		if err != nil {
			return nil, err
		}
		for _, gSeg := range groups {
			g, err := parseGroupSegment(gSeg)
			if err != nil {
				continue
			}
			versions, err := children(base + "/" + svcSeg + "/" + gSeg)
			if err != nil {
				return nil, err
			}
			for _, vSeg := range versions {
				v, err := parseGroupSegment(vSeg)
				if err != nil {
					continue
				}
				l, err := r.listKey(ctx, registry.Key{Service: svc, Group: g, Version: v}, children)
				if err != nil {
					return nil, err
				}
				out = append(out, l)
			}
		}
	}
	return out, nil
}

func (r *Registry) listKey(ctx context.Context, key registry.Key, children func(string) ([]string, error)) (Listing, error) {
	l := Listing{Key: key}
	for _, role := range []registry.Role{registry.Provider, registry.Consumer} {
		dir := r.paths.providers(key)
		if role == registry.Consumer {
			dir = r.paths.consumers(key)
		}
		names, err := children(dir)
		if err != nil {
			return l, err
		}
		for _, name := range names {
			data, _, err := r.conn().Get(dir + "/" + name)
			if errors.Is(err, zk.ErrNoNode) {
				continue
			}
			if err != nil {
				return l, fmt.Errorf("zkreg: list %q: %w", dir, err)
			}
			e, err := decodeEndpoint(key, role, name, data)
			if err != nil {
				l.Skipped = append(l.Skipped, dir+"/"+name+": "+err.Error())
				continue
			}
			if role == registry.Provider {
				l.Providers = append(l.Providers, e)
			} else {
				l.Consumers = append(l.Consumers, e)
			}
		}
	}
	registry.SortEndpoints(l.Providers)
	registry.SortEndpoints(l.Consumers)
	cfg, err := r.Config(ctx, key)
	if err != nil {
		l.Skipped = append(l.Skipped, r.paths.config(key)+": "+err.Error())
	}
	l.Config = cfg
	return l, nil
}

package zkreg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/yrpc/yrpc/rt/registry"
)

// maxAttempts bounds the compare-and-set loops against concurrent writers.
const maxAttempts = 16

// Register creates (or replaces) e's ephemeral node and keeps it there:
// after a session expiry the registry creates it again in the new session.
// A node of the same path owned by another session (a stale node of an
// earlier session of this process, or a process that died) is replaced in
// one transaction, so watchers never miss e. A request lost with its
// connection is tried again, on the connection go-zk opens next, for up to
// a session timeout; Register
// returns an error, and does not remember e, if ZooKeeper cannot be
// reached for that long. go-zk does not take a context, so ctx is checked
// between requests.
func (r *Registry) Register(ctx context.Context, e registry.Endpoint) error {
	if err := e.Validate(); err != nil {
		return fmt.Errorf("zkreg: %w", err)
	}
	if err := r.paths.checkKey(e.Key); err != nil {
		return fmt.Errorf("zkreg: register %s %q: %w", e.Role, e.Addr, err)
	}
	if r.isClosed() {
		return registry.ErrClosed
	}
	path := r.paths.endpoint(e)
	data, err := encodeEndpoint(e)
	if err != nil {
		return err
	}
	r.regMu.Lock()
	defer r.regMu.Unlock()
	conn, err := r.ensureRetrying(ctx, path, data, e.Role)
	if err != nil {
		return fmt.Errorf("zkreg: register %s %q of %s: %w", e.Role, e.Addr, e.Key, explainNoAuth(err))
	}
	if _, again := r.registered[path]; !again {
		r.guard(conn, path) // a re-registration keeps the guard it has
	}
	r.registered[path] = e
	return nil
}

// registerRetry is the pause before a registration lost with its
// connection is tried again.
const registerRetry = 50 * time.Millisecond

// ensureRetrying is ensure on the current connection, tried again while it
// fails only because the connection or session was lost (go-zk reconnects
// in the background), for up to a session timeout. It returns the
// connection it succeeded on. Called with regMu held.
func (r *Registry) ensureRetrying(ctx context.Context, path string, data []byte, role registry.Role) (*zk.Conn, error) {
	start := time.Now()
	for try := 0; ; try++ {
		conn, err := r.writeConn(ctx)
		if err != nil {
			return nil, err
		}
		err = r.ensure(ctx, conn, path, data, conn.SessionID(), role)
		if err == nil || !connectionLost(err) || time.Since(start) >= r.timeout {
			return conn, err
		}
		// One warning per registration; the retries every registerRetry
		// after it are debug lines.
		level := slog.LevelDebug
		if try == 0 {
			level = slog.LevelWarn
		}
		r.log.Log(ctx, level, "zkreg: registration lost with its connection; trying again", "path", path, "err", err, "every", registerRetry)
		t := time.NewTimer(registerRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (after: %w)", ctx.Err(), err)
		case <-r.quit:
			t.Stop()
			return nil, registry.ErrClosed
		case <-t.C:
		}
	}
}

// connectionLost reports whether a request failed only because its
// connection or session was lost, so that it may succeed on the next one.
func connectionLost(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) || errors.Is(err, errNoSession)
}

// errNoSession: the connection's session was gone or replaced when a
// write was about to be sent.
var errNoSession = errors.New("no ZooKeeper session")

// Deregister deletes e's node if this session owns it.
func (r *Registry) Deregister(ctx context.Context, e registry.Endpoint) error {
	if r.isClosed() {
		return registry.ErrClosed
	}
	if e.Role != registry.Provider && e.Role != registry.Consumer {
		return fmt.Errorf("zkreg: deregister %q: bad role %q", e.Addr, e.Role)
	}
	if e.Key.Service == "" || e.Addr == "" || r.paths.checkKey(e.Key) != nil {
		return nil // cannot have been registered
	}
	path := r.paths.endpoint(e)
	r.regMu.Lock()
	defer r.regMu.Unlock()
	delete(r.registered, path)
	if err := r.remove(ctx, path); err != nil {
		// Our node may outlive this call while the session does: delete it
		// after the next reconnection.
		r.orphans[path] = struct{}{}
		return fmt.Errorf("zkreg: deregister %q: %w", e.Addr, err)
	}
	delete(r.orphans, path)
	return nil
}

// remove deletes path if this session owns it. Called with regMu held.
func (r *Registry) remove(ctx context.Context, path string) error {
	conn, err := r.writeConn(ctx)
	if err != nil {
		return err
	}
	for range maxAttempts {
		if err := ctx.Err(); err != nil {
			return err
		}
		ok, st, err := conn.Exists(path)
		switch {
		case err != nil:
			return err
		case !ok:
			return nil
		case st.EphemeralOwner != conn.SessionID():
			return nil // another process's node: not ours to delete
		}
		switch err := conn.Delete(path, st.Version); {
		case err == nil, errors.Is(err, zk.ErrNoNode):
			return nil
		case errors.Is(err, zk.ErrBadVersion):
			continue
		default:
			return err
		}
	}
	return errors.New("too many concurrent changes")
}

// removeOrphans retries the deletes that failed in Deregister.
func (r *Registry) removeOrphans() {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	for path := range r.orphans {
		if err := r.remove(context.Background(), path); err != nil {
			r.log.Warn("zkreg: deleting a deregistered node failed", "path", path, "err", err)
			continue
		}
		delete(r.orphans, path)
	}
}

// restoreAll makes sure every registered endpoint has its node in session
// sid of conn. Called by the session loop after a session change.
func (r *Registry) restoreAll(conn *zk.Conn, sid int64) error {
	r.regMu.Lock()
	defer r.regMu.Unlock()
	var errs []error
	for path, e := range r.registered {
		data, err := encodeEndpoint(e)
		if err == nil {
			err = r.ensure(context.Background(), conn, path, data, sid, e.Role)
		}
		if err == nil {
			r.guard(conn, path) // the old session's guards are gone
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%q: %w", path, err))
		}
	}
	return errors.Join(errs...)
}

// ensure makes path an ephemeral node of session sid of conn holding data,
// the node of an endpoint of role. Called with regMu held.
func (r *Registry) ensure(ctx context.Context, conn *zk.Conn, path string, data []byte, sid int64, role registry.Role) error {
	for range maxAttempts {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch cur := conn.SessionID(); {
		case sid == 0:
			return errNoSession
		case cur != sid:
			return fmt.Errorf("%w: session changed (%#x to %#x)", errNoSession, sid, cur)
		}
		old, st, err := conn.Get(path)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			// create below
		case err != nil:
			return err
		case st.EphemeralOwner == sid:
			if bytes.Equal(old, data) {
				return nil
			}
			if _, err := conn.Set(path, data, st.Version); errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode) {
				continue
			} else {
				return err
			}
		default:
			// Left by another session: an expired session of ours whose node
			// the server has not removed yet, or a dead process at the same
			// address. Replace it, so the node lives as long as we do.
			r.log.Info("zkreg: replacing a node of another session", "path", path, "owner", fmt.Sprintf("%#x", st.EphemeralOwner))
			switch err := r.replaceEndpoint(conn, path, data, st.Version, role); {
			case err == nil:
				return nil
			case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNodeExists):
				continue // raced with the server expiring it, or another writer
			default:
				return err
			}
		}
		switch err := r.createEndpoint(conn, path, data, role); {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrNodeExists), errors.Is(err, zk.ErrNoNode):
			continue // raced with another writer, or an operator pruning empty nodes
		default:
			return err
		}
	}
	return errors.New("too many concurrent changes")
}

// createEndpoint creates the ephemeral node of an endpoint of role, and
// its missing parents.
func (r *Registry) createEndpoint(conn *zk.Conn, path string, data []byte, role registry.Role) error {
	kind, dirKind := endpointKinds(role)
	return r.create(conn, path, data, zk.FlagEphemeral, kind, dirKind)
}

// endpointKinds returns the node kinds of an endpoint of role and of its
// parent.
func endpointKinds(role registry.Role) (kind, dirKind NodeKind) {
	if role == registry.Consumer {
		return NodeConsumer, NodeConsumers
	}
	return NodeProvider, NodeProviders
}

// replaceEndpoint replaces the node at path, of version version, by our
// ephemeral node of an endpoint of role, in one transaction: a watcher
// never lists the key without this endpoint in between. (Deleting and then
// creating left a gap of a round trip; providers that start new sessions
// together, as after a ZooKeeper outage, could all be in it at once, and a
// consumer that listed then saw only the others.)
func (r *Registry) replaceEndpoint(conn *zk.Conn, path string, data []byte, version int32, role registry.Role) error {
	kind, _ := endpointKinds(role)
	acl, err := r.aclFor(kind, path)
	if err != nil {
		return err
	}
	_, err = conn.Multi(&zk.DeleteRequest{Path: path, Version: version},
		&zk.CreateRequest{Path: path, Data: data, Acl: acl, Flags: zk.FlagEphemeral})
	if err != nil { // the first failed operation's error
		return fmt.Errorf("replace %q: %w", path, err)
	}
	return nil
}

// create creates path holding data, with flags and the ACL of kind, and
// its missing parents: the nearest of dirKind, the others NodeDir.
func (r *Registry) create(conn *zk.Conn, path string, data []byte, flags int32, kind, dirKind NodeKind) error {
	acl, err := r.aclFor(kind, path)
	if err != nil {
		return err
	}
	_, err = conn.Create(path, data, flags, acl)
	if errors.Is(err, zk.ErrNoNode) {
		if err := r.mkdirs(conn, parent(path), dirKind); err != nil {
			return err
		}
		_, err = conn.Create(path, data, flags, acl)
	}
	if err != nil {
		return fmt.Errorf("create %q: %w", path, err)
	}
	return nil
}

// mkdirs creates path, of kind, and its parents (NodeDir) as persistent
// nodes. A key's node is created with its config, providers and consumers
// nodes in one transaction (createKey).
func (r *Registry) mkdirs(conn *zk.Conn, path string, kind NodeKind) error {
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		if r.paths.isKey(path[:i]) {
			if err := r.createKey(conn, path[:i]); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return err
			}
			continue
		}
		k := NodeDir
		if i == len(path) {
			k = kind
		}
		acl, err := r.aclFor(k, path[:i])
		if err != nil {
			return err
		}
		_, err = conn.Create(path[:i], nil, 0, acl)
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("create %q: %w", path[:i], err)
		}
	}
	return nil
}

// createKey creates a key's node with its (empty) config, providers and
// consumers nodes, at once: a key never exists without its config node,
// which only operators may write, so that a holder of the providers'
// credential (who may create nodes under the key) cannot create a config
// node of its own; and consumers, who may not create structure nodes,
// find their parent.
func (r *Registry) createKey(conn *zk.Conn, path string) error {
	var ops []any
	for _, n := range []struct {
		path string
		kind NodeKind
	}{{path, NodeDir}, {path + "/" + configNode, NodeConfig}, {path + "/" + providersNode, NodeProviders}, {path + "/" + consumersNode, NodeConsumers}} {
		acl, err := r.aclFor(n.kind, n.path)
		if err != nil {
			return err
		}
		ops = append(ops, &zk.CreateRequest{Path: n.path, Acl: acl})
	}
	if _, err := conn.Multi(ops...); err != nil {
		return fmt.Errorf("create %q: %w", path, err)
	}
	return nil
}

func parent(path string) string { return path[:strings.LastIndexByte(path, '/')] }

// guard watches our node at path. If it is deleted or changed behind our
// back while the session lives (an operator, a tool), the session loop
// checks it (heal). A node found owned by another session is logged and
// left alone. Called with regMu held.
func (r *Registry) guard(conn *zk.Conn, path string) {
	ok, st, ch, err := conn.ExistsW(path)
	if err != nil || ch == nil {
		return // a reconnection or new session checks everything anyway
	}
	switch sid := conn.SessionID(); {
	case !ok:
		r.markHeal(path) // deleted since we looked: look again
	case st.EphemeralOwner != sid:
		r.log.Warn("zkreg: another session owns our node (two processes with one address?); leaving it", "path", path, "owner", fmt.Sprintf("%#x", st.EphemeralOwner))
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		select {
		case <-r.quit:
			return
		case ev := <-ch:
			if ev.Type == zk.EventNotWatching {
				return // session expired or connection closed: restoreAll guards again
			}
		}
		r.markHeal(path)
	}()
}

func (r *Registry) markHeal(path string) {
	r.healMu.Lock()
	r.heal[path] = struct{}{}
	r.healMu.Unlock()
	r.kickSession()
}

// healAll re-creates registered nodes that were deleted while our session
// lives. A node that another live session created meanwhile is left alone
// (and logged): two processes claiming one address must not fight.
func (r *Registry) healAll() error {
	r.healMu.Lock()
	paths := make([]string, 0, len(r.heal))
	for p := range r.heal {
		paths = append(paths, p)
	}
	clear(r.heal)
	r.healMu.Unlock()
	if len(paths) == 0 {
		return nil
	}
	r.regMu.Lock()
	defer r.regMu.Unlock()
	var errs []error
	for _, path := range paths {
		e, ok := r.registered[path]
		if !ok {
			continue // deregistered
		}
		err := r.heal1(path, e)
		if err != nil {
			r.healMu.Lock()
			r.heal[path] = struct{}{} // retry
			r.healMu.Unlock()
			errs = append(errs, fmt.Errorf("%q: %w", path, err))
		}
	}
	return errors.Join(errs...)
}

func (r *Registry) heal1(path string, e registry.Endpoint) error {
	data, err := encodeEndpoint(e)
	if err != nil {
		return err
	}
	// Create, never replace: whoever created the node meanwhile keeps it.
	conn := r.conn()
	err = r.createEndpoint(conn, path, data, e.Role)
	switch {
	case err == nil:
		r.log.Warn("zkreg: our node was deleted while the session lives; created it again", "path", path)
	case errors.Is(err, zk.ErrNodeExists):
		// Still there (a data change fired the guard) or taken over; guard
		// tells which.
	default:
		return err
	}
	r.guard(conn, path)
	return nil
}

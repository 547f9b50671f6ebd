package zkctl

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/yrpc/yrpc/zkreg"
)

// removeTree deletes path and everything under it from the ZooKeeper at
// addr, through a connection of its own that presents creds (an
// operator's, in a locked-down registry: only operators may delete every
// node). Call it once the registries that wrote under path are closed:
// an open one would put its nodes back. A failure fails t.
func removeTree(t *testing.T, addr, path string, creds ...zkreg.Credential) {
	t.Helper()
	if err := withConn(addr, creds, func(c *zk.Conn) error { return deleteTree(c, path) }); err != nil {
		t.Errorf("removing the test's root: %v", err)
	}
}

// exists reports whether path exists on the ZooKeeper at addr.
func exists(t *testing.T, addr, path string) bool {
	t.Helper()
	var ok bool
	err := withConn(addr, nil, func(c *zk.Conn) (err error) {
		ok, _, err = c.Exists(path)
		return err
	})
	if err != nil {
		t.Fatalf("exists %q: %v", path, err)
	}
	return ok
}

// withConn runs fn with a new connection to addr that presented creds,
// and closes it.
func withConn(addr string, creds []zkreg.Credential, fn func(*zk.Conn) error) error {
	c, events, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietZK{}))
	if err != nil {
		return err
	}
	drained := make(chan struct{})
	go func() {
		for range events {
		}
		close(drained)
	}()
	defer func() { c.Close(); <-drained }()
	for _, cr := range creds {
		if err := c.AddAuth(cr.Scheme, []byte(cr.Secret)); err != nil {
			return fmt.Errorf("auth as %s: %w", cr.User(), err)
		}
	}
	return fn(c)
}

// deleteTree deletes path and its descendants, children first; a node
// that is already gone is no error.
func deleteTree(c *zk.Conn, path string) error {
	kids, _, err := c.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %q: %w", path, err)
	}
	for _, k := range kids {
		if err := deleteTree(c, path+"/"+k); err != nil {
			return err
		}
	}
	if err := c.Delete(path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("delete %q: %w", path, err)
	}
	return nil
}

// quietZK drops go-zk's log lines.
type quietZK struct{}

func (quietZK) Printf(string, ...any) {}

// TestWorldRemovesItsRoot: a test's root, with what zkreg and ctl wrote
// under it, is gone from the shared ZooKeeper once the test ends, also
// when the registry is locked down.
func TestWorldRemovesItsRoot(t *testing.T) {
	ops := zkreg.Credential{Scheme: "digest", Secret: "ops:ops-Secret"}
	prov := zkreg.Credential{Scheme: "digest", Secret: "prov:prov-Secret"}
	policy, err := zkreg.DigestPolicy(zkreg.Roles{Providers: prov.DigestID(), Operators: ops.DigestID()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    zkreg.Options
		env  map[string]string // for ctl
	}{
		{name: "open", o: zkreg.Options{}},
		{name: "locked down", o: zkreg.Options{Auth: []zkreg.Credential{prov}, ACL: policy},
			env: map[string]string{EnvAuth: "digest:" + ops.Secret, EnvPlaintextAuth: "1"}},
	} {
		var zkAddr, root string
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, tc.o)
			if tc.o.ACL != nil {
				w.admin = []zkreg.Credential{ops}
			}
			zkAddr, root = w.zk, w.root
			w.provide(catalogEU, "10.0.0.1:7001", "Get")
			args := []string{"drain", "shop.Catalog", "10.0.0.1:7001", "--group", "EU"}
			if code, out, errs := ctlEnv(t, tc.env, w.zk, w.root, args...); code != ExitOK {
				t.Fatalf("ctl %q = %d, %q, %q", args, code, out, errs)
			}
			if cfg := w.keys()[catalogEU.String()]; !cfg.Instances["10.0.0.1:7001"].Draining {
				t.Fatalf("the drain was not written: %+v", cfg)
			}
		})
		if root == "" {
			continue // the subtest failed or skipped
		}
		if exists(t, zkAddr, root) {
			t.Errorf("%s: the test's root %s is still there after it ended", tc.name, root)
		}
	}
}

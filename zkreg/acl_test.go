package zkreg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/yrpc/yrpc/internal/zktest"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/rt/registry/registrytest"
)

// Secrets of the locked-down tests; no log line may contain them.
const (
	provPass = "prov-Secret-1:x"
	opsPass  = "ops-Secret-2"
	tokenVal = "token-Secret-3"
)

var (
	provCred = Credential{Scheme: "digest", Secret: "prov:" + provPass}
	opsCred  = Credential{Scheme: "digest", Secret: "ops:" + opsPass}
)

func lockedPolicy(t testing.TB) ACLPolicy {
	t.Helper()
	p, err := DigestPolicy(Roles{Providers: provCred.DigestID(), Operators: opsCred.DigestID()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// rawConn is a plain client holding creds, closed at cleanup.
func rawConn(t *testing.T, addr string, creds ...Credential) *zk.Conn {
	t.Helper()
	conn := connectRaw(t, addr, nil)
	for _, c := range creds {
		if err := conn.AddAuth(c.Scheme, []byte(c.Secret)); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

// connectRaw is a plain client dialing with dial (nil: go-zk's), closed
// at cleanup.
func connectRaw(t *testing.T, addr string, dial zk.Dialer) *zk.Conn {
	t.Helper()
	if dial == nil {
		dial = net.DialTimeout
	}
	conn, events, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false),
		zk.WithLogger(zkLogger{slog.New(slog.DiscardHandler)}), zk.WithDialer(dial))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		for range events {
		}
	})
	return conn
}

// lockdown makes env's cleanup run as an operator, who may delete the
// locked-down nodes.
func (e *env) lockdown() {
	e.t.Cleanup(func() { e.raw.AddAuth(opsCred.Scheme, []byte(opsCred.Secret)) }) // runs before newEnv's cleanup
}

// TestLockedDownRegistry: with DigestPolicy, a process without the
// providers' credential cannot create, change or delete a provider node,
// and only operators write governance config; everyone reads. Credentials
// survive a reconnection and a session expiry. No secret is logged.
func TestLockedDownRegistry(t *testing.T) {
	e := newEnv(t)
	e.lockdown()
	var logs logBuf
	debug := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	policy := lockedPolicy(t)
	locked := func(servers []string, creds ...Credential) Options {
		o := e.options(servers...)
		o.ACL, o.Logger, o.Auth = policy, debug, creds
		return o
	}
	proxy := zktest.NewProxy(t, e.zk)
	p := e.open(locked([]string{proxy.Addr()}, provCred))
	ops := e.open(locked(nil, opsCred))
	intruder := e.open(locked(nil))
	cons := e.open(locked(nil))
	ctx := context.Background()

	k := registry.Key{Service: "pkg.Locked", Group: "g"}
	ep := prov(k, "10.0.0.1:80")
	ep.TLS, ep.Token = true, tokenVal
	mustRegister(t, p, ep)
	h := watchHistory(t, cons, k)
	s := h.WaitFor(t, "the provider, read without credentials", registrytest.HasAddrs("10.0.0.1:80"))
	if got := s.Providers[0]; got.Token != tokenVal || !got.TLS || got.PayloadVersion != registry.PayloadVersion {
		t.Errorf("consumer read %+v, want the token, TLS and payload version", got)
	}
	mustRegister(t, cons, registry.Endpoint{Key: k, Role: registry.Consumer, Addr: "web-1:42:x"}) // consumers need no credential
	drain := func(cfg *registry.Config) error {
		cfg.Instances = map[string]registry.InstanceConfig{"10.0.0.1:80": {Draining: true}}
		return nil
	}
	if err := ops.UpdateConfig(ctx, k, drain); err != nil {
		t.Fatalf("operator: %v", err)
	}
	h.WaitFor(t, "the operators' config", func(s registry.Snapshot) bool { return s.Config.Instances["10.0.0.1:80"].Draining })

	path, cfgPath := p.paths.endpoint(ep), p.paths.config(k)
	payload, _, err := e.raw.Get(path)
	if err != nil {
		t.Fatal(err)
	}
	wrong := rawConn(t, e.zk, Credential{Scheme: "digest", Secret: "prov:wrong"})
	asProvider := rawConn(t, e.zk, provCred)
	evil := []byte(`{"addr":"10.0.0.1:80","weight":10000}`)
	open := zk.WorldACL(zk.PermAll)
	errOf := func(_ any, err error) error { return err }
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"intruder registers a provider of the key", intruder.Register(ctx, prov(k, "10.6.6.6:80"))},
		{"intruder registers a provider of a new key", intruder.Register(ctx, prov(registry.Key{Service: "pkg.Locked", Group: "new"}, "10.6.6.6:80"))},
		{"intruder registers a new service", intruder.Register(ctx, prov(registry.Key{Service: "pkg.Evil"}, "10.6.6.6:80"))},
		{"intruder writes config", intruder.UpdateConfig(ctx, k, func(c *registry.Config) error { c.Instances = nil; return nil })},
		{"provider writes config", p.UpdateConfig(ctx, k, func(c *registry.Config) error { c.RateLimit = &registry.RateLimit{Rate: 1, Burst: 1}; return nil })},
		{"anonymous: change a provider payload", errOf(e.raw.Set(path, evil, -1))},
		{"anonymous: delete a provider node", e.raw.Delete(path, -1)},
		{"anonymous: create a provider node", errOf(e.raw.Create(parent(path)+"/10.6.6.6:80", evil, zk.FlagEphemeral, open))},
		{"anonymous: open a provider node", errOf(e.raw.SetACL(path, open, -1))},
		{"anonymous: write config", errOf(e.raw.Set(cfgPath, []byte(`{}`), -1))},
		{"anonymous: delete config", e.raw.Delete(cfgPath, -1)},
		{"wrong password: change a provider payload", errOf(wrong.Set(path, evil, -1))},
		{"wrong password: delete a provider node", wrong.Delete(path, -1)},
		{"wrong password: write config", errOf(wrong.Set(cfgPath, []byte(`{}`), -1))},
		{"providers' identity: write config", errOf(asProvider.Set(cfgPath, []byte(`{}`), -1))},
		{"providers' identity: delete config", asProvider.Delete(cfgPath, -1)},
		{"providers' identity: open config", errOf(asProvider.SetACL(cfgPath, open, -1))},
	} {
		if !errors.Is(tc.err, zk.ErrNoAuth) {
			t.Errorf("%s: %v, want ZooKeeper's refusal (%v)", tc.name, tc.err, zk.ErrNoAuth)
		} else if msg := tc.err.Error(); strings.Contains(msg, provPass) || strings.Contains(msg, opsPass) {
			t.Errorf("%s: the error shows a password: %s", tc.name, msg)
		}
	}
	if got, _, err := e.raw.Get(path); err != nil || string(got) != string(payload) {
		t.Errorf("provider payload now %q, %v; want it unchanged", got, err)
	}
	if cfg, err := cons.Config(ctx, k); err != nil || !cfg.Instances["10.0.0.1:80"].Draining || cfg.RateLimit != nil {
		t.Errorf("config now %+v, %v; want the operators' only", cfg, err)
	}
	if ls, err := cons.List(ctx); err != nil || len(ls) != 1 || ls[0].Key != k {
		t.Errorf("List = %+v, %v; want only the key of the real provider", ls, err)
	}

	// The credential is presented again on a new connection and in a new
	// session: re-registering needs it.
	proxy.Cut()
	waitFor(t, "the provider to lose its connection", func() bool { return p.conn().State() != zk.StateHasSession })
	proxy.Restore()
	waitFor(t, "the provider to reconnect", func() bool { return p.conn().State() == zk.StateHasSession })
	mustRegister(t, p, prov(k, "10.0.0.2:80"))
	old := p.SessionID()
	pw, ok := proxy.Password(old)
	if !ok {
		t.Fatalf("proxy did not see session %#x", old)
	}
	if err := zktest.Expire(e.zk, old, pw); err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"10.0.0.1:80", "10.0.0.2:80"} {
		path := p.paths.endpoint(prov(k, addr))
		waitFor(t, addr+" back in the new session", func() bool {
			ok, st, err := e.raw.Exists(path)
			return err == nil && ok && st.EphemeralOwner != old && st.EphemeralOwner == p.SessionID()
		})
	}
	if strings.Contains(logs.String(), "level=WARN msg=\"zkreg: re-registering after a new session failed") {
		t.Errorf("re-registering failed at first:\n%s", logs.String())
	}
	assertNoSecrets(t, logs.String())
}

// assertNoSecrets fails if log (which must not be empty) shows a password
// or the registry token.
func assertNoSecrets(t *testing.T, log string) {
	t.Helper()
	if log == "" {
		t.Fatal("nothing was logged: the check would prove nothing")
	}
	for _, secret := range []string{provPass, opsPass, tokenVal} {
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, secret) {
				t.Errorf("a log line shows a secret: %s", line)
			}
		}
	}
}

// TestOpenRootWarned: a policy cannot protect a tree created without one;
// the registry says so.
func TestOpenRootWarned(t *testing.T) {
	e := newEnv(t)
	if _, err := e.raw.Create(e.root, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	var logs logBuf
	o := e.options()
	o.ACL, o.Auth, o.Logger = lockedPolicy(t), []Credential{provCred}, slog.New(slog.NewTextHandler(&logs, nil))
	e.open(o)
	if !strings.Contains(logs.String(), "root is open to everyone") || !strings.Contains(logs.String(), "world_perms=cdwa") {
		t.Errorf("log = %q, want a warning about the open root", logs.String())
	}
}

func TestCredential(t *testing.T) {
	for _, tc := range []struct {
		in, user, err string
	}{
		{in: "digest:ops:pw", user: "ops"},
		{in: "digest:ops:p:w", user: "ops"}, // the password may hold ':'
		{in: "digest:ops", err: "want USER:PASSWORD"},
		{in: "digest::pw", err: "want USER:PASSWORD"},
		{in: "digest:ops:", err: "empty password"},
		{in: "ops:pw", err: `scheme "ops"`},
		{in: "x509:CN=a", err: `scheme "x509": an x509 identity is not a credential but the TLS client certificate`},
		{in: "nothing", err: "want digest:USER:PASSWORD"},
		{in: "", err: "want digest:USER:PASSWORD"},
	} {
		c, err := ParseCredential(tc.in)
		switch {
		case tc.err == "" && (err != nil || c.User() != tc.user):
			t.Errorf("ParseCredential(%q) = %v, %v; want user %q", tc.in, c, err, tc.user)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseCredential(%q) = %v; want %q", tc.in, err, tc.err)
		case err != nil && strings.Contains(err.Error(), "pw"):
			t.Errorf("ParseCredential(%q): the error shows the password: %v", tc.in, err)
		}
	}
	// ZooKeeper's own digest of "super:test" (DigestAuthenticationProvider).
	if got := (Credential{Scheme: "digest", Secret: "super:test"}).DigestID(); got != "super:D/InIHSb7yEEbrWz8b9l71RjZJU=" {
		t.Errorf("DigestID = %q", got)
	}
	c := Credential{Scheme: "digest", Secret: "ops:" + opsPass}
	js, _ := json.Marshal(struct{ Auth []Credential }{[]Credential{c}})
	var logs logBuf
	slog.New(slog.NewTextHandler(&logs, nil)).Info("x", "cred", c, "creds", []Credential{c})
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", Options{Auth: []Credential{c}}), fmt.Sprintf("%#v", c), fmt.Sprintf("%q", c), string(js), logs.String()} {
		if strings.Contains(s, opsPass) || !strings.Contains(s, "digest:ops:REDACTED") {
			t.Errorf("printed as %q, want digest:ops:REDACTED", s)
		}
	}
}

func TestParseRoles(t *testing.T) {
	p, o := provCred.DigestID(), opsCred.DigestID()
	for _, tc := range []struct {
		in   string
		want Roles
		err  string
	}{
		{in: "providers=" + p + ",operators=" + o, want: Roles{Providers: p, Operators: o}},
		{in: " operators=" + o + " , consumers=" + p, want: Roles{Operators: o, Consumers: p}},
		{in: "providers=" + p + ",providers=" + p, err: "given twice"},
		{in: "admins=" + o, err: `unknown role "admins"`},
		{in: "operators", err: "is not ROLE=ID"},
		{in: "operators=ops:pw", err: "is neither a digest id"},
		{in: "providers=x509:CN=web,O=shop\\, inc.,operators=" + o, want: Roles{Providers: `x509:CN=web,O=shop\, inc.`, Operators: o}},
		{in: "operators=x509:CN=ops,OU=a+OU=b , consumers=x509:CN=web", want: Roles{Operators: "x509:CN=ops,OU=a+OU=b", Consumers: "x509:CN=web"}},
		{in: "operators=x509:CN=ops,admins=" + o, err: `unknown role "admins"`},
		{in: "operators=x509:ops", err: "is not an x509 id"},
		{in: "operators=x509:", err: "is not an x509 id"},
	} {
		got, err := ParseRoles(tc.in)
		if tc.err == "" && (err != nil || got != tc.want) || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseRoles(%q) = %+v, %v; want %+v, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestDigestPolicy(t *testing.T) {
	p, o, c := provCred.DigestID(), opsCred.DigestID(), "web:"+strings.Repeat("A", 27)+"="
	type perms map[string]int32 // by "scheme:id"
	const (
		r, w, cr, d, all = zk.PermRead, zk.PermWrite, zk.PermCreate, zk.PermDelete, zk.PermAll
	)
	world := "world:anyone"
	for _, tc := range []struct {
		roles Roles
		kind  NodeKind
		want  perms // nil: no ACL
	}{
		{Roles{Providers: p, Operators: o}, NodeDir, perms{world: r, "digest:" + p: r | cr, "digest:" + o: all}},
		{Roles{Providers: p, Operators: o}, NodeProviders, perms{world: r, "digest:" + p: r | cr | d, "digest:" + o: all}},
		{Roles{Providers: p, Operators: o}, NodeProvider, perms{world: r, "digest:" + p: r | w, "digest:" + o: all}},
		{Roles{Providers: p, Operators: o}, NodeConsumers, perms{world: r | cr | d, "digest:" + p: r | cr | d, "digest:" + o: all}},
		{Roles{Providers: p, Operators: o}, NodeConsumer, perms{world: r | w, "digest:" + p: r | w, "digest:" + o: all}},
		{Roles{Providers: p, Operators: o}, NodeConfig, perms{world: r, "digest:" + o: all}},
		{Roles{Providers: p, Operators: o, Consumers: c}, NodeConsumers, perms{world: r, "digest:" + c: r | cr | d, "digest:" + p: r | cr | d, "digest:" + o: all}},
		{Roles{Providers: o, Operators: o}, NodeProvider, perms{world: r, "digest:" + o: all}}, // one id, one entry
		{Roles{Operators: o}, NodeConfig, perms{world: r, "digest:" + o: all}},
		{Roles{Operators: o}, NodeProviders, nil}, // would lock providers out
		{Roles{Operators: o}, NodeDir, nil},
		{Roles{Providers: p, Operators: o}, NodeKind(99), nil},
		{Roles{Providers: "x509:CN=p,O=a\\,b", Operators: o, Consumers: "x509:CN=c"}, NodeConsumers,
			perms{world: r, "x509:CN=c": r | cr | d, `x509:CN=p,O=a\,b`: r | cr | d, "digest:" + o: all}},
		{Roles{Providers: p, Operators: "x509:CN=ops"}, NodeProvider, perms{world: r, "digest:" + p: r | w, "x509:CN=ops": all}},
	} {
		pol, err := DigestPolicy(tc.roles)
		if err != nil {
			t.Fatal(err)
		}
		acl := pol.ACL(tc.kind, "/x")
		var got perms
		for _, a := range acl {
			if got == nil {
				got = perms{}
			}
			if _, dup := got[a.Scheme+":"+a.ID]; dup {
				t.Errorf("%v of %+v: duplicate entry %s", tc.kind, tc.roles, a.ID)
			}
			got[a.Scheme+":"+a.ID] = a.Perms
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("ACL(%v) with %+v = %v, want %v", tc.kind, tc.roles, got, tc.want)
		}
	}
	if _, err := DigestPolicy(Roles{Providers: p}); err == nil {
		t.Error("DigestPolicy without operators: nil error")
	}
	if _, err := DigestPolicy(Roles{Operators: "ops:pw"}); err == nil {
		t.Error("DigestPolicy with a password for an id: nil error")
	}
}

package zkctl

import (
	"strings"
	"testing"

	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/zkreg"
)

// TestCredentials: in a locked-down registry ctl without credentials
// reads but cannot write, and says which flag or variable to set; with an
// operator's credentials (flag or environment) it writes; no output ever
// shows a password. ZooKeeper is plaintext here: every call allows a
// digest credential without TLS, but for the one that checks the refusal.
func TestCredentials(t *testing.T) {
	const (
		provPass = "prov-Secret-1"
		opsPass  = "ops-Secret-2"
	)
	prov := zkreg.Credential{Scheme: "digest", Secret: "prov:" + provPass}
	ops := zkreg.Credential{Scheme: "digest", Secret: "ops:" + opsPass}
	roles := zkreg.Roles{Providers: prov.DigestID(), Operators: ops.DigestID()}
	policy, err := zkreg.DigestPolicy(roles)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, zkreg.Options{Auth: []zkreg.Credential{prov}, ACL: policy})
	ctlEnv := func(t *testing.T, env map[string]string, zk, root string, args ...string) (int, string, string) {
		t.Helper()
		allowed := map[string]string{EnvPlaintextAuth: "1"}
		for k, v := range env {
			allowed[k] = v
		}
		return ctlEnv(t, allowed, zk, root, args...)
	}
	w.admin = []zkreg.Credential{ops} // an operator removes what the test wrote
	w.provide(catalogEU, "10.0.0.1:7001", "Get")
	aclFlag := "providers=" + roles.Providers + ",operators=" + roles.Operators
	drain := []string{"drain", "shop.Catalog", "10.0.0.1:7001", "--group", "EU"}
	var printed strings.Builder
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string
	}{
		{"no credentials: ls", nil, []string{"ls"}, ExitOK, "10.0.0.1:7001"},
		{"no credentials: drain", nil, drain, ExitError,
			"ZooKeeper refused to write the config of shop.Catalog[EU] (zk: not authenticated): the registry is locked down; give an operator's credentials with --auth digest:USER:PASSWORD or $YRPC_ZK_AUTH"},
		{"providers' credentials", nil, append([]string{"--auth", "digest:prov:" + provPass}, drain...), ExitError,
			`the credentials of user "prov" (--auth or $YRPC_ZK_AUTH; is the password right?) may not write it; give an operator's`},
		{"wrong password", map[string]string{EnvAuth: "digest:ops:guess"}, drain, ExitError,
			`the credentials of user "ops" (--auth or $YRPC_ZK_AUTH; is the password right?) may not write it; give an operator's`},
		{"bad --auth", nil, append([]string{"--auth=digest:ops" + opsPass}, drain...), ExitUsage, "--auth: zkreg: digest credential: want USER:PASSWORD"},
		{"bad $YRPC_ZK_AUTH", map[string]string{EnvAuth: "basic:" + opsPass}, drain, ExitUsage, `$YRPC_ZK_AUTH: zkreg: credential scheme "basic"`},
		{"--auth", nil, append([]string{"--auth", "digest:ops:" + opsPass}, drain...), ExitOK, "(none) -> draining"},
		{"$YRPC_ZK_AUTH", map[string]string{EnvAuth: "digest:ops:" + opsPass}, []string{"undrain", "shop.Catalog", "10.0.0.1:7001", "--group", "EU"}, ExitOK, "draining -> (none)"},
		{"--auth and --acl", nil, append([]string{"--auth", "digest:ops:" + opsPass, "--acl", aclFlag}, drain...), ExitOK, "(none) -> draining"},
		{"$YRPC_ZK_ACL", map[string]string{EnvAuth: "digest:ops:" + opsPass, EnvACL: aclFlag},
			[]string{"limit", "shop.Catalog", "1", "2", "--group", "EU"}, ExitOK, "(none) -> 1/s burst 2"},
		{"help", map[string]string{EnvAuth: "digest:ops:" + opsPass}, []string{"--help"}, ExitOK, "--auth digest:USER:PASSWORD"},
		{"unreachable", map[string]string{EnvAuth: "digest:ops:" + opsPass}, []string{"-zk", "127.0.0.1:1", "ls"}, ExitError, "connection refused"},
		{"--auth in plaintext, not allowed", map[string]string{EnvPlaintextAuth: "0"}, append([]string{"--auth", "digest:ops:" + opsPass}, drain...), ExitUsage,
			"--auth: refusing to send a digest credential to ZooKeeper in plaintext: connect over TLS (--zk-tls-ca FILE, or --zk-tls for the system's CAs), or allow it on a trusted network with --zk-plaintext-auth or $YRPC_ZK_PLAINTEXT_AUTH=1"},
		{"$YRPC_ZK_AUTH in plaintext, not allowed", map[string]string{EnvPlaintextAuth: "", EnvAuth: "digest:ops:" + opsPass}, drain, ExitUsage, "$YRPC_ZK_AUTH: refusing to send a digest credential to ZooKeeper in plaintext"},
		{"--zk-plaintext-auth", map[string]string{EnvPlaintextAuth: ""}, append([]string{"--zk-plaintext-auth", "--auth", "digest:ops:" + opsPass}, drain...), ExitOK, "shop.Catalog[EU]: no change"},
		{"bad $YRPC_ZK_PLAINTEXT_AUTH", map[string]string{EnvPlaintextAuth: "yes please"}, append([]string{"--auth", "digest:ops:" + opsPass}, drain...), ExitUsage, "$YRPC_ZK_PLAINTEXT_AUTH: want 1 or 0"},
	} {
		code, out, errs := ctlEnv(t, tc.env, w.zk, w.root, tc.args...)
		printed.WriteString(out + errs)
		if code != tc.code || !strings.Contains(out+errs, tc.want) {
			t.Errorf("%s: ctl = %d, %q, %q; want %d and %q", tc.name, code, out, errs, tc.code, tc.want)
		}
	}
	for _, secret := range []string{provPass, opsPass, "guess"} {
		if strings.Contains(printed.String(), secret) {
			t.Errorf("ctl printed a password:\n%s", printed.String())
		}
	}
	// What the operator wrote is the config; the provider's identity could not.
	if cfg := w.keys()["shop.Catalog[EU]"]; !cfg.Instances["10.0.0.1:7001"].Draining || cfg.RateLimit == nil {
		t.Errorf("config = %+v", cfg)
	}
	// Creating the nodes of a new key needs the providers' id (--acl).
	force := []string{"limit", "shop.New", "1", "1", "--force", "--auth", "digest:ops:" + opsPass}
	if code, _, errs := ctlEnv(t, nil, w.zk, w.root, force...); code != ExitError || !strings.Contains(errs, "shop.New has no nodes yet, and creating them needs the registry's roles: give them with --acl") {
		t.Errorf("forced write to a new key without --acl = %d, %q; want a refusal naming the missing roles", code, errs)
	}
	if code, out, errs := ctlEnv(t, nil, w.zk, w.root, append(force, "--acl", aclFlag)...); code != ExitOK {
		t.Errorf("forced write to a new key with --acl = %d, %q %q", code, out, errs)
	}
	// The key ctl created lets providers register.
	w.provide(registry.Key{Service: "shop.New"}, "10.0.3.1:7001")
	if code, out, errs := ctlEnv(t, nil, w.zk, w.root, "rm", "shop.New", "all", "--auth", "digest:ops:"+opsPass); code != ExitOK {
		t.Errorf("rm = %d, %q %q", code, out, errs)
	}
}

package zkctl

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yrpc/yrpc/internal/testcerts"
	"github.com/yrpc/yrpc/internal/zktest"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/zkreg"
)

// TestTLS: ctl talks TLS to ZooKeeper's secureClientPort (flags or
// environment), and its client certificate is its ZooKeeper identity: an
// operator's certificate writes, another certificate of the same CA is
// refused naming its identity, and a digest credential goes over TLS
// without --zk-plaintext-auth.
func TestTLS(t *testing.T) {
	zktest.Addr(t) // runs with the other ZooKeeper tests
	ca := testcerts.NewCA(t, "yrpc test CA")
	_, secure := zktest.StartTLSServer(t, zktest.TLSOptions{CA: ca, ClientAuth: "need", X509Auth: true})
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caFile := write("ca.pem", ca.PEM())
	files := map[string][2]string{} // cert, key
	ids := map[string]string{}
	certs := map[string]tls.Certificate{}
	for _, cn := range []string{"provider", "operator", "intruder"} {
		cert := ca.Issue(t, testcerts.Leaf{Subject: pkix.Name{CommonName: cn, Organization: []string{"shop"}}, Client: true})
		certs[cn] = cert
		certPEM, keyPEM := testcerts.PEM(t, cert)
		files[cn] = [2]string{write(cn+".pem", certPEM), write(cn+".key", keyPEM)}
		ids[cn] = "x509:CN=" + cn + ",O=shop"
	}
	other := testcerts.NewCA(t, "another CA")
	otherFile := write("other.pem", other.PEM())

	policy, err := zkreg.DigestPolicy(zkreg.Roles{Providers: ids["provider"], Operators: ids["operator"]})
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, zkreg.Options{Servers: []string{secure}, TLS: testcerts.ClientConfig(ca, certs["provider"]), ACL: policy})
	w.provide(catalogEU, "10.0.0.1:7001", "Get")
	tlsFlags := func(who string) []string {
		return []string{"--zk-tls-ca", caFile, "--zk-tls-cert", files[who][0], "--zk-tls-key", files[who][1]}
	}
	tlsEnv := func(who string) map[string]string {
		return map[string]string{EnvTLSCA: caFile, EnvTLSCert: files[who][0], EnvTLSKey: files[who][1]}
	}
	drain := []string{"drain", "shop.Catalog", "10.0.0.1:7001", "--group", "EU"}
	aclFlag := "providers=" + ids["provider"] + ",operators=" + ids["operator"]
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string
	}{
		{"ls over TLS", nil, append(tlsFlags("intruder"), "ls"), ExitOK, "10.0.0.1:7001"},
		{"no TLS to a TLS port", nil, []string{"ls"}, ExitError, "connect to ZooKeeper"},
		{"untrusted server", nil, []string{"--zk-tls-ca", otherFile, "--zk-tls-cert", files["operator"][0], "--zk-tls-key", files["operator"][1], "ls"},
			ExitError, "certificate signed by unknown authority"},
		{"intruder's certificate", nil, append(tlsFlags("intruder"), drain...), ExitError,
			`ZooKeeper refused to write the config of shop.Catalog[EU] (zk: not authenticated): the client certificate's identity "x509:CN=intruder,O=shop" (--zk-tls-cert or $YRPC_ZK_TLS_CERT) may not write it; give an operator's`},
		{"provider's certificate", tlsEnv("provider"), drain, ExitError, `the client certificate's identity "x509:CN=provider,O=shop"`},
		{"operator's certificate, flags", nil, append(tlsFlags("operator"), drain...), ExitOK, "(none) -> draining"},
		{"operator's certificate, environment", tlsEnv("operator"), []string{"undrain", "shop.Catalog", "10.0.0.1:7001", "--group", "EU"}, ExitOK, "draining -> (none)"},
		{"digest over TLS", nil, append(tlsFlags("intruder"), append([]string{"--auth", "digest:ops:pw"}, drain...)...), ExitError,
			`the credentials of user "ops" (--auth or $YRPC_ZK_AUTH; is the password right?) may not write it`},
		{"a new key: operators default to the certificate", nil, append(tlsFlags("operator"), "limit", "shop.New", "1", "1", "--force", "--acl", "providers="+ids["provider"]),
			ExitOK, "(none) -> 1/s burst 1"},
		{"--acl with x509 ids", nil, append(tlsFlags("operator"), "limit", "shop.New", "2", "2", "--force", "--acl", aclFlag), ExitOK, "1/s burst 1 per client IP -> 2/s burst 2"},
		{"certificate without key", nil, []string{"--zk-tls-cert", files["operator"][0], "ls"}, ExitUsage, "needs both --zk-tls-cert and --zk-tls-key"},
		{"key of another certificate", nil, []string{"--zk-tls-cert", files["operator"][0], "--zk-tls-key", files["intruder"][1], "ls"}, ExitUsage,
			"--zk-tls-cert, --zk-tls-key: tls: private key does not match public key"},
		{"no CA file", map[string]string{EnvTLSCA: filepath.Join(dir, "none.pem")}, []string{"ls"}, ExitUsage, "$YRPC_ZK_TLS_CA: open "},
		{"a key for a CA", nil, []string{"--zk-tls-ca", files["operator"][1], "ls"}, ExitUsage, "holds no PEM certificate"},
		{"bad $YRPC_ZK_TLS", map[string]string{EnvTLS: "maybe"}, []string{"ls"}, ExitUsage, "$YRPC_ZK_TLS: want 1 or 0"},
		{"--zk-tls: the system's CAs", nil, []string{"--zk-tls", "ls"}, ExitError, "certificate signed by unknown authority"},
	} {
		code, out, errs := ctlEnv(t, tc.env, secure, w.root, tc.args...)
		if code != tc.code || !strings.Contains(out+errs, tc.want) {
			t.Errorf("%s: ctl = %d, %q, %q; want %d and %q", tc.name, code, out, errs, tc.code, tc.want)
		}
	}
	if cfg := w.keys()["shop.New"]; cfg.RateLimit == nil || cfg.RateLimit.Rate != 2 {
		t.Errorf("shop.New's config = %+v", cfg)
	}
	w.provide(registry.Key{Service: "shop.New"}, "10.0.3.1:7001") // the key ctl created lets providers register
	if code, out, errs := ctlEnv(t, tlsEnv("operator"), secure, w.root, "rm", "shop.New", "all"); code != ExitOK {
		t.Errorf("rm = %d, %q %q", code, out, errs)
	}
}

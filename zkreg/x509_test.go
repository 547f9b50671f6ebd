package zkreg

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/go-zookeeper/zk"

	"github.com/yrpc/yrpc/internal/testcerts"
	"github.com/yrpc/yrpc/internal/zktest"
	"github.com/yrpc/yrpc/rt/registry"
	"github.com/yrpc/yrpc/rt/registry/registrytest"
)

var (
	oidCN  = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidO   = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidOU  = asn1.ObjectIdentifier{2, 5, 4, 11}
	oidDC  = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}
	oidUID = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}
	oidEM  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
)

func bmp(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u>>8), byte(u))
	}
	return b
}

// x509IDCases are subjects and the ids ZooKeeper 3.8's
// X509AuthenticationProvider gives them (TestX509IDMatchesZooKeeper
// checks them against the server).
var x509IDCases = []struct {
	name    string
	subject pkix.Name
	want    string
}{
	{"plain", pkix.Name{CommonName: "web", Organization: []string{"shop"}}, "x509:CN=web,O=shop"},
	{"escapes", pkix.Name{CommonName: ` a,b=c#d+e;f<g>h"i\j `, Organization: []string{"#shop"}},
		`x509:CN=\ a\,b\=c\#d\+e\;f\<g\>h\"i\\j\ ,O=\#shop`},
	{"names Java prints by OID, a multi-valued RDN", pkix.Name{CommonName: "wéb_x@y*z", SerialNumber: "42", Country: []string{"HK"},
		OrganizationalUnit: []string{"u1", "u2"}, Locality: []string{"L"}, Province: []string{"P"}, StreetAddress: []string{"S"}, PostalCode: []string{"999"}},
		"x509:2.5.4.5=#13023432,CN=wéb_x@y*z,OU=u1+OU=u2,2.5.4.17=#1303393939,STREET=S,L=L,ST=P,C=HK"},
	{"DC, UID, email", pkix.Name{CommonName: "x", ExtraNames: []pkix.AttributeTypeAndValue{
		{Type: oidDC, Value: "com"}, {Type: oidUID, Value: "uid1"}, {Type: oidEM, Value: "a@b"}}},
		"x509:1.2.840.113549.1.9.1=#0c03614062,UID=uid1,DC=com,CN=x"},
	{"a numeric string", pkix.Name{CommonName: "web", ExtraNames: []pkix.AttributeTypeAndValue{
		{Type: oidOU, Value: asn1.RawValue{Tag: asn1.TagNumericString, Bytes: []byte("123")}}}},
		"x509:OU=#1203313233,CN=web"},
}

func TestX509ID(t *testing.T) {
	ca := testcerts.NewCA(t, "yrpc test CA")
	for _, tc := range x509IDCases {
		got, err := X509ID(ca.Issue(t, testcerts.Leaf{Subject: tc.subject, Client: true}).Leaf)
		if err != nil || got != tc.want {
			t.Errorf("%s: X509ID = %q, %v; want %q", tc.name, got, err, tc.want)
		}
		if r, err := ParseRoles("providers=" + tc.want + ",operators=" + tc.want); err != nil || r.Providers != tc.want || r.Operators != tc.want {
			t.Errorf("%s: ParseRoles = %+v, %v", tc.name, r, err)
		}
	}
	for _, tc := range []struct {
		name    string
		subject pkix.Name
		err     string
	}{
		{"empty", pkix.Name{}, "empty subject"},
		// OpenJDK 17 gives them as "CN=\00w\00�\00b&\x03" and "O=caf�".
		{"BMP", pkix.Name{ExtraNames: []pkix.AttributeTypeAndValue{{Type: oidCN, Value: asn1.RawValue{Tag: asn1.TagBMPString, Bytes: bmp("wéb☃")}}}}, "attribute CN: a T61, BMP or general string"},
		{"T61", pkix.Name{ExtraNames: []pkix.AttributeTypeAndValue{{Type: oidO, Value: asn1.RawValue{Tag: asn1.TagT61String, Bytes: []byte("caf\xe9")}}}}, "attribute O: a T61"},
	} {
		got, err := X509ID(ca.Issue(t, testcerts.Leaf{Subject: tc.subject, Client: true}).Leaf)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: X509ID = %q, %v; want an error %q", tc.name, got, err, tc.err)
		}
	}
}

// tlsServer starts a ZooKeeper of the test's own that authenticates TLS
// clients by certificate (x509). It returns its plaintext and TLS
// addresses.
func tlsServer(t *testing.T, ca *testcerts.CA) (plain, secure string) {
	t.Helper()
	zktest.Addr(t) // runs with the other ZooKeeper tests
	s, secure := zktest.StartTLSServer(t, zktest.TLSOptions{CA: ca, ClientAuth: "need", X509Auth: true})
	return s.Addr(), secure
}

// rawTLSConn is a plain client over TLS with cfg, with a session, closed
// at cleanup.
func rawTLSConn(t *testing.T, addr string, cfg *tls.Config) *zk.Conn {
	t.Helper()
	conn := connectRaw(t, addr, func(network, address string, timeout time.Duration) (net.Conn, error) {
		return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, address, cfg)
	})
	// Requests sent before go-zk finishes a round of failed handshakes
	// (1s each: a loaded machine) would fail with ErrNoServer.
	waitFor(t, "a session over TLS", func() bool { return conn.State() == zk.StateHasSession })
	return conn
}

// TestX509IDMatchesZooKeeper: X509ID names a certificate as ZooKeeper's
// X509AuthenticationProvider does (the "auth" ACL scheme stores the
// creator's ids).
func TestX509IDMatchesZooKeeper(t *testing.T) {
	ca := testcerts.NewCA(t, "yrpc test CA")
	_, secure := tlsServer(t, ca)
	for i, tc := range x509IDCases {
		cert := ca.Issue(t, testcerts.Leaf{Subject: tc.subject, Client: true})
		conn := rawTLSConn(t, secure, testcerts.ClientConfig(ca, cert))
		path := "/x509id-" + string(rune('a'+i))
		if _, err := conn.Create(path, nil, zk.FlagEphemeral, []zk.ACL{{Perms: zk.PermAll, Scheme: "auth"}}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		acl, _, err := conn.GetACL(path)
		if err != nil || len(acl) != 1 || acl[0].Scheme+":"+acl[0].ID != tc.want {
			t.Errorf("%s: ZooKeeper's ids %+v, %v; want %q", tc.name, acl, err, tc.want)
		}
		conn.Close()
	}
}

// TestX509Roles: with Roles naming x509 ids, a provider authenticated by
// its client certificate registers; a certificate of the same CA without
// the role cannot register or write config (a clear NoAuth error), nor
// register a consumer when Roles.Consumers is another certificate's;
// operators write config; a client without certificate (the plaintext
// port) reads the provider and config but writes nothing.
func TestX509Roles(t *testing.T) {
	ca := testcerts.NewCA(t, "yrpc test CA")
	plain, secure := tlsServer(t, ca)
	ids := map[string]string{}
	certs := map[string]*tls.Config{}
	for _, cn := range []string{"provider", "operator", "web", "intruder"} {
		cert := ca.Issue(t, testcerts.Leaf{Subject: pkix.Name{CommonName: cn, Organization: []string{"shop, inc."}}, Client: true})
		id, err := X509ID(cert.Leaf)
		if err != nil {
			t.Fatal(err)
		}
		ids[cn], certs[cn] = id, testcerts.ClientConfig(ca, cert)
	}
	if want := `x509:CN=provider,O=shop\, inc.`; ids["provider"] != want {
		t.Fatalf("X509ID = %q, want %q", ids["provider"], want)
	}
	roles, err := ParseRoles("providers=" + ids["provider"] + ",operators=" + ids["operator"] + ",consumers=" + ids["web"])
	if err != nil {
		t.Fatal(err)
	}
	policy, err := DigestPolicy(roles)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, zk: secure, root: "/yrpcx509"}
	open := func(who string) *Registry {
		o := e.options()
		o.ACL = policy
		if who == "" { // no certificate: the plaintext port
			o.Servers = []string{plain}
		} else {
			o.TLS = certs[who]
		}
		return e.open(o)
	}
	p, ops, web, intruder, world := open("provider"), open("operator"), open("web"), open("intruder"), open("")
	ctx := context.Background()
	k := registry.Key{Service: "pkg.X509"}
	mustRegister(t, p, prov(k, "10.0.0.1:80"))
	h := watchHistory(t, world, k)
	h.WaitFor(t, "the provider, read without a certificate", registrytest.HasAddrs("10.0.0.1:80"))
	mustRegister(t, web, registry.Endpoint{Key: k, Role: registry.Consumer, Addr: "web-1:1"})
	setLimit := func(r *Registry) error {
		return r.UpdateConfig(ctx, k, func(c *registry.Config) error {
			c.RateLimit = &registry.RateLimit{Rate: 5, Burst: 5}
			return nil
		})
	}
	if err := setLimit(ops); err != nil {
		t.Fatalf("operator: %v", err)
	}
	h.WaitFor(t, "the operator's config, read without a certificate", func(s registry.Snapshot) bool { return s.Config.RateLimit != nil })

	for _, tc := range []struct {
		name string
		err  error
	}{
		{"intruder certificate registers a provider", intruder.Register(ctx, prov(k, "10.6.6.6:80"))},
		{"intruder certificate registers a new service", intruder.Register(ctx, prov(registry.Key{Service: "pkg.Evil"}, "10.6.6.6:80"))},
		{"intruder certificate registers a consumer", intruder.Register(ctx, registry.Endpoint{Key: k, Role: registry.Consumer, Addr: "evil:1"})},
		{"intruder certificate writes config", setLimit(intruder)},
		{"provider certificate writes config", setLimit(p)},
		{"no certificate registers a provider", world.Register(ctx, prov(k, "10.6.6.7:80"))},
		{"no certificate registers a consumer", world.Register(ctx, registry.Endpoint{Key: k, Role: registry.Consumer, Addr: "evil:2"})},
		{"no certificate writes config", setLimit(world)},
	} {
		if !errors.Is(tc.err, zk.ErrNoAuth) || !strings.Contains(tc.err.Error(), "no identity of this registry, neither a credential nor its TLS client certificate, has that permission") {
			t.Errorf("%s: %v; want ZooKeeper's refusal (%v), explained", tc.name, tc.err, zk.ErrNoAuth)
		}
	}
	if ls, err := world.List(ctx); err != nil || len(ls) != 1 || ls[0].Key != k || len(ls[0].Providers) != 1 || len(ls[0].Consumers) != 1 {
		t.Errorf("List = %+v, %v; want the real provider and consumer only", ls, err)
	}
	// The ACLs name the certificates' DNs under ZooKeeper's x509 scheme.
	acl, _, err := rawConn(t, plain).GetACL(p.paths.endpoint(prov(k, "10.0.0.1:80")))
	want := []zk.ACL{{Perms: zk.PermRead, Scheme: "world", ID: "anyone"},
		{Perms: zk.PermRead | zk.PermWrite, Scheme: "x509", ID: `CN=provider,O=shop\, inc.`},
		{Perms: zk.PermAll, Scheme: "x509", ID: `CN=operator,O=shop\, inc.`}}
	if err != nil || len(acl) != len(want) {
		t.Fatalf("provider node's ACL = %+v, %v; want %+v", acl, err, want)
	}
	for i := range want {
		if acl[i] != want[i] {
			t.Errorf("provider node's ACL = %+v; want %+v", acl, want)
		}
	}
	// An operator cleans up.
	for _, r := range []*Registry{p, web} {
		r.Close()
	}
	if err := ops.UpdateConfig(ctx, k, func(c *registry.Config) error { *c = registry.Config{}; return nil }); err != nil {
		t.Errorf("operator cleanup: %v", err)
	}
}

package testcerts

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
)

// TestChains checks that issued certificates verify against their CA for
// their use, and not against another CA or for the other use.
func TestChains(t *testing.T) {
	ca, other := NewCA(t, "ca"), NewCA(t, "other")
	for _, tc := range []struct {
		leaf   Leaf
		usage  x509.ExtKeyUsage
		dns    string
		spiffe string
	}{
		{Leaf{CN: "srv"}, x509.ExtKeyUsageServerAuth, "localhost", ""},
		{Leaf{CN: "cli", Client: true, SPIFFE: "spiffe://test/web"}, x509.ExtKeyUsageClientAuth, "", "spiffe://test/web"},
	} {
		c := ca.Issue(t, tc.leaf)
		opts := x509.VerifyOptions{Roots: ca.Pool, DNSName: tc.dns, KeyUsages: []x509.ExtKeyUsage{tc.usage}}
		if _, err := c.Leaf.Verify(opts); err != nil {
			t.Errorf("%s: %v", tc.leaf.CN, err)
		}
		opts.Roots = other.Pool
		if _, err := c.Leaf.Verify(opts); err == nil {
			t.Errorf("%s verifies against another CA", tc.leaf.CN)
		}
		if got := len(c.Leaf.URIs); (got == 1) != (tc.spiffe != "") || got == 1 && c.Leaf.URIs[0].String() != tc.spiffe {
			t.Errorf("%s: URIs = %v, want %q", tc.leaf.CN, c.Leaf.URIs, tc.spiffe)
		}
		certPEM, keyPEM := PEM(t, c)
		if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
			t.Errorf("%s: PEM does not load: %v", tc.leaf.CN, err)
		}
	}
	if !x509.NewCertPool().AppendCertsFromPEM(ca.PEM()) {
		t.Error("the CA's PEM does not load")
	}
}

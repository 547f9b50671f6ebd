package testcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"sync/atomic"
	"testing"
	"time"
)

// CA is a certificate authority made for one test. Its methods are safe
// for concurrent use.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	Pool *x509.CertPool // holds Cert only

	serial atomic.Int64 // the last serial number issued
}

// NewCA makes a CA named name, valid from an hour ago for a day. It fails
// t on error.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	ca := &CA{Key: newKey(t)}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(ca.serial.Add(1)),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	ca.Cert = create(t, tmpl, tmpl, &ca.Key.PublicKey, ca.Key)
	ca.Pool = x509.NewCertPool()
	ca.Pool.AddCert(ca.Cert)
	return ca
}

// Leaf is what Issue puts in a certificate. The zero value is a server
// certificate with no common name, valid for a day.
type Leaf struct {
	CN       string    // the subject's common name
	Subject  pkix.Name // the rest of the subject (CN, if set, replaces its CommonName)
	SPIFFE   string    // a spiffe:// URI SAN; "" for none
	NotAfter time.Time // zero: a day from now
	// Client makes a client-auth certificate; otherwise it is a
	// server-auth certificate for 127.0.0.1 and localhost.
	Client bool
}

// Issue makes a certificate of l signed by ca. It fails t on error.
func (ca *CA) Issue(t testing.TB, l Leaf) tls.Certificate {
	t.Helper()
	key := newKey(t)
	if l.NotAfter.IsZero() {
		l.NotAfter = time.Now().Add(24 * time.Hour)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial.Add(1)),
		Subject:      l.Subject,
		NotBefore:    time.Now().Add(-2 * time.Hour),
		NotAfter:     l.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if l.CN != "" {
		tmpl.Subject.CommonName = l.CN
	}
	if l.Client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	} else {
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		tmpl.DNSNames = []string{"localhost"}
	}
	if l.SPIFFE != "" {
		u, err := url.Parse(l.SPIFFE)
		if err != nil {
			t.Fatalf("testcerts: SPIFFE ID %q: %v", l.SPIFFE, err)
		}
		tmpl.URIs = []*url.URL{u}
	}
	cert := create(t, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	return tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}
}

// PEM returns the CA's certificate in PEM.
func (ca *CA) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// PEM returns the leaf certificate of c and its PKCS #8 private key in
// PEM. It fails t on error.
func PEM(t testing.TB, c tls.Certificate) (certPEM, keyPEM []byte) {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		t.Fatalf("testcerts: %v", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// ServerConfig is a server's TLS config with cert, requiring client
// certificates signed by clientCA when it is not nil.
func ServerConfig(cert tls.Certificate, clientCA *CA) *tls.Config {
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	if clientCA != nil {
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		cfg.ClientCAs = clientCA.Pool
	}
	return cfg
}

// ClientConfig is a client's TLS config trusting ca, with the client
// certificates certs (none: no client certificate).
func ClientConfig(ca *CA, certs ...tls.Certificate) *tls.Config {
	return &tls.Config{RootCAs: ca.Pool, Certificates: certs}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("testcerts: %v", err)
	}
	return k
}

// create signs tmpl with the parent's key and parses the result.
func create(t testing.TB, tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, signer *ecdsa.PrivateKey) *x509.Certificate {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		t.Fatalf("testcerts: certificate %q: %v", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("testcerts: %v", err)
	}
	return cert
}

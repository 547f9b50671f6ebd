// Package certs makes the TLS certificates of a bench run and loads them
// in its server and client processes. The runner generates a set once per
// run in a temporary directory (Generate), passes the directory to every
// process of a TLS implementation (-certs DIR) and removes it at the end;
// each process loads it (Load) and takes its side's config (Set.Server,
// Set.Client). Nothing is checked in.
//
// A set is a CA, a server certificate for 127.0.0.1 and localhost and a
// client certificate, all ECDSA P-256, valid for a week. The configs are
// those of mutual TLS at TLS 1.3, the default of yrpc's rt.WithTLS, for
// every TLS implementation alike.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The files of a set in its directory.
const (
	caFile     = "ca.pem"
	serverFile = "server.pem" // certificate, then key
	clientFile = "client.pem" // certificate, then key
)

// validity is how long a generated set is valid.
const validity = 7 * 24 * time.Hour

// Generate writes a new set to dir, which must exist.
func Generate(dir string) error {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "bench CA"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, caCert, err := sign(caTmpl, nil, caKey, caKey, now)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, caFile), pemBlock("CERTIFICATE", caDER), 0o600); err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	leaves := []struct {
		file string
		tmpl *x509.Certificate
	}{
		{serverFile, &x509.Certificate{
			Subject:     pkix.Name{CommonName: "bench server"},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
			DNSNames:    []string{"localhost"},
		}},
		{clientFile, &x509.Certificate{
			Subject:     pkix.Name{CommonName: "bench client"},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}},
	}
	for _, l := range leaves {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return fmt.Errorf("certs: %w", err)
		}
		l.tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, _, err := sign(l.tmpl, caCert, caKey, key, now)
		if err != nil {
			return err
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return fmt.Errorf("certs: %w", err)
		}
		data := append(pemBlock("CERTIFICATE", der), pemBlock("PRIVATE KEY", keyDER)...)
		if err := os.WriteFile(filepath.Join(dir, l.file), data, 0o600); err != nil {
			return fmt.Errorf("certs: %w", err)
		}
	}
	return nil
}

// sign makes tmpl a certificate of key's public key, signed by parent's
// signer (self-signed when parent is nil), valid from an hour before now.
func sign(tmpl, parent *x509.Certificate, signer, key *ecdsa.PrivateKey, now time.Time) ([]byte, *x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %w", err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(validity)
	if parent == nil {
		parent = tmpl
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %s: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %w", err)
	}
	return der, cert, nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// Set is a loaded set of certificates. Its configs are new on every call,
// so callers may change them; a Set is read-only and safe to share.
type Set struct {
	roots          *x509.CertPool
	server, client tls.Certificate
}

// Load reads the set that Generate wrote to dir.
func Load(dir string) (*Set, error) {
	if dir == "" {
		return nil, errors.New("certs: no directory (bench run generates one and passes it with -certs)")
	}
	ca, err := os.ReadFile(filepath.Join(dir, caFile))
	if err != nil {
		return nil, fmt.Errorf("certs: %w", err)
	}
	s := &Set{roots: x509.NewCertPool()}
	if !s.roots.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("certs: no certificate in %s", filepath.Join(dir, caFile))
	}
	for _, l := range []struct {
		file string
		dst  *tls.Certificate
	}{{serverFile, &s.server}, {clientFile, &s.client}} {
		path := filepath.Join(dir, l.file)
		if *l.dst, err = tls.LoadX509KeyPair(path, path); err != nil {
			return nil, fmt.Errorf("certs: %w", err)
		}
	}
	return s, nil
}

// Server returns the server's config: its certificate, client
// certificates of the set's CA required, TLS 1.3.
func (s *Set) Server() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{s.server},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    s.roots,
		MinVersion:   tls.VersionTLS13,
	}
}

// Client returns the client's config: its certificate, servers verified
// against the set's CA (the server name is the address's host), TLS 1.3.
func (s *Set) Client() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{s.client},
		RootCAs:      s.roots,
		MinVersion:   tls.VersionTLS13,
	}
}

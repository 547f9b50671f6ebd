package certs

import (
	"crypto/tls"
	"net"
	"strings"
	"testing"
)

// handshake runs a TLS handshake between the two configs over a pipe and
// returns the server's view of it, or the first error.
func handshake(t *testing.T, server, client *tls.Config) (tls.ConnectionState, error) {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if client.ServerName == "" {
		client.ServerName = "127.0.0.1"
	}
	srv, cli := tls.Server(a, server), tls.Client(b, client)
	done := make(chan error, 1)
	go func() {
		err := cli.Handshake()
		if err == nil {
			// TLS 1.3: the server's verdict on the client certificate
			// arrives after the client's handshake; read it.
			_, err = cli.Read(make([]byte, 1))
		}
		done <- err
	}()
	err := srv.Handshake()
	if err == nil {
		_, err = srv.Write([]byte{1})
	}
	if err != nil {
		a.Close()
		<-done
		return tls.ConnectionState{}, err
	}
	if err := <-done; err != nil {
		return tls.ConnectionState{}, err
	}
	return srv.ConnectionState(), nil
}

// A generated set gives mutual TLS 1.3: the server verifies the client's
// certificate and the client the server's, for 127.0.0.1.
func TestGenerateLoad(t *testing.T) {
	dir := t.TempDir()
	if err := Generate(dir); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := handshake(t, s.Server(), s.Client())
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != tls.VersionTLS13 {
		t.Errorf("version %#x, want TLS 1.3", st.Version)
	}
	if len(st.VerifiedChains) == 0 || st.VerifiedChains[0][0].Subject.CommonName != "bench client" {
		t.Errorf("the server did not verify the client certificate: %+v", st.VerifiedChains)
	}
	t.Logf("cipher suite: %s", tls.CipherSuiteName(st.CipherSuite))

	// Without its certificate the client is refused; another set's CA is
	// not trusted.
	noCert := s.Client()
	noCert.Certificates = nil
	if _, err := handshake(t, s.Server(), noCert); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("client without a certificate: %v, want a refusal", err)
	}
	other := t.TempDir()
	if err := Generate(other); err != nil {
		t.Fatal(err)
	}
	o, err := Load(other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := handshake(t, s.Server(), o.Client()); err == nil {
		t.Error("a client of another set's CA was accepted")
	}
}

func TestLoadErrors(t *testing.T) {
	for _, dir := range []string{"", t.TempDir()} {
		if _, err := Load(dir); err == nil {
			t.Errorf("Load(%q) succeeded", dir)
		}
	}
}
